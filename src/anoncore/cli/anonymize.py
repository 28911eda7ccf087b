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

__all__ = ["ALGORITHMS", "Algorithm", "add_arguments", "register", "register_algorithm", "run"]

LATTICE_METRICS = ("loss", "dm", "dm_star", "entropy", "entropy_nm", "precision", "precision_nm", "height")


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
        from anoncore.static.lattice import lattice_search

        models = [s.build() for s in args.model]
        return lattice_search(table, models, suppression_limit=args.suppression_limit, metric=args.metric,
                              strategy=strategy, n_threads=args.threads)

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
    p.add_argument("data", metavar="DATA", help="CSV file (',' or ';' separated, may be .gz) with a header")
    p.add_argument("--schema", required=True, metavar="SCHEMA.toml", help="schema file (roles, kinds, hierarchies)")
    p.add_argument("--algorithm", required=True, choices=sorted(ALGORITHMS), help=algs)
    p.add_argument("--model", type=_cli._model_arg, action="append", default=[],
                   help="lattice algorithms: privacy model to satisfy, repeatable. " + models_help)
    p.add_argument("--suppression-limit", type=_fraction_arg, default=0.0, metavar="FRACTION",
                   help="lattice algorithms: largest fraction of rows that may be suppressed (default 0)")
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
                   help="write the published table here (suppressed rows left out unless --include-suppressed)")
    p.add_argument("--include-suppressed", action="store_true",
                   help="with --output: keep suppressed rows, their quasi-identifiers shown as '*'")
    p.add_argument("--head", type=_cli._nonneg_int_arg, default=10, help="published rows to show (default 10)")
    p.add_argument("--sep", default=None, help="field separator of DATA (default: detected from the header)")
    p.add_argument("--no-metrics", action="store_true", help="skip the information-loss metrics")
    p.add_argument("--json", action="store_true", help="print one JSON document (schema in docs/cli.md)")
    _risk.add_risk_arguments(p)


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


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore anonymize``; exit code 0 when the audit passed, 1 otherwise."""
    from anoncore._progress import Progress
    from anoncore.data.schema import Schema
    from anoncore.data.table import Table

    alg = ALGORITHMS[args.algorithm]
    _check_needs(alg, args)
    if not os.path.exists(args.data):
        raise _cli.UsageError(f"data file {args.data!r} does not exist.")
    if not os.path.exists(args.schema):
        raise _cli.UsageError(f"schema file {args.schema!r} does not exist.")
    if args.output is not None and os.path.dirname(os.path.abspath(args.output)) and \
            not os.path.isdir(os.path.dirname(os.path.abspath(args.output))):
        raise _cli.UsageError(f"the folder of --output {args.output!r} does not exist.")
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
        table = Table.from_csv(args.data, schema, sep=args.sep)
        try:
            specs = alg.models(table, args)
        except (ValueError, TypeError) as exc:
            raise _cli.UsageError(str(exc)) from None
        timings["load"] = time.perf_counter() - t0
        bar.advance(step=f"running {alg.name}")
        t0 = time.perf_counter()
        result = alg.run(table, args)
        timings["algorithm"] = time.perf_counter() - t0
        partition = result.partition
        bar.advance(step="auditing the output")
        audit_dict = _cli._run_audit(table, partition, specs, notes, timings, report=result.audit)
        bar.advance(step="measuring information loss")
        metrics = _cli._run_metrics(table, partition, notes, timings) if not args.no_metrics else None
        t0 = time.perf_counter()
        risk = _risk.profiles(table, partition, args)  # the risk before and after (anoncore.risk)
        _risk.finish(risk, args)
        timings["risk"] = time.perf_counter() - t0
        bar.advance(step="publishing")
        t0 = time.perf_counter()
        if args.output is not None:
            df = _cli._readable(partition.to_pandas(include_suppressed=args.include_suppressed))
            df.to_csv(args.output, index=False)
        head = _cli._readable(_cli._published_head(partition, args.head))
        timings["publish"] = time.perf_counter() - t0
        bar.advance()
    timings["total"] = time.perf_counter() - t_all
    counts = _cli._counts(table, partition)
    levels = getattr(partition, "levels", None)
    part_info: dict[str, Any] = {"source": "algorithm", "algorithm": result.algorithm,
                                 "levels": None if levels is None else [int(x) for x in levels],
                                 "output": args.output}
    passed = None if audit_dict is None else bool(audit_dict["passed"])
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
        _cli._print_text(out, f"anoncore {_cli._version()} anonymize {args.data} with {alg.name}", table, counts,
                         part_info, audit_dict, _cli._report_text(audit_dict), metrics, timings, notes, head)
        out.write(_risk.section_text(risk))
        if args.output is not None:
            out.write(f"Published table written to {args.output}\n")
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
