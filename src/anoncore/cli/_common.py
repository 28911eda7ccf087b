"""Pieces shared by the ``anoncore`` commands: model specifications, argument converters, the JSON document
and the text report.

Every command takes ``--json`` and then prints exactly one JSON document on stdout, whose layout is
documented (and versioned by :data:`SCHEMA_VERSION`) in ``docs/cli.md``. Without ``--json`` the output is a
readable report. Progress is drawn on stderr only when stderr is a terminal.

Exit codes: 0 success (for ``audit``: every model passed), 1 an audited model failed or the work could not
be done, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

SCHEMA_VERSION = "1"
MAX_LISTED_VIOLATIONS = 100

__all__ = ["MODEL_SPECS", "SCHEMA_VERSION", "ModelSpec", "UsageError", "add_force_argument", "atomic_output",
           "check_output", "models_help", "parse_model_spec", "write_csv"]


class UsageError(Exception):
    """Bad arguments detected after parsing (exit code 2)."""


# ---------------------------------------------------------------------------------------------------------
# model specifications: NAME=VALUE[,VALUE][@COLUMN]


def _pos_int(name: str) -> Callable[[str], int]:
    def conv(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise ValueError(f"{name} must be an int. Got {s!r}.") from None
        if v < 1:
            raise ValueError(f"{name} must be an int in the range [1, inf). Got {v}.")
        return v
    return conv


def _float(name: str, lo: float, hi: float, lo_open: bool = False) -> Callable[[str], float]:
    def conv(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise ValueError(f"{name} must be a number. Got {s!r}.") from None
        ok = (v > lo if lo_open else v >= lo) and v <= hi and math.isfinite(v)
        if not ok:
            rng = f"{'(' if lo_open else '['}{lo:g}, {'inf)' if math.isinf(hi) else f'{hi:g}]'}"
            raise ValueError(f"{name} must be a number in the range {rng}. Got {s}.")
        return v
    return conv


_KMAP_SPEC = ("KMap", ("k", "population_size"), (_pos_int("k"), _float("population_size", 1.0, math.inf)), False)

#: spec name -> (class name in anoncore.models, parameter names, converters, takes a sensitive attribute)
MODEL_SPECS: dict[str, tuple[str, tuple[str, ...], tuple[Callable[[str], Any], ...], bool]] = {
    "k": ("KAnonymity", ("k",), (_pos_int("k"),), False),
    "l-distinct": ("DistinctLDiversity", ("l",), (_pos_int("l"),), True),
    "l-entropy": ("EntropyLDiversity", ("l",), (_float("l", 1.0, math.inf),), True),
    "l-recursive": ("RecursiveCLDiversity", ("c", "l"), (_float("c", 0.0, math.inf, True), _pos_int("l")), True),
    "t-equal": ("EqualDistanceTCloseness", ("t",), (_float("t", 0.0, 1.0, True),), True),
    "t-ordered": ("OrderedDistanceTCloseness", ("t",), (_float("t", 0.0, 1.0, True),), True),
    "t-hierarchical": ("HierarchicalDistanceTCloseness", ("t",), (_float("t", 0.0, 1.0, True),), True),
    "t-hellinger": ("HellingerTCloseness", ("t",), (_float("t", 0.0, 1.0, True),), True),
    "beta-basic": ("BasicBetaLikeness", ("beta",), (_float("beta", 0.0, math.inf, True),), True),
    "beta-enhanced": ("EnhancedBetaLikeness", ("beta",), (_float("beta", 0.0, math.inf, True),), True),
    "beta-semantic": ("SemanticBetaLikeness", ("beta",), (_float("beta", 0.0, math.inf, True),), True),
    "beta-range": ("RangeBetaLikeness", ("beta", "epsilon"),
                   (_float("beta", 0.0, math.inf, True), _float("epsilon", 0.0, math.inf)), True),
    "delta": ("DeltaDisclosure", ("delta",), (_float("delta", 0.0, math.inf, True),), True),
    # ARX's readings (docs/arx-differences.md): string order of the values, absent values not checked
    "t-ordered-arx": ("OrderedDistanceTCloseness", ("t",), (_float("t", 0.0, 1.0, True),), True),
    "delta-arx": ("DeltaDisclosure", ("delta",), (_float("delta", 0.0, math.inf, True),), True),
    # risk-based (anoncore.risk; audit only)
    "avg-risk": ("AverageReidentificationRisk", ("risk",), (_float("risk", 0.0, 1.0, True),), False),
    "sample-uniqueness": ("SampleUniqueness", ("uniqueness",), (_float("uniqueness", 0.0, 1.0),), False),
    "population-uniqueness": ("PopulationUniqueness", ("uniqueness", "population_size"),
                              (_float("uniqueness", 0.0, 1.0), _float("population_size", 1.0, math.inf)), False),
    "kmap": _KMAP_SPEC,
    # ARX's estimated k-map: k-anonymity with the k derived from a Poisson / zero-truncated Poisson model
    "kmap-poisson": _KMAP_SPEC,
    "kmap-ztp": _KMAP_SPEC,
}


#: spec name -> the model's keyword arguments that the spec name fixes (ARX's readings)
SPEC_OPTIONS: dict[str, dict[str, str]] = {"t-ordered-arx": {"order": "string"}, "delta-arx": {"absent": "ignore"},
                                           "kmap-poisson": {"estimator": "poisson"},
                                           "kmap-ztp": {"estimator": "zero_truncated_poisson"}}


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed ``--model`` argument.

    Examples
    --------
    >>> s = parse_model_spec("l-recursive=4,3@disease")
    >>> s.class_name, s.params, s.sensitive
    ('RecursiveCLDiversity', (4.0, 3), 'disease')
    """

    text: str
    name: str
    class_name: str
    params: tuple[Any, ...]
    sensitive: str | None = None

    def build(self) -> Any:
        """The model object of :mod:`anoncore.models`."""
        try:
            from anoncore import models  # type: ignore[attr-defined,unused-ignore]
        except ImportError:
            raise RuntimeError("this build of anoncore has no privacy models (anoncore.models is missing).") from None
        cls = getattr(models, self.class_name)
        kwargs: dict[str, Any] = {"sensitive": self.sensitive} if self.sensitive is not None else {}
        names = MODEL_SPECS[self.name][1]  # (by name: KMap's population_size is not its second field)
        return cls(**dict(zip(names, self.params)), **kwargs, **SPEC_OPTIONS.get(self.name, {}))

    def to_dict(self) -> dict[str, Any]:
        names = MODEL_SPECS[self.name][1]
        return {"spec": self.text, "model": self.class_name,
                "parameters": dict(zip(names, self.params)) | SPEC_OPTIONS.get(self.name, {}),
                "sensitive": self.sensitive}


