"""``anoncore temporal``: reposition a temporal stream so every snapshot is l-eligible.

``anoncore temporal INPUT.csv --ts COL --sa COL --l 4 --w 7 [--mu quadratic] [--beta 1]
[--mode corrected] [--first-window warmup] [--anatomy] -o OUT.csv``.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from anoncore.cli._common import add_force_argument, check_output, write_csv

__all__ = ["build_parser", "register", "run"]


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """Add the temporal options to ``parser`` (or a new one)."""
    p = parser or argparse.ArgumentParser(
        prog="anoncore temporal",
        description="Reposition a temporal stream so that every snapshot is l-eligible (Wang et al., ICDE 2010).",
    )
    p.add_argument("input", help="CSV file with one row per record (or 'demo' for a synthetic stream)")
    p.add_argument("--ts", default="ts", help="integer time-instant column (default: ts)")
    p.add_argument("--sa", default="sa", help="sensitive attribute column (default: sa)")
    p.add_argument("--l", type=int, required=True, help="diversity parameter l >= 2")
    p.add_argument("--w", type=int, required=True, help="window size = maximum publication delay")
    p.add_argument("--mu", default="linear", choices=["linear", "quadratic", "cubic", "exponential"])
    p.add_argument("--beta", type=float, default=1.0, help="suppression cost (same for every SA value)")
    p.add_argument("--mode", default="corrected", choices=["corrected", "paper_faithful"])
    p.add_argument("--first-window", default="warmup", choices=["warmup", "milp"])
    p.add_argument("--anatomy", action="store_true", help="write Anatomy QIT/ST tables (OUT.qit.csv, OUT.st.csv)")
    p.add_argument("-o", "--output", required=True, help="output CSV (input rows + published_ts, suppressed)")
    add_force_argument(p)
    return p


def register(sub: Any) -> None:
    """Add the ``temporal`` subcommand to ``sub``."""
    build_parser(sub.add_parser("temporal", help="reposition a temporal stream so every snapshot is "
                                "l-eligible, then publish it (docs/temporal.md)"))


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore temporal``; returns the exit status.

    Examples
    --------
    >>> import tempfile, os
    >>> from anoncore.cli import main
    >>> out = os.path.join(tempfile.mkdtemp(), "out.csv")
    >>> main(["temporal", "demo", "--l", "3", "--w", "3", "-o", out])  # doctest: +ELLIPSIS
    2400 records, ... suppressed ...
    0
    """
    import numpy as np
    import pandas as pd

    from anoncore.temporal._anatomy import anatomize_stream
    from anoncore.temporal._stream import reposition_stream
    from anoncore.temporal._synthetic import make_temporal_stream

    outputs = [args.output]
    if args.anatomy:
        base = args.output.removesuffix(".csv")
        outputs += [base + ".qit.csv", base + ".st.csv"]
    for path in outputs:
        check_output(path, [args.input], force=args.force)
    if args.input == "demo":
        df = make_temporal_stream(60, 40, 8, rng=0, with_qi=True)
    else:
        df = pd.read_csv(args.input)
    for col in (args.ts, args.sa):
        if col not in df.columns:
            raise ValueError(f"Unknown column {col!r}; the input has columns {list(df.columns)!r}.")
    order = np.argsort(df[args.ts].to_numpy(), kind="stable")
    df = df.iloc[order].reset_index(drop=True)
    codes, uniques = pd.factorize(df[args.sa], sort=True)
    res = reposition_stream(
        df[args.ts].to_numpy().astype(np.int64), codes.astype(np.int32), l=args.l, w=args.w, mu=args.mu,
        beta=args.beta, mode=args.mode, first_window=args.first_window, n_sa=max(1, len(uniques)),
    )
    published = df.copy()
    published["published_ts"] = res.published_ts
    published["suppressed"] = res.suppressed
    write_csv(published, args.output)
    if args.anatomy:
        qi = df.drop(columns=[args.ts, args.sa])
        rel = anatomize_stream(res, qi=qi)
        st = rel.st.assign(sa=np.asarray(uniques)[rel.st["sa"].to_numpy()])
        write_csv(rel.qit, outputs[1])
        write_csv(st, outputs[2])
    out.write(
        f"{len(df)} records, {res.n_suppressed} suppressed ({100 * res.suppression_rate:.2f}%), "
        f"IL {res.information_loss:g}, max shift {int(res.shift.max()) if res.shift.size else 0}\n"
    )
    return 0
