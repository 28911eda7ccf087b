"""``anoncore risk``: re-identification risk of a table (or of a full-domain generalization of it).

Also holds the risk section that ``anoncore anonymize`` adds to its report (before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any, TextIO

from anoncore.cli import _common as _cli

_threshold_arg = _cli._float("--risk-threshold", 0.0, 1.0)
_population_arg = _cli._float("--population-size", 1.0, float("inf"))


def add_risk_arguments(p: argparse.ArgumentParser, prefix: str = "--risk-") -> None:
    """The options of the risk analysis (shared with ``anonymize``)."""
    p.add_argument(f"{prefix}threshold", dest="risk_threshold", type=_threshold_arg, default=0.2, metavar="RISK",
                   help="a record is at risk above this re-identification risk (default 0.2: classes below 5)")
    p.add_argument("--population-size", type=_population_arg, default=None, metavar="N",
                   help="records in the population the data were sampled from: adds population uniqueness")
    p.add_argument("--estimator", choices=("dankar", "pitman", "zayatz", "snb"), default="dankar",
                   help="population uniqueness estimator (default: Dankar et al.'s decision rule)")
    p.add_argument(f"{prefix}histogram", dest="risk_histogram", default=None, metavar="OUT.png",
                   help="write a histogram of the record risks as PNG (needs matplotlib)")


def profiles(table: Any, partition: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Risk profiles of the input table and (when given) of the published partition."""
    from anoncore.risk import risk_profile

    kw = {"threshold": args.risk_threshold, "population_size": _pop(args, table), "estimator": args.estimator,
          "compare_estimators": True}
    out = {"before": risk_profile(table, **kw)}
    if partition is not None:
        out["after"] = risk_profile(partition, **kw)
    return out


def _pop(args: argparse.Namespace, table: Any) -> float | None:
    N = args.population_size
    if N is not None and N < table.n_rows:
        raise _cli.UsageError(f"--population-size {N:g} is smaller than the {table.n_rows} records of the data.")
    return N  # type: ignore[no-any-return]


