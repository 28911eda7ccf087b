"""The ``anoncore`` command line: ``demo``, ``audit``, ``anonymize``, ``temporal``, ``sequence`` and ``stream``.

Every command takes ``--json`` and then prints exactly one JSON document on stdout, whose layout is
documented (and versioned by :data:`SCHEMA_VERSION`) in ``docs/cli.md``. Without ``--json`` the output is a
readable report. Progress is drawn on stderr only when stderr is a terminal.

Exit codes: 0 success (for ``audit``: every model passed), 1 an audited model failed or the work could not
be done, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

SCHEMA_VERSION = "1"
MAX_LISTED_VIOLATIONS = 100

__all__ = ["MODEL_SPECS", "SCHEMA_VERSION", "ModelSpec", "main", "parse_model_spec"]


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
}


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
        kwargs = {"sensitive": self.sensitive} if self.sensitive is not None else {}
        return cls(*self.params, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        names = MODEL_SPECS[self.name][1]
        return {"spec": self.text, "model": self.class_name, "parameters": dict(zip(names, self.params)),
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
               timings: dict[str, float]) -> dict[str, Any] | None:
    """Audit report dict, or None (with a note) when this build has no audit."""
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


# ---------------------------------------------------------------------------------------------------------
# demo

DEMO_LEVELS = (2, 0, 2, 1, 1, 2, 1)
DEMO_MODELS = ("k=5", "l-distinct=3", "t-ordered=0.3")
DEMO_MODELS_OCCUPATION = ("k=5", "l-distinct=3", "t-hierarchical=0.3")
DEMO_SUPPRESSION_LIMIT = 0.02


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    from anoncore._progress import Progress
    from anoncore.datasets import synthetic_census
    from anoncore.results import Partition

    defaults = DEMO_MODELS if args.sensitive == "salary" else DEMO_MODELS_OCCUPATION
    specs = list(args.model) if args.model else [parse_model_spec(s) for s in defaults]
    levels = tuple(args.levels) if args.levels is not None else DEMO_LEVELS
    notes: list[str] = []
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    with Progress(5, "anoncore demo") as bar:
        bar.set_step(f"generating {args.rows:,} synthetic census rows")
        t0 = time.perf_counter()
        table = synthetic_census(args.rows, rng=args.seed, sensitive=args.sensitive)
        timings["generate"] = time.perf_counter() - t0
        if args.levels is not None:
            bar.advance(step="building the partition")
            if len(levels) != len(table.quasi_identifiers):
                raise UsageError(f"--levels needs {len(table.quasi_identifiers)} values (one per quasi-identifier "
                                 f"{list(table.quasi_identifiers)}). Got {len(levels)}.")
            t0 = time.perf_counter()
            try:
                partition = Partition.from_levels(table, levels)
            except (ValueError, TypeError) as exc:
                raise UsageError(str(exc)) from None
            if args.suppress_below > 1:
                small = partition.class_sizes_all[partition.labels] < args.suppress_below
                partition = partition.with_suppressed(small)
            part_info = {"source": "levels", "levels": list(levels), "suppress_below": args.suppress_below}
        else:
            bar.advance(step="searching the generalization lattice for the optimal node")
            from anoncore.static.lattice import lattice_search

            t0 = time.perf_counter()
            try:
                models = [s.build() for s in specs]
            except (ValueError, TypeError) as exc:
                raise UsageError(str(exc)) from None
            res = lattice_search(table, models, suppression_limit=args.suppression_limit, metric="loss")
            partition = res.partition
            levels = tuple(int(x) for x in partition.levels)
            part_info = {"source": "algorithm", "algorithm": "flash", "levels": list(levels),
                         "suppression_limit": args.suppression_limit, "metric": "loss"}
        timings["partition"] = time.perf_counter() - t0
        bar.advance(step="auditing")
        audit_dict = _run_audit(table, partition, specs, notes, timings)
        bar.advance(step="measuring information loss")
        metrics = _run_metrics(table, partition, notes, timings) if not args.no_metrics else None
        bar.advance(step="publishing")
        t0 = time.perf_counter()
        head = _readable(_published_head(partition, args.head))
        timings["publish_head"] = time.perf_counter() - t0
        bar.advance()
    timings["total"] = time.perf_counter() - t_all
    counts = _counts(table, partition)
    if args.json:
        result = {
            "table": _table_summary(table), "partition": part_info, "counts": counts,
            "guarantees": _guarantees(counts, audit_dict), "metrics": metrics,
            "published_head": head.astype(object).to_dict(orient="records"),
            "timings": timings, "notes": notes,
        }
        params = {"rows": args.rows, "seed": args.seed, "sensitive": args.sensitive,
                  "levels": None if args.levels is None else list(levels),
                  "suppress_below": args.suppress_below, "suppression_limit": args.suppression_limit,
                  "models": [s.to_dict() for s in specs],
                  "head": args.head, "metrics": not args.no_metrics}
        out.write(json.dumps(_document("demo", params, result), allow_nan=False) + "\n")
        return _demo_exit(args, audit_dict)
    report_text = _report_text(audit_dict)
    if audit_dict is not None and not audit_dict["passed"] and args.levels is not None:
        notes.append("these levels were chosen by hand and small classes suppressed, which guarantees only k; "
                     "the anonymization algorithms search for a partition that satisfies every model")
    _print_text(out, f"anoncore {_version()} demo: synthetic census ({args.rows:,} rows, seed {args.seed}), "
                f"sensitive attribute {args.sensitive!r}", table, counts, part_info, audit_dict, report_text,
                metrics, timings, notes, head, show_hierarchies=True)
    return _demo_exit(args, audit_dict)


def _demo_exit(args: argparse.Namespace, audit_dict: dict[str, Any] | None) -> int:
    """0, or 1 when the searched partition fails its own audit (hand-chosen --levels may fail: that is shown)."""
    failed = audit_dict is not None and not audit_dict["passed"]
    return 1 if failed and args.levels is None else 0


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
    for m in audit_dict["models"]:
        verdict = "passed" if m["passed"] else f"FAILED ({m['n_violating']} violating classes)"
        sa = f" on {m['sensitive_attribute']}" if m.get("sensitive_attribute") else ""
        lines.append(f"  {m['spec']:<24}{verdict}{sa}; achieved {m['parameter']} = {_fmt_num(m['achieved'])}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# audit


def _read_labels(spec: str, data_path: str, sep: str | None, n_input: int) -> tuple[np.ndarray, str]:
    """Class labels of every input row, from a column of the data file or from a file."""
    import pandas as pd

    from anoncore.data.table import _open_text

    with _open_text(data_path) as fh:
        header = fh.readline()
    if sep is None:
        sep = ";" if header.count(";") > header.count(",") else ","
    names = [h.strip() for h in header.rstrip("\r\n").split(sep)]
    if spec in names:
        col = pd.read_csv(data_path, sep=sep, dtype=str, keep_default_na=False, usecols=[names.index(spec)],
                          skipinitialspace=True)
        return col.iloc[:, 0].str.strip().to_numpy(dtype=object), f"column {spec!r}"
    if not os.path.exists(spec):
        raise UsageError(f"--labels {spec!r} is neither a column of {data_path!r} (columns: {names}) nor a file.")
    with _open_text(spec) as fh:
        lines = [ln.strip() for ln in fh.read().splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) == n_input + 1:
        lines = lines[1:]  # a header line
    if len(lines) != n_input:
        raise UsageError(f"the labels file {spec!r} has {len(lines)} labels, but the data has {n_input} rows.")
    return np.array(lines, dtype=object), f"file {spec!r}"


def _cmd_audit(args: argparse.Namespace, out: TextIO) -> int:
    from anoncore._progress import Progress
    from anoncore.data.schema import Schema
    from anoncore.data.table import Table
    from anoncore.results import Partition

    if not os.path.exists(args.data):
        raise UsageError(f"data file {args.data!r} does not exist.")
    if not os.path.exists(args.schema):
        raise UsageError(f"schema file {args.schema!r} does not exist.")
    notes: list[str] = []
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    with Progress(4, "anoncore audit") as bar:
        bar.set_step("reading the schema and the data")
        t0 = time.perf_counter()
        try:
            schema = Schema.from_toml(args.schema)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"invalid schema {args.schema!r}: {exc}") from None
        except Exception as exc:  # noqa: BLE001  (tomllib.TOMLDecodeError and friends)
            raise UsageError(f"cannot read schema {args.schema!r}: {exc}") from None
        table = Table.from_csv(args.data, schema, sep=args.sep)
        timings["load"] = time.perf_counter() - t0
        bar.advance(step="building the partition")
        t0 = time.perf_counter()
        if args.levels is not None:
            qis = table.quasi_identifiers
            if len(args.levels) != len(qis):
                raise UsageError(f"--levels needs {len(qis)} values (one per quasi-identifier {list(qis)}). "
                                 f"Got {len(args.levels)}.")
            try:
                partition = Partition.from_levels(table, args.levels)
            except (ValueError, TypeError) as exc:
                raise UsageError(str(exc)) from None
            if args.suppress_below > 1:
                small = partition.class_sizes_all[partition.labels] < args.suppress_below
                partition = partition.with_suppressed(small)
            part_info: dict[str, Any] = {"source": "levels", "levels": list(args.levels),
                                         "suppress_below": args.suppress_below}
        else:
            if args.suppress_below:
                raise UsageError("--suppress-below works with --levels; with --labels use --suppressed-label.")
            n_input = table.n_rows + int(table.dropped_rows.size)
            labels, where = _read_labels(args.labels, args.data, args.sep, n_input)
            labels = labels[table.row_ids]
            suppressed = None
            if args.suppressed_label is not None:
                suppressed = labels == args.suppressed_label
            partition = Partition.from_labels(table, labels.astype(str), suppressed)
            part_info = {"source": "labels", "labels": where, "suppressed_label": args.suppressed_label}
        timings["partition"] = time.perf_counter() - t0
        bar.advance(step="auditing")
        audit_dict = _run_audit(table, partition, args.model, notes, timings)
        bar.advance(step="measuring information loss")
        metrics = _run_metrics(table, partition, notes, timings) if not args.no_metrics else None
        bar.advance()
    timings["total"] = time.perf_counter() - t_all
    counts = _counts(table, partition)
    passed = None if audit_dict is None else bool(audit_dict["passed"])
    if args.json:
        result = {"table": _table_summary(table), "partition": part_info, "counts": counts,
                  "guarantees": _guarantees(counts, audit_dict), "metrics": metrics, "timings": timings,
                  "notes": notes}
        params = {"data": args.data, "schema": args.schema, "sep": args.sep,
                  "models": [s.to_dict() for s in args.model], "levels": args.levels, "labels": args.labels,
                  "suppressed_label": args.suppressed_label, "suppress_below": args.suppress_below,
                  "metrics": not args.no_metrics}
        out.write(json.dumps(_document("audit", params, result), allow_nan=False) + "\n")
    else:
        _print_text(out, f"anoncore {_version()} audit of {args.data}", table, counts, part_info, audit_dict,
                    _report_text(audit_dict), metrics, timings, notes)
    return 1 if passed is False else 0


# ---------------------------------------------------------------------------------------------------------
# parser and entry point


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``anoncore`` command."""
    models_help = ("privacy model to check, repeatable: NAME=VALUE[@SENSITIVE_COLUMN] with NAME one of "
                   + ", ".join(f"{k} ({','.join(v[1])})" for k, v in MODEL_SPECS.items()))
    p = argparse.ArgumentParser(prog="anoncore", description="Privacy-preserving data publishing: audit "
                                "anonymized tables and try the library on a synthetic census.")
    p.add_argument("--version", action="version", version=f"anoncore {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    d = sub.add_parser("demo", help="generate the synthetic census, anonymize it and show what anoncore measures",
                       description="Generate the synthetic census, find the optimal full-domain generalization "
                                   "that satisfies the privacy models (or use --levels), and print the published "
                                   "table, the independent audit and the metrics.")
    d.add_argument("--rows", type=_positive_int_arg, default=100_000, help="rows to generate (default 100000)")
    d.add_argument("--seed", type=_nonneg_int_arg, default=0, help="random seed (default 0)")
    d.add_argument("--sensitive", choices=("salary", "occupation"), default="salary",
                   help="sensitive attribute (default salary)")
    d.add_argument("--levels", type=_levels_arg, default=None,
                   help="use these generalization levels (one per quasi-identifier: age, sex, education, "
                        "marital_status, race, work_class, birth_place; e.g. "
                        f"{','.join(map(str, DEMO_LEVELS))}) instead of searching for the optimal ones")
    d.add_argument("--suppression-limit", type=_arg_from(_float("the suppression limit", 0.0, 1.0)), default=DEMO_SUPPRESSION_LIMIT, metavar="FRACTION",
                   help="without --levels: largest fraction of rows the search may suppress (default 0.02)")
    d.add_argument("--suppress-below", type=_nonneg_int_arg, default=5, metavar="K",
                   help="with --levels: suppress the rows of classes smaller than K (default 5; 0 or 1: none)")
    d.add_argument("--model", type=_model_arg, action="append", default=None,
                   help=models_help + f" (default: {' '.join(DEMO_MODELS)}; with --sensitive occupation "
                        "t-hierarchical instead of t-ordered)")
    d.add_argument("--head", type=_nonneg_int_arg, default=10, help="published rows to show (default 10)")
    d.add_argument("--no-metrics", action="store_true", help="skip the information-loss metrics")
    d.add_argument("--json", action="store_true", help="print one JSON document (schema in docs/cli.md)")

    a = sub.add_parser("audit", help="audit an anonymized table against privacy models",
                       description="Check that a partition of a table (given by full-domain levels or by class "
                                   "labels) satisfies privacy models. Exit code 1 when a model fails.")
    a.add_argument("data", metavar="DATA", help="CSV file (',' or ';' separated, may be .gz) with a header")
    a.add_argument("--schema", required=True, metavar="SCHEMA.toml", help="schema file (roles, kinds, hierarchies)")
    a.add_argument("--model", type=_model_arg, action="append", required=True, help=models_help)
    g = a.add_mutually_exclusive_group(required=True)
    g.add_argument("--levels", type=_levels_arg, help="full-domain levels, one per quasi-identifier: 1,0,2,...")
    g.add_argument("--labels", metavar="COLUMN_OR_FILE",
                   help="class label per row: a column of DATA, or a file with one label per data row")
    a.add_argument("--suppressed-label", default=None, metavar="LABEL",
                   help="with --labels: rows with this label are suppressed")
    a.add_argument("--suppress-below", type=_nonneg_int_arg, default=0, metavar="K",
                   help="with --levels: the rows of classes smaller than K are suppressed (as ARX does within its "
                        "suppression limit); default 0, no suppression")
    a.add_argument("--sep", default=None, help="field separator of DATA (default: detected from the header)")
    a.add_argument("--no-metrics", action="store_true", help="skip the information-loss metrics")
    a.add_argument("--json", action="store_true", help="print one JSON document (schema in docs/cli.md)")

    from anoncore import _cli_anonymize

    _cli_anonymize.add_arguments(
        sub.add_parser("anonymize", help="anonymize a CSV file with one algorithm and audit the output",
                       description="Run a static anonymization algorithm (full-domain lattice search, SABRE, "
                                   "Mondrian, ...) on a CSV file, audit the published partition against the "
                                   "privacy models it must satisfy, and write the published table. Exit code 1 "
                                   "when the audit fails."),
        models_help)

    from anoncore.temporal._cli import build_parser as _temporal_parser

    _temporal_parser(sub.add_parser("temporal", help="reposition a temporal stream so every snapshot is "
                                    "l-eligible, then publish it (docs/temporal.md)"))
    from anoncore.sequence._cli import build_parser as _sequence_parser

    _sequence_parser(sub.add_parser("sequence", help="sanitize users' event sequences by taxonomy "
                                    "generalization with mutual-information privacy (docs/sequence.md)"))

    from anoncore.stream._cli import build_parser as _stream_parser

    _stream_parser(sub.add_parser("stream", help="anonymize a stream of CSV / JSON-lines tuples (CASTLE; "
                                  "docs/castle.md)"))
    return p


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failed audit or error, 2 bad arguments)."""
    out = stdout if stdout is not None else sys.stdout
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # argparse has printed its message (or --help / --version)
        return int(exc.code) if isinstance(exc.code, int) else 2
    sub = f"{parser.prog} {args.command}"
    try:
        if args.command == "demo":
            return _cmd_demo(args, out)
        if args.command == "anonymize":
            from anoncore import _cli_anonymize

            return _cli_anonymize.run(args, out)
        if args.command == "temporal":
            from anoncore.temporal._cli import cli_main as _temporal_main

            return _temporal_main(list(argv)[1:] if argv is not None else sys.argv[2:])
        if args.command == "sequence":
            from anoncore.sequence._cli import cli_main as _sequence_main

            return _sequence_main(list(argv)[1:] if argv is not None else sys.argv[2:], out)
        if args.command == "stream":
            from anoncore.stream._cli import cli_main as _stream_main

            return _stream_main(list(argv)[1:] if argv is not None else sys.argv[2:], stdout=stdout)
        return _cmd_audit(args, out)
    except UsageError as exc:
        sys.stderr.write(f"{sub}: error: {exc}\n")
        return 2
    except (ValueError, TypeError, RuntimeError, OSError) as exc:
        sys.stderr.write(f"{sub}: error: {exc}\n")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
