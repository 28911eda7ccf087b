"""``anoncore audit``: check an anonymized table against privacy models."""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any, TextIO

import numpy as np

from anoncore.cli._common import (
    UsageError,
    _counts,
    _document,
    _guarantees,
    _levels_arg,
    _model_arg,
    _nonneg_int_arg,
    _print_text,
    _report_text,
    _run_audit,
    _run_metrics,
    _table_summary,
    _version,
    add_input_arguments,
    models_help,
    read_table,
)

# ---------------------------------------------------------------------------------------------------------
# audit


def _read_labels(spec: str, data_path: str, sep: str | None, n_input: int,
                 encoding: str = "utf-8") -> tuple[np.ndarray, str]:
    """Class labels of every input row, from a column of the data file or from a file."""
    import pandas as pd

    from anoncore.data.table import _open_text

    with _open_text(data_path, encoding) as fh:
        header = fh.readline()
    if sep is None:
        sep = ";" if header.count(";") > header.count(",") else ","
    names = [h.strip() for h in header.rstrip("\r\n").split(sep)]
    if spec in names:
        col = pd.read_csv(data_path, sep=sep, dtype=str, keep_default_na=False, usecols=[names.index(spec)],
                          skipinitialspace=True, encoding=encoding)
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


def _published_schema(schema: Any) -> Any:
    """The schema of a file written by ``anoncore anonymize``: its quasi-identifiers hold published labels
    (generalized values, ``*``), read as opaque categories; identifiers are not in it; the other columns keep
    their declaration."""
    from dataclasses import replace

    from anoncore.data.schema import Attribute

    attrs = tuple(Attribute(a.name, "quasi_identifier", "categorical") if a.role == "quasi_identifier" else a
                  for a in schema.attributes if a.role != "identifier")  # identifiers are never published
    return replace(schema, attributes=attrs, _by_name={})


def _published_partition(table: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """Classes from the ``ec`` column and suppressed rows from the ``suppressed`` column of a published file."""
    import pandas as pd

    from anoncore.data.table import _open_text
    from anoncore.results import Partition

    with _open_text(args.data, args.encoding) as fh:
        header = fh.readline()
    sep = args.sep or table.schema.sep or (";" if header.count(";") > header.count(",") else ",")
    names = [h.strip() for h in header.rstrip("\r\n").split(sep)]
    if "ec" not in names:
        raise UsageError(f"--published: {args.data!r} has no column 'ec' (columns: {names}); it was not written by "
                         f"anoncore anonymize -o.")
    use = ["ec"] + (["suppressed"] if "suppressed" in names else [])
    cols = pd.read_csv(args.data, sep=sep, dtype=str, keep_default_na=False, usecols=use, skipinitialspace=True,
                       encoding=args.encoding)
    ec = cols["ec"].str.strip().to_numpy(dtype=object)[table.row_ids]
    sup = None
    if "suppressed" in cols:
        flag = cols["suppressed"].str.strip().str.lower().to_numpy(dtype=object)[table.row_ids]
        bad = sorted(set(flag) - {"true", "false", "1", "0"})
        if bad:
            raise ValueError(f"--published: column 'suppressed' of {args.data!r} must hold True/False. Got "
                             f"{bad[:5]}.")
        sup = (flag == "true") | (flag == "1")
    partition = Partition.from_labels(table, ec.astype(str), sup)
    return partition, {"source": "labels", "labels": "column 'ec' (published file)",
                       "suppressed_label": "column 'suppressed'" if sup is not None else None}


def _cmd_audit(args: argparse.Namespace, out: TextIO) -> int:
    from anoncore._progress import Progress
    from anoncore.data.schema import Schema
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
        if args.published:
            schema = _published_schema(schema)
        table = read_table(args.data, schema, args, notes, ("ec", "suppressed") if args.published else ())
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
        elif args.published:
            partition, part_info = _published_partition(table, args)
            if not args.no_metrics:
                notes.append("metrics skipped: the information loss of a published file needs the original data")
                args.no_metrics = True
        else:
            if args.suppress_below:
                raise UsageError("--suppress-below works with --levels; with --labels use --suppressed-label.")
            n_input = table.n_rows + int(table.dropped_rows.size)
            labels, where = _read_labels(args.labels, args.data, args.sep or schema.sep, n_input, args.encoding)
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


def register(sub: Any) -> None:
    """Add the ``audit`` subcommand to ``sub``."""
    a = sub.add_parser("audit", help="audit an anonymized table against privacy models",
                       description="Check that a partition of a table (given by full-domain levels or by class "
                                   "labels) satisfies privacy models. Exit code 1 when a model fails.")
    a.add_argument("data", metavar="DATA", help="CSV file (',' or ';' separated, may be .gz) with a header")
    a.add_argument("--schema", required=True, metavar="SCHEMA.toml", help="schema file (roles, kinds, hierarchies)")
    a.add_argument("--model", type=_model_arg, action="append", required=True, help=models_help())
    g = a.add_mutually_exclusive_group(required=True)
    g.add_argument("--levels", type=_levels_arg, help="full-domain levels, one per quasi-identifier: 1,0,2,...")
    g.add_argument("--labels", metavar="COLUMN_OR_FILE",
                   help="class label per row: a column of DATA, or a file with one label per data row")
    g.add_argument("--published", action="store_true",
                   help="DATA is a file written by 'anoncore anonymize -o': classes from its 'ec' column, suppressed "
                        "rows from its 'suppressed' column (--include-suppressed), quasi-identifiers read as "
                        "published labels")
    a.add_argument("--suppressed-label", default=None, metavar="LABEL",
                   help="with --labels: rows with this label are suppressed")
    a.add_argument("--suppress-below", type=_nonneg_int_arg, default=0, metavar="K",
                   help="with --levels: the rows of classes smaller than K are suppressed (as ARX does within its "
                        "suppression limit); default 0, no suppression")
    add_input_arguments(a)
    a.add_argument("--no-metrics", action="store_true", help="skip the information-loss metrics")
    a.add_argument("--json", action="store_true", help="print one JSON document (schema in docs/cli.md)")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore audit``."""
    return _cmd_audit(args, out)
