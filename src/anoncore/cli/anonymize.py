"""``anoncore anonymize``: run one static anonymization algorithm on a CSV file and audit its output.

Every algorithm is an entry of :data:`ALGORITHMS` (name -> :class:`Algorithm`): how to call it from the
parsed arguments, and which privacy models its output must satisfy (the command audits the published
partition against them with :func:`anoncore.audit.audit`, independently of the algorithm). Adding an
algorithm to the command is adding one entry.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from anoncore.cli import _common as _cli
from anoncore.cli import risk as _risk
from anoncore.distributed import _cli as _dask_cli

__all__ = ["ALGORITHMS", "SUPPRESSED_EC", "Algorithm", "add_arguments", "published_frame", "register",
           "register_algorithm", "run"]

LATTICE_METRICS = ("loss", "dm", "dm_star", "entropy", "entropy_nm", "precision", "precision_nm", "height", "aecs",
                   "kl", "kl_arx", "ambiguity")


@dataclass(frozen=True)
class Algorithm:
    """One algorithm of ``anoncore anonymize``.

    ``run(table, args)`` returns a :class:`anoncore.results.Result`; ``models(table, args)`` returns the
    :class:`anoncore.cli.ModelSpec` list its output is audited against; ``needs`` names the options the
    algorithm requires (checked before any work starts).
    """

    name: str
    help: str
    run: Callable[[Any, argparse.Namespace], Any]
    models: Callable[[Any, argparse.Namespace], list[_cli.ModelSpec]]
    needs: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------------------
# full-domain generalization (lattice search)


def _lattice_models(table: Any, args: argparse.Namespace) -> list[_cli.ModelSpec]:
    return list(args.model)


def _lattice_runner(strategy: str) -> Callable[[Any, argparse.Namespace], Any]:
    def run(table: Any, args: argparse.Namespace) -> Any:
        from anoncore.static.lattice import DEFAULT_MAX_NODES, lattice_search

        models = [s.build() for s in args.model]
        limit = DEFAULT_MAX_NODES if args.max_nodes is None else (None if args.max_nodes == 0 else args.max_nodes)
        return lattice_search(table, models, suppression_limit=args.suppression_limit, metric=args.metric,
                              strategy=strategy, n_threads=args.threads, max_nodes=limit)

    return run


# ---------------------------------------------------------------------------------------------------------
# t-closeness by SABRE and Mondrian


def _t_kind(table: Any, sensitive: str | None) -> str:
    """The EMD ground distance the t-closeness algorithms use for this sensitive attribute."""
    name = table.sensitive_column(sensitive, caller="anoncore anonymize")
    return "t-hierarchical" if table.attribute(name).kind == "categorical" else "t-ordered"


def _t_models(table: Any, args: argparse.Namespace) -> list[_cli.ModelSpec]:
    name = table.sensitive_column(args.sensitive, caller="anoncore anonymize")
    return [_cli.parse_model_spec(f"k={args.k}"),
            _cli.parse_model_spec(f"{_t_kind(table, args.sensitive)}={args.t!r}@{name}")]


def _run_sabre(table: Any, args: argparse.Namespace) -> Any:
    from anoncore.static.sabre import sabre

    return sabre(table, [s.build() for s in _t_models(table, args)], method=args.method, rng=args.seed,
                 n_threads=args.threads)


def _run_tmondrian(table: Any, args: argparse.Namespace) -> Any:
    from anoncore.static.mondrian import tmondrian

    return tmondrian(table, [s.build() for s in _t_models(table, args)])


# ---------------------------------------------------------------------------------------------------------
# beta-likeness by BUREL and Mondrian

_BETA_SPEC = {"enhanced": "beta-enhanced", "basic": "beta-basic", "semantic": "beta-semantic",
              "range": "beta-range"}


def _beta_models(table: Any, args: argparse.Namespace) -> list[_cli.ModelSpec]:
    name = table.sensitive_column(args.sensitive, caller="anoncore anonymize")
    if args.algorithm == "dmondrian":
        variant = "enhanced"
    else:
        variant = args.variant
    if variant == "range":
        if args.epsilon is None:
            raise ValueError("--variant range needs --epsilon (the width of a value range, >= 0).")
        value = f"{args.beta!r},{args.epsilon!r}"
    else:
        if args.epsilon is not None:
            raise ValueError(f"--epsilon is for --variant range only (got --variant {variant}).")
        value = f"{args.beta!r}"
    return [_cli.parse_model_spec(f"{_BETA_SPEC[variant]}={value}@{name}")]


def _run_burel(table: Any, args: argparse.Namespace) -> Any:
    from anoncore.static.burel import burel

    return burel(table, [s.build() for s in _beta_models(table, args)], rng=args.seed, n_threads=args.threads)


def _run_lmondrian(table: Any, args: argparse.Namespace) -> Any:
    from anoncore.static.burel import lmondrian

    return lmondrian(table, [s.build() for s in _beta_models(table, args)])


def _run_dmondrian(table: Any, args: argparse.Namespace) -> Any:
    from anoncore.static.burel import dmondrian

    if args.variant != "enhanced" or args.epsilon is not None:
        raise _cli.UsageError("dmondrian guarantees enhanced beta-likeness only (no --variant, no --epsilon).")
    return dmondrian(table, [s.build() for s in _beta_models(table, args)])


ALGORITHMS: dict[str, Algorithm] = {}


def register_algorithm(alg: Algorithm) -> None:
    """Add an algorithm to the command (name clashes are an error)."""
    if alg.name in ALGORITHMS:
        raise ValueError(f"algorithm {alg.name!r} is already registered")
    ALGORITHMS[alg.name] = alg


for _name, _strategy, _help in (
    ("flash", "optimal", "optimal full-domain generalization (best-first lattice search with predictive tagging)"),
    ("datafly", "datafly", "Datafly heuristic (generalize the QI with most distinct values)"),
    ("samarati", "samarati", "Samarati's binary search on lattice height"),
    ("greedy", "greedy", "the improved greedy heuristic of the Babu thesis"),
):
    register_algorithm(Algorithm(_name, _help, _lattice_runner(_strategy), _lattice_models, ("model",)))
register_algorithm(Algorithm("sabre", "SABRE t-closeness (bucketization + redistribution; --method ak|knn)", _run_sabre,
                   _t_models, ("t",)))
register_algorithm(Algorithm("tmondrian", "Mondrian with k-anonymity and t-closeness checks (baseline)", _run_tmondrian,
                   _t_models, ("t",)))
register_algorithm(Algorithm("burel", "BUREL beta-likeness (DP bucketization + redistribution; --variant, --beta)", _run_burel,
                   _beta_models, ("beta",)))
register_algorithm(Algorithm("lmondrian", "Mondrian with beta-likeness checks (baseline)", _run_lmondrian, _beta_models,
                   ("beta",)))
register_algorithm(Algorithm("dmondrian", "Mondrian with delta-disclosure for beta-likeness (baseline)", _run_dmondrian,
                   _beta_models, ("beta",)))


# ---------------------------------------------------------------------------------------------------------
# arguments and the command


_arg = _cli._arg_from
_fraction_arg = _arg(_cli._float("the suppression limit", 0.0, 1.0))
_t_arg = _arg(_cli._float("t", 0.0, 1.0, lo_open=True))
_beta_arg = _arg(_cli._float("beta", 0.0, math.inf, lo_open=True))
_eps_arg = _arg(_cli._float("epsilon", 0.0, math.inf))


def add_arguments(p: argparse.ArgumentParser, models_help: str) -> None:
    """The options of ``anoncore anonymize``."""
    algs = "; ".join(f"{a.name}: {a.help}" for a in ALGORITHMS.values())
    p.add_argument("data", metavar="DATA", help="CSV file (',' or ';' separated, may be .gz) with a header; '-' reads stdin")
    p.add_argument("--schema", required=True, metavar="SCHEMA.toml", help="schema file (roles, kinds, hierarchies)")
    p.add_argument("--algorithm", required=True, choices=sorted(ALGORITHMS), help=algs)
    p.add_argument("--model", type=_cli._model_arg, action="append", default=[],
                   help="lattice algorithms: privacy model to satisfy, repeatable. " + models_help)
    p.add_argument("--suppression-limit", type=_fraction_arg, default=0.0, metavar="FRACTION",
                   help="lattice algorithms: largest fraction of rows that may be suppressed (default 0)")
    p.add_argument("--max-nodes", type=_cli._nonneg_int_arg, default=None, metavar="N",
                   help="flash: refuse a lattice of more than N nodes (default 50,000,000; 0: no limit); the "
                        "heuristics datafly, greedy and samarati are not limited")
    p.add_argument("--metric", choices=LATTICE_METRICS, default="loss",
                   help="lattice algorithms: the objective (default loss, ARX's Loss)")
    p.add_argument("-k", "--k", type=_cli._positive_int_arg, default=1, help="sabre/tmondrian: minimum class size")
    p.add_argument("-t", "--t", type=_t_arg, default=None, help="sabre/tmondrian: closeness threshold in (0, 1]")
    p.add_argument("--method", choices=("ak", "knn"), default="ak", help="sabre: materialization (default ak)")
    p.add_argument("--beta", type=_beta_arg, default=None, help="burel/lmondrian/dmondrian: beta > 0")
    p.add_argument("--variant", choices=("enhanced", "basic", "semantic", "range"), default="enhanced",
                   help="burel/lmondrian: beta-likeness variant (default enhanced)")
    p.add_argument("--epsilon", type=_eps_arg, default=None,
                   help="burel/lmondrian --variant range: absolute width of a sensitive value range (>= 0)")
    p.add_argument("--sensitive", default=None, metavar="COLUMN",
                   help="the sensitive attribute when the schema declares several")
    p.add_argument("--seed", type=_cli._nonneg_int_arg, default=0, help="random seed (default 0)")
    p.add_argument("--threads", type=_cli._nonneg_int_arg, default=None,
                   help="worker threads (default: all cores); the output does not depend on it")
    p.add_argument("-o", "--output", default=None, metavar="OUT.csv",
                   help="write the published table here (CSV; Parquet for a .parquet or .pq name), '-' for stdout "
                        "(suppressed rows left out unless --include-suppressed); written only when the audit "
                        "passed, through a temporary file")
    p.add_argument("--include-suppressed", action="store_true",
                   help="with --output: keep suppressed rows, fully suppressed (every quasi-identifier '*', ec -1) "
                        "and flagged in a column 'suppressed'")
    _cli.add_force_argument(p)
    p.add_argument("--head", type=_cli._nonneg_int_arg, default=10, help="published rows to show (default 10)")
    _cli.add_input_arguments(p)
    p.add_argument("--no-metrics", action="store_true", help="skip the information-loss metrics")
    p.add_argument("--json", action="store_true", help="print one JSON document (schema in docs/cli.md)")
    _risk.add_risk_arguments(p)
    _dask_cli.add_arguments(p)  # --scheduler (Parquet DATA: anoncore.distributed)
    _dask_cli.add_anonymize_arguments(p)  # --parts, --split (Parquet DATA, two-phase algorithms)


def _check_needs(alg: Algorithm, args: argparse.Namespace) -> None:
    if "model" in alg.needs and not args.model:
        raise _cli.UsageError(f"--algorithm {alg.name} needs at least one --model (e.g. --model k=5).")
    if "t" in alg.needs and args.t is None:
        raise _cli.UsageError(f"--algorithm {alg.name} needs -t/--t (the closeness threshold, in (0, 1]).")
    if "beta" in alg.needs and args.beta is None:
        raise _cli.UsageError(f"--algorithm {alg.name} needs --beta (the likeness threshold, > 0).")
    if "model" not in alg.needs and args.model:
        raise _cli.UsageError(f"--model is for the lattice algorithms; --algorithm {alg.name} takes its own "
                              f"parameters (see --help).")


def _schema_inputs(schema_path: str) -> list[str]:
    """The schema file and the hierarchy files it names (inputs an output must not overwrite)."""
    import tomllib

    files = [schema_path]
    try:
        with open(schema_path, "rb") as fh:
            doc = tomllib.load(fh)
    except Exception:  # noqa: BLE001  (reported later by Schema.from_toml, with its message)
        return files
    base = os.path.dirname(os.path.abspath(schema_path))
    attrs = doc.get("attributes")
    for spec in attrs.values() if isinstance(attrs, dict) else ():
        h = spec.get("hierarchy") if isinstance(spec, dict) else None
        if isinstance(h, str):
            files.append(h if os.path.isabs(h) else os.path.join(base, h))
    return files


def published_frame(partition: Any, include_suppressed: bool) -> Any:
    """The published table of ``partition`` as the command writes it.

    Generalized quasi-identifiers, exact other columns and the class id ``ec``. With ``include_suppressed``
    the suppressed rows are kept, fully suppressed: every quasi-identifier is ``*`` (the root), ``ec`` is
    :data:`SUPPRESSED_EC` (one marker shared by all of them, never a class of its own) and the column
    ``suppressed`` flags them, so ``anoncore audit --published`` of the file checks the same classes as the
    command did.
    """
    import numpy as np

    df = partition.to_pandas(include_suppressed=include_suppressed)
    if include_suppressed:
        sup = np.asarray(partition.suppressed, dtype=bool)
        ec = np.asarray(df["ec"].to_numpy(), dtype=np.int64).copy()
        ec[sup] = SUPPRESSED_EC
        df["ec"] = ec
        df["suppressed"] = sup
    return df


#: The ``ec`` value of every suppressed row in a file written with ``--include-suppressed``.
SUPPRESSED_EC = -1


def _write_published(partition: Any, path: str, include_suppressed: bool, out: TextIO, threads: int | None) -> None:
    """Stream the published table to ``path`` (CSV, or Parquet for a ``.parquet`` / ``.pq`` name) through
    :func:`anoncore.cli.atomic_output`, or as CSV to ``out`` for ``-``; the values of :func:`published_frame`."""
    from anoncore.data.writers import write_published

    if path == "-":
        write_published(partition, out, format="csv", include_suppressed=include_suppressed, n_threads=threads)
        return
    fmt = "parquet" if path.lower().endswith((".parquet", ".pq")) else "csv"
    with _cli.atomic_output(path, mode="wb") as fh:
        write_published(partition, fh, format=fmt, include_suppressed=include_suppressed, n_threads=threads)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore anonymize``; exit code 0 when the audit passed, 1 otherwise (nothing is written then)."""
    import sys

    from anoncore._progress import Progress
    from anoncore.data.schema import Schema

    if _dask_cli.is_parquet(args.data):  # a folder or glob of Parquet files: on Dask
        return _dask_cli.run_anonymize(args, out)
    alg = ALGORITHMS[args.algorithm]
    _check_needs(alg, args)
    if args.data != "-" and not os.path.exists(args.data):
        raise _cli.UsageError(f"data file {args.data!r} does not exist.")
    if not os.path.exists(args.schema):
        raise _cli.UsageError(f"schema file {args.schema!r} does not exist.")
    if args.output == "-" and args.json:
        raise _cli.UsageError("-o - writes the published table on stdout, where --json writes its document: "
                              "give -o a file name, or leave out --json.")
    _cli.check_output(args.output, [args.data, *_schema_inputs(args.schema)], force=args.force)
    _cli.check_output(getattr(args, "risk_histogram", None), [args.data, *_schema_inputs(args.schema), args.output],
                      force=args.force, option="--risk-histogram")
    report = sys.stderr if args.output == "-" else out  # the published table owns stdout with -o -
    notes: list[str] = []
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    with Progress(5, f"anoncore anonymize --algorithm {alg.name}") as bar:
        bar.set_step("reading the schema and the data")
        t0 = time.perf_counter()
        try:
            schema = Schema.from_toml(args.schema)
        except (ValueError, TypeError) as exc:
            raise _cli.UsageError(f"invalid schema {args.schema!r}: {exc}") from None
        except Exception as exc:  # noqa: BLE001  (tomllib.TOMLDecodeError and friends)
            raise _cli.UsageError(f"cannot read schema {args.schema!r}: {exc}") from None
        table = _cli.read_table(args.data, schema, args, notes)
        try:
            specs = alg.models(table, args)
        except (ValueError, TypeError) as exc:
            raise _cli.UsageError(str(exc)) from None
        for spec in specs:
            if spec.name == "k" and spec.params[0] > table.n_rows:
                what = f"--model {spec.text}" if "model" in alg.needs else f"-k {spec.params[0]}"
                raise _cli.UsageError(f"{what} is larger than the table ({table.n_rows} rows): no class could be "
                                      f"published.")
        timings["load"] = time.perf_counter() - t0
        step = f"running {alg.name}"
        if "model" in alg.needs and all(table.hierarchy(q) is not None for q in table.quasi_identifiers):
            from anoncore.static.lattice import lattice_size

            size = lattice_size([table.hierarchy(q).height for q in table.quasi_identifiers])
            step += f" on a lattice of {size:,} nodes (no ETA: the search reports no progress)"
        bar.advance(step=step)
        t0 = time.perf_counter()
        result = alg.run(table, args)
        timings["algorithm"] = time.perf_counter() - t0
        partition = result.partition
        bar.advance(step="auditing the output")
        audit_dict = _cli._run_audit(table, partition, specs, notes, timings, report=getattr(result, "audit", None))
        passed = None if audit_dict is None else bool(audit_dict["passed"])
        if partition.n_suppressed == table.n_rows:
            notes.append("every row was suppressed: nothing is published (lower k or the other parameters)")
            passed = False
        bar.advance(step="measuring information loss")
        metrics = _cli._run_metrics(table, partition, notes, timings) if not args.no_metrics else None
        t0 = time.perf_counter()
        risk = _risk.profiles(table, partition, args)  # the risk before and after (anoncore.risk)
        _risk.finish(risk, args)
        timings["risk"] = time.perf_counter() - t0
        bar.advance(step="publishing")
        t0 = time.perf_counter()
        written = None
        if args.output is not None:
            if passed is False:  # never publish what the audit rejected
                notes.append(f"the audit failed: {args.output} was not written")
            else:
                _write_published(partition, args.output, args.include_suppressed, out, args.threads)
                written = args.output
        head = _cli._readable(_cli._published_head(partition, args.head))
        timings["publish"] = time.perf_counter() - t0
        bar.advance()
    timings["total"] = time.perf_counter() - t_all
    counts = _cli._counts(table, partition)
    levels = getattr(partition, "levels", None)
    part_info: dict[str, Any] = {"source": "algorithm", "algorithm": result.algorithm,
                                 "levels": None if levels is None else [int(x) for x in levels],
                                 "output": written}
    stats = {k: v for k, v in result.stats.items() if isinstance(v, (int, float, str, bool))}
    if args.json:
        res = {"table": _cli._table_summary(table), "partition": part_info, "counts": counts,
               "guarantees": _cli._guarantees(counts, audit_dict), "metrics": metrics,
               "achieved": result.achieved, "algorithm_stats": stats,
               "published_head": head.astype(object).to_dict(orient="records"), "timings": timings, "notes": notes,
               "risk": _risk.section_dict(risk, args)}
        params = {"data": args.data, "schema": args.schema, "algorithm": alg.name,
                  "algorithm_parameters": result.parameters, "models": [s.to_dict() for s in specs],
                  "seed": args.seed, "output": args.output, "include_suppressed": args.include_suppressed}
        out.write(json.dumps(_cli._document("anonymize", params, res), allow_nan=False) + "\n")
    else:
        _cli._print_text(report, f"anoncore {_cli._version()} anonymize {args.data} with {alg.name}", table,
                         counts, part_info, audit_dict, _cli._report_text(audit_dict), metrics, timings, notes, head)
        report.write(_risk.section_text(risk))
        if written is not None and written != "-":
            report.write(f"Published table written to {written}\n")
    return 1 if passed is False else 0


def register(sub: Any) -> None:
    """Add the ``anonymize`` subcommand to ``sub``."""
    add_arguments(
        sub.add_parser("anonymize", help="anonymize a CSV file with one algorithm and audit the output",
                       description="Run a static anonymization algorithm (full-domain lattice search, SABRE, "
                                   "Mondrian, ...) on a CSV file, audit the published partition against the "
                                   "privacy models it must satisfy, and write the published table. Exit code 1 "
                                   "when the audit fails."),
        _cli.models_help())
