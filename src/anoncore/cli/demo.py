"""``anoncore demo``: anonymize the built-in synthetic census and show what anoncore measures."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, TextIO

from anoncore.cli._common import (
    UsageError,
    _arg_from,
    _counts,
    _document,
    _float,
    _guarantees,
    _levels_arg,
    _model_arg,
    _nonneg_int_arg,
    _positive_int_arg,
    _print_text,
    _published_head,
    _readable,
    _report_text,
    _run_audit,
    _run_metrics,
    _table_summary,
    _version,
    models_help,
    parse_model_spec,
)

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
            if partition.levels is None:  # lattice_search always publishes a full-domain node
                raise RuntimeError("internal error: lattice_search returned no levels; please report")
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


def register(sub: Any) -> None:
    """Add the ``demo`` subcommand to ``sub``."""
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
                   help=models_help() + f" (default: {' '.join(DEMO_MODELS)}; with --sensitive occupation "
                        "t-hierarchical instead of t-ordered)")
    d.add_argument("--head", type=_nonneg_int_arg, default=10, help="published rows to show (default 10)")
    d.add_argument("--no-metrics", action="store_true", help="skip the information-loss metrics")
    d.add_argument("--json", action="store_true", help="print one JSON document (schema in docs/cli.md)")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore demo``."""
    return _cmd_demo(args, out)