def parse_model_spec(text: str) -> ModelSpec:
    """Parse ``NAME=VALUE[,VALUE][@COLUMN]`` (see :data:`MODEL_SPECS` for the names).

    Raises
    ------
    ValueError
        With a message naming what is wrong.

    Examples
    --------
    >>> parse_model_spec("k=5")
    ModelSpec(text='k=5', name='k', class_name='KAnonymity', params=(5,), sensitive=None)
    >>> parse_model_spec("t-hierarchical=0.2@occupation").class_name
    'HierarchicalDistanceTCloseness'
    >>> parse_model_spec("t-ordered-arx=0.2@occupation").build().order
    'string'
    """
    if not isinstance(text, str):
        raise TypeError(f"A model spec must be a str. Got {type(text).__name__} instead.")
    known = ", ".join(MODEL_SPECS)
    if "=" not in text:
        raise ValueError(f"model spec {text!r} must look like NAME=VALUE[@COLUMN], e.g. k=5 or t-ordered=0.2@salary "
                         f"(names: {known}).")
    name, _, rest = text.partition("=")
    name = name.strip().lower()
    if name not in MODEL_SPECS:
        raise ValueError(f"unknown model {name!r} in {text!r}; known models: {known}.")
    value, at, column = rest.partition("@")
    class_name, pnames, convs, takes_sa = MODEL_SPECS[name]
    if at:
        column = column.strip()
        if not column:
            raise ValueError(f"model spec {text!r}: the column after '@' is empty.")
        if not takes_sa:
            raise ValueError(f"model spec {text!r}: {name} does not use a sensitive attribute, so '@{column}' is "
                             f"not allowed.")
    parts = [p.strip() for p in value.split(",")] if value.strip() else []
    if len(parts) != len(pnames):
        want = ",".join(pnames)
        raise ValueError(f"model spec {text!r}: {name} takes {len(pnames)} value(s) ({want}), got {len(parts)}.")
    try:
        params = tuple(conv(p) for conv, p in zip(convs, parts))
    except ValueError as exc:
        raise ValueError(f"model spec {text!r}: {exc}") from None
    return ModelSpec(text, name, class_name, params, column if at else None)


