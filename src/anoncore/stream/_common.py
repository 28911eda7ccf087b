"""Pieces shared by the stream algorithms (CASTLE, SABRE_W): batch encoding checks and the published table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore.data.hierarchy import Hierarchy

if TYPE_CHECKING:
    from anoncore.data.schema import Schema
    from anoncore.data.table import Table


def ro(a: NDArray[Any]) -> NDArray[Any]:
    """``a`` made read-only (release arrays are immutable)."""
    a.setflags(write=False)
    return a


def number_label(x: float) -> str:
    """``20`` for integral floats, else the float's repr (bounds of published numeric intervals)."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def value_label(v: Any) -> str:
    """The hierarchy label a batch value is looked up under (integral floats read from CSV lose their '.0')."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def numeric_domain(a: Any, table: Any = None) -> tuple[float, float]:
    """The domain (L, U) of a numeric stream quasi-identifier: declared, else its hierarchy's leaves, else the
    template table's; a stream cannot learn it from data it has not seen yet."""
    if a.domain is not None:
        return (float(a.domain[0]), float(a.domain[1]))
    if a.hierarchy is not None:
        leaves = [float(x) for x in a.hierarchy.leaves]
        return (min(leaves), max(leaves))
    if table is not None:
        d = table.domain(a.name)
        return (float(d[0]), float(d[1]))
    raise ValueError(f"Numeric quasi-identifier {a.name!r} needs a declared domain (L, U) for a stream: "
                     f"Attribute(..., domain=(L, U)), or pass a Table template.")


@dataclass(frozen=True)
class StreamQIs:
    """The stream-independent part of a schema, resolved once: the template table (if given), the QIs split by
    kind with their hierarchies and numeric domains, the person id and time columns, the passthrough columns."""

    table: Table | None
    schema: Schema
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]
    numeric_hierarchies: tuple[Hierarchy | None, ...]
    dom_lo: NDArray[np.float64]
    dom_hi: NDArray[np.float64]
    pid: str
    time: str | None
    passthrough: tuple[str, ...]


def resolve_stream_schema(schema: Any, caller: str) -> StreamQIs:
    """Check a stream's Schema (or Table template) and resolve its QIs; errors name `caller` and the column."""
    from anoncore.data.schema import Schema
    from anoncore.data.table import Table

    table = None
    if isinstance(schema, Table):
        table, schema = schema, schema.schema
    if not isinstance(schema, Schema):
        raise TypeError(f"The 'schema' parameter of {caller} must be a Schema or a Table. "
                        f"Got {type(schema).__name__} instead.")
    pids = schema.with_role("pid")
    if not pids:
        raise ValueError(f"{caller} needs a person id: declare one attribute with role='pid' (k_s-anonymity "
                         f"counts distinct persons, not tuples).")
    times = schema.with_role("time")
    qis = schema.quasi_identifiers
    if not qis:
        raise ValueError(f"{caller} needs at least one quasi-identifier in the schema.")
    numeric, categorical, hs, nh, lo, hi = [], [], [], [], [], []
    for name in qis:
        a = schema[name]
        if a.kind == "numeric":
            d = numeric_domain(a, table)
            numeric.append(name)
            nh.append(a.hierarchy)
            lo.append(float(d[0]))
            hi.append(float(d[1]))
        else:
            if a.hierarchy is None:
                raise ValueError(f"Categorical quasi-identifier {name!r} needs a hierarchy for a stream (its "
                                 f"values are not known in advance); pass one or a Table template.")
            categorical.append(name)
            hs.append(a.hierarchy)
    passthrough = tuple(n for n in schema.names if schema[n].role in ("sensitive", "insensitive"))
    return StreamQIs(table, schema, tuple(numeric), tuple(categorical), tuple(hs), tuple(nh),
                     np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64), pids[0],
                     times[0] if times else None, passthrough)


