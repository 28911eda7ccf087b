"""``anoncore sequence``: sanitize users' event sequences from the command line.

::

    anoncore sequence INPUT --taxonomy TAXONOMY (--pattern A,B ... | --patterns FILE | --sample K)
                      --epsilon EPS --w W [--method top_down|bottom_up|brute_force] [...] [-o OUT.jsonl] [--json]

INPUT (a path, or ``-`` for stdin) is either a CSV with a header and one row per event (columns ``--user-col``,
``--event-col``, optionally ``--order-col``; rows of a user are kept in file order unless an order column is given)
or JSON lines ``{"user": ..., "events": [...]}``. The output is one JSON object per user (JSON lines). See
``docs/cli.md`` and ``docs/sequence.md``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
from typing import Any, TextIO

from anoncore.cli._common import (
    UsageError,
    _arg_from,
    _document,
    _float,
    _nonneg_int_arg,
    _positive_int_arg,
    add_force_argument,
    atomic_output,
    check_output,
)

__all__ = ["build_parser", "register", "run"]


class SequenceUsageError(UsageError):
    """Bad arguments found after parsing (a missing file, an unknown column): exit code 2."""


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """Add the ``sequence`` options to ``parser`` (or a new one)."""
    p = parser or argparse.ArgumentParser(prog="anoncore sequence")
    p.description = (
        "Publish each user's event sequence with every event replaced by a taxonomy ancestor so that the mutual "
        "information between the user's sensitive patterns and what is published is at most epsilon "
        "(Bonomi, Fan, Jin, WSDM 2016; docs/sequence.md)."
    )
    p.add_argument(
        "input", metavar="INPUT", help="events: CSV (one row per event) or JSON lines; '-' reads stdin"
    )
    p.add_argument(
        "--taxonomy",
        required=True,
        metavar="FILE",
        help="taxonomy: nested JSON {root: {category: [leaves...]}} (.json) or ARX rows "
        "leaf;level1;...;root (.csv, ';' or ',' separated)",
    )
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(
        "--pattern",
        action="append",
        metavar="A,B,...",
        help="a sensitive pattern (comma-separated events), repeatable; shared by all users",
    )
    g.add_argument(
        "--patterns",
        metavar="FILE",
        help="file with one sensitive pattern per line (events separated by ',' or whitespace)",
    )
    g.add_argument(
        "--sample",
        type=_positive_int_arg,
        metavar="K",
        help="sample K sensitive patterns per user among those with windowed frequency >= --f-min",
    )
    p.add_argument(
        "--epsilon", type=_arg_from(_float("--epsilon", 0.0, math.inf)), required=True, help="privacy level >= 0 (a fraction of H̃ unless --absolute)"
    )
    p.add_argument("--absolute", action="store_true", help="epsilon is absolute (in units of --log-base)")
    p.add_argument("--w", type=_positive_int_arg, required=True, help="window: an occurrence spans at most w positions")
    p.add_argument("--method", default="top_down", choices=["top_down", "bottom_up", "brute_force"])
    p.add_argument("--cost", default="linear", choices=["linear", "exponential", "iloss"])
    p.add_argument("--log-base", type=_arg_from(_float("--log-base", 1.0, math.inf, lo_open=True)), default=2.0, help="logarithm base of Ĩ and H̃ (default 2: bits)")
    p.add_argument(
        "--no-shortcut",
        action="store_true",
        help="Top-Down: do not start from Σ_S -> root (the paper's shortcut, on by default)",
    )
    p.add_argument(
        "--tie", default="last", choices=["last", "first"], help="Top-Down tie rule (default last)"
    )
    p.add_argument(
        "--distance", default="dg", choices=["dg", "delta_ul"], help="Bottom-Up distance (default dg)"
    )
    p.add_argument(
        "--counting",
        default="table",
        choices=["table", "scan"],
        help="evaluate f(h(p)) from the pair table (default) or by rescanning the sequence",
    )
    p.add_argument("--m", type=_positive_int_arg, default=2, help="pattern length with --sample (default 2)")
    p.add_argument("--f-min", type=_nonneg_int_arg, default=10, help="minimum frequency with --sample (default 10)")
    p.add_argument("--seed", type=_nonneg_int_arg, default=0, help="random seed for --sample (default 0)")
    p.add_argument(
        "--format",
        default="auto",
        choices=["auto", "csv", "jsonl"],
        help="input format (default: jsonl for .jsonl/.json/.ndjson files, else csv)",
    )
    p.add_argument("--user-col", default="user", help="CSV column / JSON key of the user id (default user)")
    p.add_argument(
        "--event-col",
        default="event",
        help="CSV column of the event (default event); JSON lines use the key 'events'",
    )
    p.add_argument("--order-col", default=None, help="CSV column to sort each user's events by (stable)")
    p.add_argument("--threads", type=_positive_int_arg, default=None, help="threads (default: all cores)")
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="OUT",
        help="write one JSON line per user to OUT ('-': stdout; default stdout without --json)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document (parameters, per-user records, summary) on stdout",
    )
    add_force_argument(p)
    return p


# ---------------------------------------------------------------------------------------------------------
def _open_text(path: str) -> TextIO:
    if path == "-":
        return io.StringIO(sys.stdin.read())
    if not os.path.isfile(path):
        raise SequenceUsageError(f"input file {path!r} does not exist")
    return open(path, newline="", encoding="utf-8")


def _read_taxonomy(path: str) -> Any:
    from anoncore.data.hierarchy import Hierarchy

    if not os.path.isfile(path):
        raise SequenceUsageError(f"taxonomy file {path!r} does not exist")
    if path.lower().endswith(".json"):
        with open(path, encoding="utf-8") as fh:
            try:
                tree = json.load(fh)
            except json.JSONDecodeError as exc:
                raise ValueError(f"taxonomy file {path!r} is not valid JSON: {exc}") from None
        return Hierarchy.from_nested(tree, name=os.path.basename(path))
    with open(path, newline="", encoding="utf-8") as fh:
        text = fh.read()
    first = text.splitlines()[0] if text.strip() else ""
    sep = ";" if first.count(";") >= first.count(",") else ","
    return Hierarchy.from_rows(
        list(csv.reader(io.StringIO(text), delimiter=sep)), name=os.path.basename(path)
    )


def _read_events(args: argparse.Namespace) -> tuple[list[str], list[list[str]], list[list[int]]]:
    """(user ids in first-appearance order, events per user, input line of every event)."""
    fmt = args.format
    if fmt == "auto":
        fmt = "jsonl" if args.input.lower().endswith((".jsonl", ".json", ".ndjson")) else "csv"
    users: dict[str, list[tuple[Any, int, str]]] = {}
    with _open_text(args.input) as fh:
        if fmt == "jsonl":
            for ln, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"line {ln} of {args.input!r} is not valid JSON: {exc}") from None
                if not isinstance(obj, dict) or args.user_col not in obj or "events" not in obj:
                    raise ValueError(
                        f"line {ln} of {args.input!r} must be a JSON object with keys {args.user_col!r} and "
                        f"'events'. Got {line.strip()[:80]!r}."
                    )
                ev = obj["events"]
                if not isinstance(ev, list):
                    raise TypeError(f"'events' on line {ln} of {args.input!r} must be a list of events.")
                uid = str(obj[args.user_col])
                lst = users.setdefault(uid, [])
                lst.extend((len(lst) + i, ln, str(e)) for i, e in enumerate(ev))
        else:
            reader = csv.DictReader(fh)
            cols = reader.fieldnames or []
            for c in [args.user_col, args.event_col] + ([args.order_col] if args.order_col else []):
                if c not in cols:
                    raise SequenceUsageError(f"unknown column {c!r}; {args.input!r} has columns {cols!r}")
            for ln, row in enumerate(reader, start=2):
                uid = row[args.user_col]
                key: Any = len(users.get(uid, ()))
                if args.order_col:
                    raw = row[args.order_col]
                    try:
                        key = float(raw)
                    except (TypeError, ValueError):
                        raise ValueError(
                            f"order column {args.order_col!r} on line {ln} of {args.input!r} must be a number. "
                            f"Got {raw!r}."
                        ) from None
                users.setdefault(uid, []).append((key, ln, row[args.event_col]))
    if not users:
        raise ValueError(f"{args.input!r} holds no event: at least one user sequence is required.")
    ids = list(users)
    ordered = [sorted(users[u], key=lambda t: (t[0], t[1])) for u in ids]
    return ids, [[e for _, _, e in o] for o in ordered], [[ln for _, ln, _ in o] for o in ordered]


def _check_symbols(
    ids: list[str], seqs: list[list[str]], lines: list[list[int]], tax: Any, where: str
) -> None:
    leaves = set(tax.leaves)
    for uid, s, lns in zip(ids, seqs, lines):
        for e, ln in zip(s, lns):
            if e not in leaves:
                raise ValueError(
                    f"event {e!r} of user {uid!r} on line {ln} of {where!r} is not a leaf of the taxonomy "
                    f"(leaves: {', '.join(sorted(leaves)[:8])}{', ...' if len(leaves) > 8 else ''})."
                )


def _parse_pattern(text: str, where: str) -> tuple[str, ...]:
    parts = [x.strip() for x in (text.split(",") if "," in text else text.split())]
    if not parts or any(x == "" for x in parts):
        raise ValueError(f"pattern {text!r} ({where}) must list events separated by ',' or whitespace.")
    return tuple(parts)


def _patterns(args: argparse.Namespace) -> Any:
    if args.sample is not None:
        return args.sample
    if args.pattern:
        return [_parse_pattern(t, "--pattern") for t in args.pattern]
    if not os.path.isfile(args.patterns):
        raise SequenceUsageError(f"patterns file {args.patterns!r} does not exist")
    with open(args.patterns, encoding="utf-8") as fh:
        out = [
            _parse_pattern(line.strip(), f"line {i} of {args.patterns!r}")
            for i, line in enumerate(fh, start=1)
            if line.strip() and not line.lstrip().startswith("#")
        ]
    if not out:
        raise ValueError(f"patterns file {args.patterns!r} lists no pattern.")
    return out


def _record(uid: str, seq: list[str], u: Any, tax: Any) -> dict[str, Any]:
    labels = tax.labels
    gen = u.generalization.tolist()
    # symbols of the sequence and of the patterns (the images of absent symbols are irrelevant)
    used = sorted({tax.leaf_code(e) for e in set(seq)} | {int(x) for x in u.patterns.ravel()})
    return {
        "user": uid,
        "map": {labels[a]: labels[gen[a]] for a in used if gen[a] != a},
        "sanitized": u.decode(tax),
        "mi": u.mi,
        "entropy": u.entropy,
        "epsilon": u.epsilon,
        "utility_loss": u.utility_loss,
        "normalized_utility_loss": u.normalized_utility_loss,
        "patterns": [[labels[x] for x in p] for p in u.patterns.tolist()],
        "pattern_counts": u.pattern_counts.tolist(),
        "n_embeddings": u.n_embeddings,
    }


def register(sub: Any) -> None:
    """Add the ``sequence`` subcommand to ``sub``."""
    build_parser(sub.add_parser("sequence", help="sanitize users' event sequences by taxonomy "
                                "generalization with mutual-information privacy (docs/sequence.md)"))


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore sequence``; returns the exit status (errors raise, :func:`anoncore.cli.main` maps them).

    Examples
    --------
    >>> import json, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> tax = os.path.join(d, "tax.json")
    >>> with open(tax, "w") as fh:
    ...     json.dump({"All": {"Alcohol": ["Wine", "Beer"], "Snack": ["Cookies", "Chips"],
    ...                        "Dairy": ["Milk", "Cheese"]}}, fh)
    >>> events = os.path.join(d, "events.jsonl")
    >>> with open(events, "w") as fh:
    ...     _ = fh.write(json.dumps({"user": "u1", "events": "Beer Chips Wine Cheese Beer Chips Milk Cookies "
    ...                              "Beer Chips Cookies Milk Wine Cheese Milk Chips".split()}) + "\\n")
    >>> import io
    >>> buf = io.StringIO()
    >>> from anoncore.cli import main
    >>> main(["sequence", events, "--taxonomy", tax, "--pattern", "Beer,Chips", "--pattern", "Wine,Cheese",
    ...           "--epsilon", "0.5", "--w", "2"], stdout=buf)
    0
    >>> rec = json.loads(buf.getvalue())
    >>> rec["map"], rec["utility_loss"], round(rec["mi"], 6)
    ({'Wine': 'All', 'Beer': 'All', 'Chips': 'All', 'Cheese': 'All'}, 11.0, 0.219486)
    """
    from anoncore.sequence.api import sanitize

    # Everything is read and validated before any work starts.
    check_output(args.output, [args.input, args.taxonomy, args.patterns], force=args.force)
    tax = _read_taxonomy(args.taxonomy)
    patterns = _patterns(args)
    ids, seqs, lines = _read_events(args)
    _check_symbols(ids, seqs, lines, tax, args.input)
    from anoncore._progress import Progress

    with Progress(None, "anoncore sequence") as bar:  # drawn on a terminal only
        bar.set_step(f"sanitizing {len(seqs):,} users ({args.method})")
        res = sanitize(
            seqs, tax, patterns, args.epsilon, args.w, method=args.method, rng=args.seed,
            relative=not args.absolute, cost=args.cost, log_base=args.log_base, m=args.m, f_min=args.f_min,
            sigma_s_shortcut=not args.no_shortcut, tie=args.tie, distance=args.distance, counting=args.counting,
            n_threads=args.threads,
        )  # fmt: skip
        bar.advance(step="writing")
    records = [_record(uid, s, u, tax) for uid, s, u in zip(ids, seqs, res.users)]
    lines_out = [json.dumps(r, ensure_ascii=False, allow_nan=False) for r in records]
    dest = args.output if args.output is not None else (None if args.json else "-")
    if dest == "-":
        out.write("".join(x + "\n" for x in lines_out))
    elif dest is not None:
        with atomic_output(dest) as fh:
            fh.writelines(x + "\n" for x in lines_out)
    ul = [r["normalized_utility_loss"] for r in records]
    summary = {
        "n_users": len(records),
        "n_events": int(sum(len(s) for s in seqs)),
        "mean_normalized_utility_loss": sum(ul) / len(ul),
        "n_users_within_epsilon": sum(
            1 for r in records if r["mi"] <= r["epsilon"] + 1e-12 * max(1.0, r["epsilon"])
        ),
        "seconds": res.stats["seconds"],
    }
    if args.json:
        params = {k: v for k, v in vars(args).items() if k not in ("json",)}
        out.write(
            json.dumps(
                _document("sequence", params, {"users": records, "summary": summary}),
                ensure_ascii=False,
                allow_nan=False,
            )
            + "\n"
        )
    elif dest not in (None, "-"):
        out.write(
            f"{summary['n_users']} users, {summary['n_events']} events, method {args.method}: mean UL/n "
            f"{summary['mean_normalized_utility_loss']:.4f}, {summary['n_users_within_epsilon']} within epsilon; "
            f"wrote {dest}\n"
        )
    return 0