def _model_arg(text: str) -> ModelSpec:
    try:
        return parse_model_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _levels_arg(text: str) -> tuple[int, ...]:
    try:
        lv = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"levels must be comma-separated ints such as 1,0,2. Got {text!r}.") from None
    if any(x < 0 for x in lv):
        raise argparse.ArgumentTypeError(f"levels must be non-negative. Got {text!r}.")
    return lv


def _arg_from(conv: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type from a converter such as :func:`_float` (ValueError -> argparse error)."""
    def parse(text: str) -> Any:
        try:
            return conv(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def _positive_int_arg(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int. Got {text!r}.") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an int >= 1. Got {v}.")
    return v


def _sep_arg(text: str) -> str:
    """``--sep``: one character; ``tab`` or ``\\t`` mean a tab."""
    sep = {"tab": "\t", "\\t": "\t", "TAB": "\t"}.get(text, text)
    if len(sep) != 1 or sep in "\"\r\n":
        raise argparse.ArgumentTypeError(f"the separator must be one character (',', ';', 'tab', ...). Got {text!r}.")
    return sep


def add_input_arguments(p: Any) -> None:
    """``--sep`` and ``--encoding`` of the commands that read a CSV table."""
    p.add_argument("--sep", type=_sep_arg, default=None,
                   help="field separator of DATA: one character, 'tab' for a tab (default: the schema's 'sep', else "
                        "',' or ';' detected from the header)")
    p.add_argument("--encoding", default="utf-8", help="text encoding of DATA (default utf-8; e.g. latin-1)")


def read_table(path: str, schema: Any, args: Any, notes: list[str], expected: Sequence[str] = ()) -> Any:
    """Read ``path`` (``-``: stdin) with ``schema``; notes name the columns the schema leaves out."""
    import sys

    from anoncore.data.table import Table, csv_columns

    if path == "-":
        fd, tmp = tempfile.mkstemp(suffix=".csv")
        try:
            with os.fdopen(fd, "w", encoding=args.encoding, newline="") as fh:
                fh.write(sys.stdin.read())
            return read_table(tmp, schema, args, notes, expected)
        finally:
            os.remove(tmp)
    table = Table.from_csv(path, schema, sep=args.sep, encoding=args.encoding, n_threads=getattr(args, "threads", None))
    cols = csv_columns(path, args.sep or schema.sep, args.encoding)
    left = [c for c in cols if c not in schema.names and c not in expected]
    if left:
        notes.append(f"column(s) {left} of the data are not in the schema and were left out of the output")
    return table


def _nonneg_int_arg(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int. Got {text!r}.") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an int >= 0. Got {v}.")
    return v


# ---------------------------------------------------------------------------------------------------------
# JSON document


def _version() -> str:
    try:
        import anoncore

        return str(anoncore.__version__)
    except Exception:  # noqa: BLE001  # pragma: no cover
        return "unknown"


def _jsonable(x: Any) -> Any:
    """Plain-Python, strict-JSON version of ``x`` (NaN -> None, +-inf -> 'inf'/'-inf')."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        f = float(x)
        if math.isnan(f):
            return None
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if x is None or isinstance(x, str):
        return x
    return str(x)


def _document(command: str, parameters: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"anoncore_version": _version(), "schema_version": SCHEMA_VERSION, "command": command,
            "parameters": _jsonable(parameters), "result": _jsonable(result)}


# ---------------------------------------------------------------------------------------------------------
# shared pieces of the commands


def _table_summary(table: Any) -> dict[str, Any]:
    cols = []
    for a in table.attributes:
        h = a.hierarchy
        cols.append({"name": a.name, "role": a.role, "kind": a.kind, "cardinality": table.cardinality(a.name),
                     "hierarchy_height": None if h is None else h.height})
    return {"n_rows": table.n_rows, "n_dropped_rows": int(table.dropped_rows.size),
            "quasi_identifiers": list(table.quasi_identifiers), "sensitive": list(table.sensitive), "columns": cols}


def _counts(table: Any, partition: Any) -> dict[str, Any]:
    sizes = partition.class_sizes
    published = sizes[sizes > 0]
    return {
        "n_input_rows": table.n_rows + int(table.dropped_rows.size),
        "n_rows": table.n_rows,
        "n_dropped_rows": int(table.dropped_rows.size),
        "n_classes": partition.n_classes,
        "n_published_classes": int(published.size),
        "n_suppressed_rows": partition.n_suppressed,
        "min_class_size": int(published.min()) if published.size else 0,
        "max_class_size": int(published.max()) if published.size else 0,
        "mean_class_size": float(published.mean()) if published.size else 0.0,
    }


def _run_audit(table: Any, partition: Any, specs: Sequence[ModelSpec], notes: list[str],
               timings: dict[str, float], report: Any = None) -> dict[str, Any] | None:
    """Audit report dict, or None (with a note) when this build has no audit.

    ``report``: the algorithm's own audit of this partition (``Result.audit``, from the static finisher);
    when it covers every model of ``specs``, its entries are used and the partition is not audited again.
    """
    if not specs:
        return None
    try:
        from anoncore.audit import audit
    except ImportError:
        notes.append("audit skipped: this build of anoncore has no anoncore.audit module")
        return None
    try:
        models = [s.build() for s in specs]
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    t0 = time.perf_counter()
    reused = _reuse_report(report, models)
    if reused is not None:
        report = reused
        timings["audit"] = float(report.stats.get("total_s", 0.0))
    else:
        try:
            report = audit(table, partition, models)
        except (ValueError, TypeError) as exc:  # e.g. a model names a column that is not sensitive
            raise UsageError(str(exc)) from None
        timings["audit"] = time.perf_counter() - t0
    d = report.to_dict()
    for m, s in zip(d.get("models", []), specs):
        m["spec"] = s.text
        viol = m.get("violating")
        if isinstance(viol, list) and len(viol) > MAX_LISTED_VIOLATIONS:
            m["violating"] = viol[:MAX_LISTED_VIOLATIONS]
            m["violating_truncated"] = True
    return dict(d)


def _reuse_report(report: Any, models: Sequence[Any]) -> Any:
    """``report`` narrowed to ``models`` (in their order) when it audited each of them, else None."""
    if report is None or not hasattr(report, "models"):
        return None
    picked = []
    for m in models:
        hit = next((ma for ma in report.models if ma.model == m), None)
        if hit is None:
            return None
        picked.append(hit)
    import dataclasses

    return dataclasses.replace(report, models=tuple(picked))


def _run_metrics(table: Any, partition: Any, notes: list[str], timings: dict[str, float]) -> dict[str, Any] | None:
    try:
        from anoncore.metrics import information_loss
    except ImportError:
        notes.append("metrics skipped: this build of anoncore has no anoncore.metrics module")
        return None
    t0 = time.perf_counter()
    m = information_loss(table, partition)
    timings["metrics"] = time.perf_counter() - t0
    return dict(m)


def _guarantees(counts: dict[str, Any], audit_dict: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"k": counts["min_class_size"]}
    if audit_dict is None:
        out.update({"audited": False, "passed": None, "models": []})
    else:
        out.update({"audited": True, "passed": bool(audit_dict["passed"]), "models": audit_dict["models"],
                    "n_checked_classes": audit_dict.get("n_checked_classes"),
                    "reference": audit_dict.get("reference")})
    return out


def _fmt_num(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    if isinstance(x, tuple):
        return "(" + ", ".join(_fmt_num(v) for v in x) + ")"
    return str(x)


def _print_text(out: TextIO, title: str, table: Any, counts: dict[str, Any], partition_info: dict[str, Any],
                audit_dict: dict[str, Any] | None, report_text: str | None, metrics: dict[str, Any] | None,
                timings: dict[str, float], notes: list[str], head: Any = None, show_hierarchies: bool = False) -> None:
    w = out.write
    w(f"{title}\n\n")
    w(f"Table: {table.n_rows:,} rows ({counts['n_dropped_rows']:,} dropped for missing values)\n")
    w(f"  {'column':<28}{'role':<18}{'kind':<13}{'values':>8}{'height':>8}\n")
    for c in _table_summary(table)["columns"]:
        hh = "" if c["hierarchy_height"] is None else str(c["hierarchy_height"])
        w(f"  {c['name']:<28}{c['role']:<18}{c['kind']:<13}{c['cardinality']:>8}{hh:>8}\n")
    if show_hierarchies:
        w("\nGeneralization hierarchies (one value, leaf to root; levels are counted from the leaf = 0):\n")
        for q in table.quasi_identifiers:
            h = table.hierarchy(q)
            if h is not None:
                w(f"  {q:<16}{' -> '.join(h.to_rows()[0])}\n")
    w("\nPartition: ")
    if partition_info.get("source") == "algorithm":
        w(f"computed by {partition_info['algorithm']}")
        w("" if partition_info.get("levels") is None else f", full-domain levels {list(partition_info['levels'])}")
        w("\n")
    elif partition_info.get("levels") is not None:
        w(f"full-domain generalization, levels {list(partition_info['levels'])}\n")
    else:
        w(f"class labels from {partition_info.get('labels')}\n")
    w(f"  {counts['n_classes']:,} classes ({counts['n_published_classes']:,} published), "
      f"{counts['n_suppressed_rows']:,} suppressed rows, class sizes {counts['min_class_size']}.."
      f"{counts['max_class_size']} (mean {counts['mean_class_size']:.1f}) -> k-anonymity achieved: "
      f"k = {counts['min_class_size']}\n")
    if head is not None:
        w("\nPublished table (first rows):\n")
        w(head.to_string(index=False) + "\n")
    if report_text is not None:
        w(f"\n{report_text}\n")
    if metrics is not None:
        w("\nInformation loss:\n")
        for k, v in metrics.items():
            w(f"  {k:<22}{_fmt_num(v)}\n")
    w("\nTimings: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in timings.items()) + "\n")
    for n in notes:
        w(f"Note: {n}\n")


def _published_head(partition: Any, n: int) -> Any:
    """The first ``n`` rows of ``partition.to_pandas()``, without building the whole published table."""
    import pandas as pd

    t = partition.table
    n = min(n, t.n_rows)
    lab = partition.labels[:n]
    sup = partition.suppressed[:n]
    out: dict[str, Any] = {}
    for c in t.columns:
        if c in t.quasi_identifiers:
            col = partition.class_labels(c)[lab].copy()
            col[sup] = "*"
            out[c] = col
        else:
            out[c] = t.decode(c, t.column(c)[:n])
    out["ec"] = lab
    return pd.DataFrame(out)


def _readable(df: Any) -> Any:
    """Show integral float columns (decoded numeric attributes) as ints."""
    for c in df.columns:
        col = df[c]
        if col.dtype.kind == "f" and len(col) and bool(np.all(np.isfinite(col))) and bool(np.all(col == np.round(col))):
            df[c] = col.astype(np.int64)
    return df


def _report_text(audit_dict: dict[str, Any] | None) -> str | None:
    if audit_dict is None:
        return None
    head = (f"Audit ({audit_dict['n_checked_classes']} classes checked, reference {audit_dict['reference']}): "
            f"{'PASSED' if audit_dict['passed'] else 'FAILED'}")
    lines = [head]
    width = max([23] + [len(str(m["spec"])) for m in audit_dict["models"]]) + 1  # (a long spec keeps a space)
    for m in audit_dict["models"]:
        verdict = "passed" if m["passed"] else f"FAILED ({m['n_violating']} violating classes)"
        sa = f" on {m['sensitive_attribute']}" if m.get("sensitive_attribute") else ""
        lines.append(f"  {m['spec']:<{width}}{verdict}{sa}; achieved {m['parameter']} = {_fmt_num(m['achieved'])}")
    return "\n".join(lines)


def models_help() -> str:
    """The ``--model`` help text: the grammar and every model name with its parameters."""
    return ("privacy model to check, repeatable: NAME=VALUE[@SENSITIVE_COLUMN] with NAME one of "
            + ", ".join(f"{k} ({','.join(v[1])})" for k, v in MODEL_SPECS.items()))


# ---------------------------------------------------------------------------------------------------------
# output files: never over an input, never over an existing file without --force, never half written


def add_force_argument(p: Any) -> None:
    """The ``--force`` option of every command that writes a file."""
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing output file (an output that is one of the inputs is always refused)")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output(path: str | None, inputs: Sequence[str | None], *, force: bool, option: str = "-o/--output",
                 allow_existing: bool = False) -> None:
    """Refuse to write ``path`` over one of ``inputs`` (same resolved path or same inode), over an existing file
    without ``force`` (unless ``allow_existing``, e.g. a resumed stream), or into a folder that does not exist.

    Called before any work starts; ``None`` and ``'-'`` (stdout) are always accepted.

    Raises
    ------
    UsageError
        Naming the option and the file.
    """
    if path is None or path == "-":
        return
    for src in inputs:
        if src is None or src == "-":
            continue
        if os.path.exists(path) and os.path.exists(src) and _same_file(path, src):
            raise UsageError(f"{option} {path!r} is the input file {src!r}: refusing to overwrite an input "
                             f"(write to another file).")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"the folder of {option} {path!r} does not exist.")
    if os.path.isdir(path):
        raise UsageError(f"{option} {path!r} is a folder, not a file.")
    if os.path.exists(path) and not force and not allow_existing:
        raise UsageError(f"{option} {path!r} already exists; pass --force to overwrite it.")


@contextlib.contextmanager
def atomic_output(path: str, mode: str = "w", encoding: str | None = "utf-8",
                  newline: str | None = "") -> Iterator[Any]:
    """Open a temporary file next to ``path`` for writing; rename it to ``path`` once the block completes.

    If the block raises (an error, Ctrl-C), the temporary file is removed and ``path`` is left as it was, so a
    file at ``path`` is always complete. The rename is atomic on one file system (``os.replace``).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "out.csv")
    >>> with atomic_output(p) as fh:
    ...     _ = fh.write("a,b\\n")
    >>> open(p).read()
    'a,b\\n'
    """
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".part", dir=folder)
    try:
        if "b" in mode:
            fh = os.fdopen(fd, mode)
        else:
            fh = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        try:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes 0600 files; give the usual permissions
        except OSError:  # pragma: no cover
            pass
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_csv(df: Any, path: str, out: TextIO | None = None, chunk_rows: int = 50_000) -> None:
    """Write a DataFrame as CSV to ``path`` through :func:`atomic_output` (or to ``out`` when ``path`` is '-'),
    in chunks of rows so that a long write can be interrupted."""
    def emit(fh: Any) -> None:
        n = len(df)
        if n == 0:
            df.to_csv(fh, index=False, lineterminator="\n")
        for start in range(0, n, chunk_rows):
            df.iloc[start:start + chunk_rows].to_csv(fh, index=False, header=start == 0, lineterminator="\n")

    if path == "-":
        import sys

        emit(out if out is not None else sys.stdout)
        return
    with atomic_output(path) as fh:
        emit(fh)