def encode_numeric(df: pd.DataFrame, names: Sequence[str], lo: NDArray[np.float64],
                   hi: NDArray[np.float64]) -> NDArray[np.float64]:
    """The numeric quasi-identifiers of a batch, refusing non-numbers and values outside the declared domain."""
    num = np.empty((len(df), len(names)), dtype=np.float64)
    for j, name in enumerate(names):
        v = pd.to_numeric(df[name], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(v)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"Column {name!r} is numeric but holds {df[name].iloc[i]!r} (batch row {i}).")
        out = (v < lo[j]) | (v > hi[j])
        if out.any():
            i = int(np.flatnonzero(out)[0])
            raise ValueError(f"Value {float(v[i])!r} of column {name!r} (batch row {i}) lies outside its declared "
                             f"domain [{float(lo[j])!r}, {float(hi[j])!r}].")
        num[:, j] = v
    return num


def encode_batch_qis(df: pd.DataFrame, spec: Any, caller: str) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    """Check that a batch has every column the stream spec needs (QIs, person id, time, passthrough) and encode
    its QIs: numeric values scaled to the declared domains, categorical labels as hierarchy leaf codes. `spec`
    has the fields of :class:`StreamQIs`; errors name `caller`, the column and the row."""
    need = [*spec.numeric, *spec.categorical, spec.pid, *([spec.time] if spec.time else []), *spec.passthrough]
    missing = [x for x in need if x not in df.columns]
    if missing:
        raise ValueError(f"The batch lacks column(s) {missing}; {caller} needs {need}.")
    num = encode_numeric(df, spec.numeric, spec.dom_lo, spec.dom_hi)
    cat = np.empty((len(df), len(spec.categorical)), dtype=np.int32)
    for j, (name, h) in enumerate(zip(spec.categorical, spec.hierarchies)):
        cat[:, j] = map_labels(df[name], h.leaf_lookup(), name, f"its hierarchy {h.name!r}")
    return num, cat


def batch_positions(df: pd.DataFrame, time: str | None, last: int | None) -> NDArray[np.int64]:
    """Stream positions of a batch: the integer `time` column, or consecutive positions after `last`. They must
    be strictly increasing across the whole stream; the error names the first offending batch row."""
    n = len(df)
    if time is not None:
        t = df[time].to_numpy()
        if not np.issubdtype(t.dtype, np.integer):
            raise ValueError(f"Positions in column {time!r} must be integers. Got dtype {t.dtype}.")
        pos: NDArray[np.int64] = t.astype(np.int64)
    else:
        start = (last if last is not None else 0) + 1
        pos = np.arange(start, start + n, dtype=np.int64)
    if n:
        back = np.flatnonzero(np.diff(pos) <= 0)
        if last is not None and pos[0] <= last:
            i = 0
        elif back.size:
            i = int(back[0]) + 1
        else:
            return pos
        raise ValueError(f"Positions must be strictly increasing across the stream (out-of-order position "
                         f"{int(pos[i])} at batch row {i}; last accepted {last}).")
    return pos


def _map_arrow_strings(col: pd.Series, lookup: Mapping[str, int]) -> NDArray[np.int32] | None:
    """Fast path of :func:`map_labels` for Arrow-backed string columns whose every value is a label as it is:
    one hash lookup per row in Arrow. None when the column is not such a column or some value is not a label
    as it is (missing, unknown, or only after stripping): the general path then decides (and names the row)."""
    arr = getattr(col.array, "_pa_array", None)
    if arr is None or not len(lookup):
        return None
    try:
        import pyarrow as pa
        import pyarrow.compute as pc

        if not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
            return None
        idx = pc.index_in(arr, value_set=pa.array(list(lookup.keys()), type=arr.type))
    except Exception:  # noqa: BLE001 - any Arrow difference: the general path
        return None
    if idx.null_count:
        return None
    codes = np.fromiter(lookup.values(), dtype=np.int32, count=len(lookup))
    out: NDArray[np.int32] = codes[idx.to_numpy()]
    return out


