"""``anoncore temporal``: reposition a temporal stream so every snapshot is l-eligible.

``anoncore temporal INPUT.csv --ts COL --sa COL --l 4 --w 7 [--mu quadratic] [--beta 1]
[--mode corrected] [--first-window warmup] [--anatomy] -o OUT.csv``.
"""

from __future__ import annotations

import argparse
import math
import os
from typing import Any, TextIO

from anoncore.cli._common import (
    UsageError,
    _arg_from,
    _float,
    add_force_argument,
    check_output,
    write_csv,
)

#: Largest window (--w) and largest span of time instants (last - first + 1) the command accepts: the stream is
#: processed one time instant at a time, with per-window arrays of w rows.
MAX_W = 1_000_000
MAX_SPAN = 50_000_000


def _int_at_least(low: int, name: str) -> Any:
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an int. Got {text!r}.") from None
        hi = MAX_W if name == "--w" else None
        if v < low or (hi is not None and v > hi):
            rng = f"[{low}, {hi:,}]" if hi is not None else f"[{low}, inf)"
            raise argparse.ArgumentTypeError(f"{name} must be an int in the range {rng}. Got {v}.")
        return v
    return parse


def _timestamps(df: Any, col: str, where: str) -> Any:
    """The time-instant column as int64, refusing empty, fractional or out-of-range values (with their line)."""
    import numpy as np
    import pandas as pd

    raw = df[col]
    num = pd.to_numeric(raw, errors="coerce")
    bad = num.isna().to_numpy() | ~np.isfinite(num.to_numpy(dtype=float, na_value=np.nan))
    vals = num.to_numpy(dtype=float, na_value=np.nan)
    bad |= np.where(bad, False, vals != np.round(vals))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"Time column {col!r} must hold integer time instants: line {i + 2} of {where} holds "
                         f"{raw.iloc[i]!r} ({int(bad.sum())} such rows).")
    ts = pd.to_numeric(raw, errors="raise")
    if ts.dtype.kind == "f":
        ts = ts.astype(np.int64)
    ts = ts.to_numpy(dtype=np.int64)
    span = int(ts.max()) - int(ts.min()) + 1 if ts.size else 0
    if span > MAX_SPAN:
        raise ValueError(f"The time instants of {col!r} span {span:,} instants ({int(ts.min())}..{int(ts.max())}), "
                         f"more than {MAX_SPAN:,}: the stream is processed one instant at a time, so number the "
                         f"instants consecutively (e.g. days since the first record).")
    return ts