def write_histogram(profs: dict[str, Any], path: str) -> None:
    """Bar chart of the records per risk bin, one bar group per profile."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise _cli.UsageError("--risk-histogram needs matplotlib: pip install 'anoncore[plot]'.") from None
    import numpy as np

    from anoncore.risk import HISTOGRAM_EDGES

    e = HISTOGRAM_EDGES
    labels = [f"({e[i]:.3g}, {e[i + 1]:.3g}]" for i in range(len(e) - 1)]
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(10, 4))
    w = 0.8 / max(1, len(profs))
    for i, (name, p) in enumerate(profs.items()):
        ax.bar(x + i * w, 100.0 * p.histogram / max(p.n_records, 1), width=w, label=name)
    ax.set_xticks(x + w * (len(profs) - 1) / 2)
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    ax.set_xlabel("prosecutor re-identification risk of a record (1 / class size)")
    ax.set_ylabel("% of published records")
    ax.legend()
    fig.tight_layout()
    with _cli.atomic_output(path, "wb") as fh:  # never half written
        fig.savefig(fh, dpi=100, format="png")
    plt.close(fig)


def section_dict(profs: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    d: dict[str, Any] = {k: v.to_dict() for k, v in profs.items()}
    d["histogram_png"] = args.risk_histogram
    return d


def section_text(profs: dict[str, Any]) -> str:
    parts = ["\nRe-identification risk:"]
    for name, p in profs.items():
        parts.append(f"  [{name}] " + str(p).replace("\n", "\n  "))
    return "\n".join(parts) + "\n"


def finish(profs: dict[str, Any], args: argparse.Namespace) -> None:
    if args.risk_histogram is not None:
        folder = os.path.dirname(os.path.abspath(args.risk_histogram))
        if not os.path.isdir(folder):
            raise _cli.UsageError(f"the folder of --risk-histogram {args.risk_histogram!r} does not exist.")
        write_histogram(profs, args.risk_histogram)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore risk``."""
    from anoncore.data.schema import Schema
    from anoncore.data.table import Table
    from anoncore.results import Partition
    from anoncore.risk import quasi_identifier_analysis

    if not os.path.exists(args.data):
        raise _cli.UsageError(f"data file {args.data!r} does not exist.")
    if not os.path.exists(args.schema):
        raise _cli.UsageError(f"schema file {args.schema!r} does not exist.")
    _cli.check_output(args.risk_histogram, [args.data, args.schema], force=args.force, option="--histogram")
    t_all = time.perf_counter()
    try:
        schema = Schema.from_toml(args.schema)
    except (ValueError, TypeError) as exc:
        raise _cli.UsageError(f"invalid schema {args.schema!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001  (tomllib.TOMLDecodeError and friends)
        raise _cli.UsageError(f"cannot read schema {args.schema!r}: {exc}") from None
    table = Table.from_csv(args.data, schema, sep=args.sep)
    if not table.quasi_identifiers:
        raise _cli.UsageError(f"the schema {args.schema!r} declares no quasi-identifier.")
    partition = None
    if args.levels is not None:
        qis = table.quasi_identifiers
        if len(args.levels) != len(qis):
            raise _cli.UsageError(f"--levels needs {len(qis)} values (one per quasi-identifier {list(qis)}). "
                                  f"Got {len(args.levels)}.")
        try:
            partition = Partition.from_levels(table, args.levels)
        except (ValueError, TypeError) as exc:
            raise _cli.UsageError(str(exc)) from None
    t0 = time.perf_counter()
    profs = profiles(table, partition, args)
    timings = {"risk": time.perf_counter() - t0}
    qi = None
    if args.qi_analysis:
        t0 = time.perf_counter()
        qi = quasi_identifier_analysis(table, max_size=min(args.qi_max_size, len(table.quasi_identifiers)))
        timings["qi_analysis"] = time.perf_counter() - t0
    finish(profs, args)
    timings["total"] = time.perf_counter() - t_all
    if args.json:
        res = {"table": _cli._table_summary(table), "levels": args.levels, "risk": section_dict(profs, args),
               "quasi_identifiers": None if qi is None else [q.to_dict() for q in qi], "timings": timings}
        params = {"data": args.data, "schema": args.schema, "sep": args.sep, "levels": args.levels,
                  "threshold": args.risk_threshold, "population_size": args.population_size,
                  "estimator": args.estimator, "qi_analysis": args.qi_analysis}
        out.write(json.dumps(_cli._document("risk", params, res), allow_nan=False) + "\n")
        return 0
    out.write(f"anoncore {_cli._version()} risk of {args.data} ({table.n_rows:,} rows, quasi-identifiers "
              f"{list(table.quasi_identifiers)})\n")
    out.write(section_text(profs))
    if qi is not None:
        out.write("\nQuasi-identifier analysis (best first):\n")
        out.write(f"  {'separation':>10}  {'distinction':>11}  attributes\n")
        out.writelines(f"  {q.separation:>10.6f}  {q.distinction:>11.6f}  {', '.join(q.attributes)}\n" for q in qi[:20])
    if args.risk_histogram is not None:
        out.write(f"\nRisk histogram written to {args.risk_histogram}\n")
    return 0


def register(sub: Any) -> None:
    """Add the ``risk`` subcommand to ``sub``."""
    p = sub.add_parser("risk", help="re-identification risk of a table (prosecutor, journalist, marketer)",
                       description="Re-identification risk of a CSV file under the prosecutor, journalist and "
                                   "marketer attacker models, sample and (with --population-size) population "
                                   "uniqueness, and optionally the quasi-identifier analysis. With --levels the "
                                   "risk of that full-domain generalization is reported too.")
    p.add_argument("data", metavar="DATA", help="CSV file (',' or ';' separated, may be .gz) with a header")
    p.add_argument("--schema", required=True, metavar="SCHEMA.toml", help="schema file (roles, kinds, hierarchies)")
    p.add_argument("--levels", type=_cli._levels_arg, default=None,
                   help="also the risk after this full-domain generalization: 1,0,2,...")
    add_risk_arguments(p, prefix="--")
    p.add_argument("--qi-analysis", action="store_true",
                   help="rank combinations of the quasi-identifiers by separation and distinction")
    p.add_argument("--qi-max-size", type=_cli._positive_int_arg, default=3, metavar="S",
                   help="largest combination of the QI analysis (default 3)")
    p.add_argument("--sep", default=None, help="field separator of DATA (default: detected from the header)")
    p.add_argument("--json", action="store_true", help="print one JSON document (schema in docs/cli.md)")
    _cli.add_force_argument(p)