def map_labels(col: pd.Series, lookup: Mapping[str, int], name: str, where: str) -> NDArray[np.int32]:
    """Codes of a categorical batch column; an unknown value or a missing one is refused, naming the row."""
    fast = _map_arrow_strings(col, lookup)
    if fast is not None:
        return fast
    codes, uniq = pd.factorize(col, use_na_sentinel=True)
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(f"Column {name!r} has a missing value at batch row {i}.")
    mapped = np.empty(len(uniq), dtype=np.int32)
    for u, val in enumerate(uniq):
        lab = value_label(val)
        code = lookup.get(lab, lookup.get(lab.strip()))
        if code is None:
            i = int(np.flatnonzero(codes == u)[0])
            raise ValueError(f"Value {lab!r} of column {name!r} (batch row {i}) is missing from {where} (unknown "
                             f"categorical value mid-stream; the batch was not consumed).")
        mapped[u] = code
    return mapped[codes] if len(codes) else np.empty(0, np.int32)


def published_frame(position: NDArray[np.int64], suppressed: NDArray[np.bool_], num_lo: NDArray[np.float64],
                    num_hi: NDArray[np.float64], cat_node: NDArray[np.int32], columns: Mapping[str, NDArray[Any]],
                    ec: NDArray[np.int64], numeric_qi: Sequence[str], categorical_qi: Sequence[str],
                    hierarchies: Sequence[Hierarchy], include_suppressed: bool, ranges: bool,
                    suppressed_token: str) -> pd.DataFrame:
    """The published tuples of a release: ``position``, quasi-identifiers, published columns, ``ec``."""
    keep = np.ones(len(position), dtype=bool) if include_suppressed else ~suppressed
    out: dict[str, Any] = {"position": position[keep]}
    sup = suppressed[keep]
    for j, name in enumerate(numeric_qi):
        lo, hi = num_lo[keep, j], num_hi[keep, j]
        if ranges:
            out[f"{name}_lo"], out[f"{name}_hi"] = lo, hi
        else:
            out[name] = np.array([suppressed_token if s else (number_label(a) if a == b else
                                                              f"[{number_label(a)}, {number_label(b)}]")
                                  for a, b, s in zip(lo, hi, sup)], dtype=object)
    for j, name in enumerate(categorical_qi):
        labels = np.asarray(hierarchies[j].labels + (suppressed_token,), dtype=object)
        node = cat_node[keep, j]
        out[name] = labels[np.where(node < 0, len(labels) - 1, node)]
    for name, col in columns.items():
        out[name] = col[keep]
    out["ec"] = ec[keep]
    if include_suppressed:
        out["suppressed"] = sup
    return pd.DataFrame(out)


class ReleaseRows:
    """Mixin of the stream release dataclasses (:class:`~anoncore.stream.CastleRelease`,
    :class:`~anoncore.stream.SabreWRelease`): row counts and the published table."""

    __slots__ = ()
    #: Name of the field holding the generalization / class id of each row.
    _id_field: ClassVar[str]
    position: NDArray[np.int64]
    suppressed: NDArray[np.bool_]
    num_lo: NDArray[np.float64]
    num_hi: NDArray[np.float64]
    cat_node: NDArray[np.int32]
    columns: dict[str, NDArray[Any]]
    numeric_qi: tuple[str, ...]
    categorical_qi: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]

    def __len__(self) -> int:
        return int(self.position.shape[0])

    @property
    def n_released(self) -> int:
        return int((~self.suppressed).sum())

    @property
    def n_suppressed(self) -> int:
        return int(self.suppressed.sum())

    def to_pandas(self, include_suppressed: bool = False, ranges: bool = False,
                  suppressed_token: str = "*") -> pd.DataFrame:
        """The published tuples as a DataFrame: ``position`` first, then the quasi-identifiers, the columns
        published as they are, and ``ec`` (the generalization / class id).

        Parameters
        ----------
        include_suppressed : bool, default=False
            Also list suppressed tuples (their quasi-identifiers show ``suppressed_token``).
        ranges : bool, default=False
            Numeric quasi-identifiers as two float columns ``<name>_lo`` / ``<name>_hi`` instead of labels
            such as ``"[20, 60]"``.
        suppressed_token : str, default='*'
        """
        return published_frame(self.position, self.suppressed, self.num_lo, self.num_hi, self.cat_node, self.columns,
                               getattr(self, self._id_field), self.numeric_qi, self.categorical_qi, self.hierarchies,
                               include_suppressed, ranges, suppressed_token)