__all__ = ["build_parser", "register", "run"]


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """Add the temporal options to ``parser`` (or a new one)."""
    p = parser or argparse.ArgumentParser(
        prog="anoncore temporal",
        description="Reposition a temporal stream so that every snapshot is l-eligible (Wang et al., ICDE 2010).",
    )
    p.add_argument("input", help="CSV file with one row per record (or 'demo' for a synthetic stream)")
    p.epilog = ("The output lists every input record with its published_ts and a suppressed flag; the sensitive "
                "value of a suppressed record is left empty.")
    p.add_argument("--ts", default="ts", help="integer time-instant column (default: ts)")
    p.add_argument("--sa", default="sa", help="sensitive attribute column (default: sa)")
    p.add_argument("--l", type=_int_at_least(2, "--l"), required=True, help="diversity parameter l >= 2")
    p.add_argument("--w", type=_int_at_least(1, "--w"), required=True,
                   help=f"window size = maximum publication delay, 1..{MAX_W:,}")
    p.add_argument("--mu", default="linear", choices=["linear", "quadratic", "cubic", "exponential"])
    p.add_argument("--beta", type=_arg_from(_float("--beta", 0.0, math.inf)), default=1.0,
                   help="suppression cost (same for every SA value), >= 0")
    p.add_argument("--mode", default="corrected", choices=["corrected", "paper_faithful"])
    p.add_argument("--first-window", default="warmup", choices=["warmup", "milp"])
    p.add_argument("--anatomy", action="store_true",
                   help="write Anatomy QIT/ST tables (OUT.qit.csv, OUT.st.csv); the QIT publishes the --qi columns only")
    p.add_argument("--qi", action="append", default=[], metavar="COLUMN",
                   help="quasi-identifier column published in the Anatomy QIT, repeatable (no other column is)")
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

    from anoncore._progress import Progress
    from anoncore.temporal._anatomy import anatomize_stream
    from anoncore.temporal._stream import reposition_stream
    from anoncore.temporal._synthetic import make_temporal_stream

    outputs = [args.output]
    if args.anatomy:
        base = args.output.removesuffix(".csv")
        outputs += [base + ".qit.csv", base + ".st.csv"]
    for path in outputs:
        check_output(path, [args.input], force=args.force)
    if args.ts == args.sa:
        raise UsageError(f"--ts and --sa name the same column {args.ts!r}: the time instant and the sensitive "
                         f"attribute must be different columns.")
    if args.first_window == "milp":
        try:
            import scipy.optimize  # noqa: F401
        except ImportError:
            raise UsageError("--first-window milp solves an integer program with scipy, which is not installed: "
                             "pip install 'anoncore[milp]' (or use the default --first-window warmup).") from None
    if args.input != "demo" and not os.path.exists(args.input):
        raise UsageError(f"input file {args.input!r} does not exist.")
    if args.input == "demo":
        df = make_temporal_stream(60, 40, 8, rng=0, with_qi=True)
    else:
        df = pd.read_csv(args.input, dtype=str, keep_default_na=False)
    cols = [str(c) for c in df.columns]
    for col in (args.ts, args.sa, *args.qi):
        if col not in cols:
            raise UsageError(f"unknown column {col!r}; the input has columns {cols!r}.")
    if args.anatomy and not args.qi:
        raise UsageError("--anatomy needs --qi COLUMN (repeatable): the quasi-identifiers published in the QIT; "
                         "no other column is published there.")
    if args.qi and not args.anatomy:
        raise UsageError("--qi is for --anatomy (the columns of its QIT).")
    where = "the demo stream" if args.input == "demo" else repr(args.input)
    ts = _timestamps(df, args.ts, where)
    sa_col = df[args.sa].astype(str).str.strip()
    empty = (sa_col == "").to_numpy() | df[args.sa].isna().to_numpy()
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise ValueError(f"Sensitive column {args.sa!r} is empty on line {i + 2} of {where} ({int(empty.sum())} "
                         f"such rows): every record needs a sensitive value.")
    order = np.argsort(ts, kind="stable")
    df = df.iloc[order].reset_index(drop=True)
    ts = ts[order]
    codes, uniques = pd.factorize(sa_col.iloc[order].reset_index(drop=True), sort=True)
    with Progress(None, "anoncore temporal") as bar:
        bar.set_step(f"repositioning {len(df):,} records (l={args.l}, w={args.w})")
        res = reposition_stream(
            ts, codes.astype(np.int32), l=args.l, w=args.w, mu=args.mu,
            beta=args.beta, mode=args.mode, first_window=args.first_window, n_sa=max(1, len(uniques)),
        )
        bar.advance(step="writing")
    published = df.copy()
    published["published_ts"] = res.published_ts
    published["suppressed"] = res.suppressed
    # a suppressed record is not published: its sensitive value is withheld
    published[args.sa] = np.where(res.suppressed, "", published[args.sa].astype(str))
    write_csv(published, args.output)
    if args.anatomy:
        qi = df[list(args.qi)]
        rel = anatomize_stream(res, qi=qi)
        st = rel.st.assign(sa=np.asarray(uniques)[rel.st["sa"].to_numpy()])
        write_csv(rel.qit, outputs[1])
        write_csv(st, outputs[2])
    out.write(
        f"{len(df)} records, {res.n_suppressed} suppressed ({100 * res.suppression_rate:.2f}%), "
        f"IL {res.information_loss:g}, max shift {int(res.shift.max()) if res.shift.size else 0}\n"
    )
    return 0
