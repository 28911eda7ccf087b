"""``anoncore stream``: anonymize a stream of CSV or JSON-lines tuples with a registered stream algorithm.

The input is read in batches (``--batch-size`` rows) from a file or stdin; each batch is pushed into the
algorithm and the tuples it releases are written at once (JSON lines or CSV), so the output follows the input
as it arrives. At end of input the algorithm is flushed. Suppressed tuples are never published: they are
counted in the summary on stderr and listed (position, pid) with ``--suppressed FILE``.

Algorithms live in :data:`ALGORITHMS` (name -> :class:`StreamAlgorithm`); registering another one is one line::

    ALGORITHMS["sabre_w"] = StreamAlgorithm(make_sabre_w, SabreW.restore, (Option("t", float, ...), ...))
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import pandas as pd

from anoncore.stream._checkpoint import CheckpointFile, InputDigest

__all__ = ["ALGORITHMS", "Option", "StreamAlgorithm", "build_parser", "cli_main"]



@dataclass(frozen=True)
class Option:
    """One algorithm parameter exposed as ``--NAME`` (underscores become dashes)."""

    name: str
    type: Callable[[str], Any]
    default: Any = None
    help: str = ""
    required: bool = False


@dataclass(frozen=True)
class StreamAlgorithm:
    """A registered stream algorithm.

    ``factory(schema, rng=seed, **options)`` returns an object with ``push(DataFrame) -> release``,
    ``flush(**kw) -> release`` and ``checkpoint() -> bytes``; ``restore(bytes)`` rebuilds it. A release has
    ``position``, ``suppressed``, ``pid`` arrays and ``to_pandas(ranges=...)`` (the published tuples).
    """

    factory: Callable[..., Any]
    restore: Callable[[bytes], Any]
    options: tuple[Option, ...]
    description: str = ""
    flush_modes: tuple[str, ...] = ("drain",)


def _castle_factory(schema: Any, **kw: Any) -> Any:
    from anoncore.stream.castle import Castle

    return Castle(schema, **kw)


def _castle_restore(state: bytes) -> Any:
    from anoncore.stream.castle import Castle

    return Castle.restore(state)


def _sabre_w_factory(baseline: str) -> Callable[..., Any]:
    def make(schema: Any, **kw: Any) -> Any:
        from anoncore.stream.sabre_w import SabreW

        return SabreW(schema, baseline=baseline, **kw)
    return make


def _sabre_w_restore(state: bytes) -> Any:
    from anoncore.stream.sabre_w import SabreW

    return SabreW.restore(state)


def _unit_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1]. Got {text!r} instead.") from None
    if not 0.0 < v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1]. Got {text!r} instead.")
    return v


def _pos_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an int. Got {text!r} instead.") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0. Got {text!r} instead.")
    return v


ALGORITHMS: dict[str, StreamAlgorithm] = {
    "castle": StreamAlgorithm(
        _castle_factory, _castle_restore,
        (Option("k", _pos_int, None, "distinct persons per published class", required=True),
         Option("delta", _pos_int, None, "delay bound in arrivals", required=True),
         Option("eta", _pos_int, 50, "maximum open clusters (default 50)"),
         Option("mu", _pos_int, 100, "clusters averaged into the threshold tau (default 100)"),
         Option("l", _pos_int, None, "distinct l-diversity of the sensitive attribute"),
         Option("max_reuse", _pos_int, None, "bound on the reuse set (FIFO eviction; default unbounded)")),
        "CASTLE (Cao et al., IEEE TDSC 2011): k_s-anonymity (+ distinct l-diversity) under a delay bound",
        ("drain", "paper"),
    ),
}
_WINDOW_OPTIONS = (
    Option("k", _pos_int, None, "distinct persons per published class", required=True),
    Option("omega", _pos_int, None, "sabre_w: window size in tuples", required=True),
    Option("interval", _pos_int, None, "sabre_w: window slide I in tuples (omega must be a multiple)", required=True),
    Option("t", _unit_float, None, "sabre_w: closeness threshold in (0, 1]", required=True),
)
for _name, _baseline, _doc in (
    ("sabre_w", "sabre", "SABRE_W (Cao thesis ch. 6): (omega, t)-closeness + k_s-anonymity over sliding windows"),
    ("tmondrian_w", "tmondrian", "tMondrian_W: tMondrian in the SABRE_W window frame (baseline)"),
    ("tincognito_w", "tincognito", "tIncognito_W: tIncognito in the SABRE_W window frame (baseline)"),
):
    ALGORITHMS[_name] = StreamAlgorithm(_sabre_w_factory(_baseline), _sabre_w_restore, _WINDOW_OPTIONS, _doc)


# ---------------------------------------------------------------------------------------------- parser
def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """Add the stream options to ``parser`` (or a new one)."""
    p = parser or argparse.ArgumentParser(prog="anoncore stream")
    p.description = ("Anonymize a stream of tuples (CSV or JSON lines, from a file or stdin) and write the "
                     "released tuples as they are released (docs/castle.md).")
    p.add_argument("input", nargs="?", default="-", metavar="INPUT", help="input file, '-' for stdin (default)")
    p.add_argument("--algorithm", required=True, choices=sorted(ALGORITHMS), help="stream algorithm")
    s = p.add_argument_group("schema (either --schema or the column options)")
    s.add_argument("--schema", metavar="SCHEMA.toml", help="schema file (Schema.from_toml; numeric QI need domain)")
    s.add_argument("--numeric", action="append", default=[], metavar="NAME=LO:HI",
                   help="numeric quasi-identifier with its domain, repeatable")
    s.add_argument("--categorical", action="append", default=[], metavar="NAME=HIERARCHY.csv",
                   help="categorical quasi-identifier with its ARX-format hierarchy, repeatable")
    s.add_argument("--pid", metavar="COLUMN", help="person id column")
    s.add_argument("--time", metavar="COLUMN", help="integer position column (default: arrival order from 1)")
    s.add_argument("--sensitive", action="append", default=[], metavar="COLUMN",
                   help="sensitive attribute, published as is, repeatable")
    s.add_argument("--insensitive", action="append", default=[], metavar="COLUMN",
                   help="other attribute published as is, repeatable")
    s.add_argument("--hierarchy-sep", default=";", help="separator of hierarchy files (default ';')")
    a = p.add_argument_group("algorithm parameters")
    seen: dict[str, Option] = {}
    for alg in ALGORITHMS.values():
        for o in alg.options:
            if o.name not in seen:
                seen[o.name] = o
                a.add_argument(f"--{o.name.replace('_', '-')}", dest=f"opt_{o.name}", type=o.type, default=None,
                               metavar=o.name.upper(),
                               help=o.help)
    a.add_argument("--seed", type=_pos_int, default=0, help="random seed (default 0)")
    a.add_argument("--flush-mode", default="drain", choices=("drain", "paper"),
                   help="end of stream (default drain; 'paper' is CASTLE only; see docs/castle.md)")
    io = p.add_argument_group("input and output")
    io.add_argument("--input-format", choices=("csv", "jsonl"), default=None,
                    help="default: from the file name (.jsonl/.json -> jsonl), else csv")
    io.add_argument("--sep", default=",", help="CSV field separator (default ',')")
    io.add_argument("--batch-size", type=_pos_int, default=10_000, help="rows per push (default 10000)")
    io.add_argument("-o", "--output", default="-", help="output file, '-' for stdout (default)")
    io.add_argument("--output-format", choices=("jsonl", "csv"), default="jsonl", help="default jsonl")
    io.add_argument("--ranges", action="store_true",
                    help="numeric QI as <name>_lo/<name>_hi columns instead of labels like '[20, 60]'")
    io.add_argument("--suppressed", metavar="FILE", help="write the suppressed tuples (position, pid) as CSV")
    io.add_argument("--force", action="store_true",
                    help="overwrite an existing output file (an output that is an input is always refused)")
    io.add_argument("--checkpoint", metavar="FILE",
                    help="after every batch, save the state to FILE (and new person ids to FILE.keys); if FILE "
                         "exists at start, resume from it (same input, algorithm and parameters)")
    return p


def _schema_from_args(args: argparse.Namespace) -> Any:
    from anoncore.data.hierarchy import Hierarchy
    from anoncore.data.schema import Attribute, Schema

    if args.schema:
        if args.numeric or args.categorical or args.pid or args.time or args.sensitive or args.insensitive:
            raise _Usage("give either --schema or the column options (--numeric, --categorical, --pid, ...)")
        if not os.path.exists(args.schema):
            raise _Usage(f"schema file {args.schema!r} does not exist")
        return Schema.from_toml(args.schema)
    if not args.pid:
        raise _Usage("--pid is required without --schema (the stream's person id column)")
    attrs = []
    for spec in args.numeric:
        name, _, dom = spec.partition("=")
        lo, _, hi = dom.partition(":")
        try:
            d = (float(lo), float(hi))
        except ValueError:
            raise _Usage(f"--numeric expects NAME=LO:HI. Got {spec!r} instead.") from None
        if not name or not d[0] <= d[1]:
            raise _Usage(f"--numeric expects NAME=LO:HI with LO <= HI. Got {spec!r} instead.")
        attrs.append(Attribute(name, "quasi_identifier", "numeric", domain=d))
    for spec in args.categorical:
        name, _, path = spec.partition("=")
        if not name or not path:
            raise _Usage(f"--categorical expects NAME=HIERARCHY.csv. Got {spec!r} instead.")
        if not os.path.exists(path):
            raise _Usage(f"hierarchy file {path!r} of {name!r} does not exist")
        attrs.append(Attribute(name, "quasi_identifier", "categorical",
                               hierarchy=Hierarchy.from_arx_csv(path, sep=args.hierarchy_sep, name=name)))
    attrs += [Attribute(c, "sensitive") for c in args.sensitive]
    attrs += [Attribute(c, "insensitive") for c in args.insensitive]
    attrs.append(Attribute(args.pid, "pid", "numeric"))
    if args.time:
        attrs.append(Attribute(args.time, "time", "numeric"))
    return Schema(tuple(attrs))


class _Usage(ValueError):
    pass


def _check_output(path: str | None, inputs: list[str | None], **kw: Any) -> None:
    from anoncore.cli._common import UsageError, check_output

    try:
        check_output(path, inputs, **kw)
    except UsageError as exc:
        raise _Usage(str(exc)) from None


def _algorithm_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    alg = ALGORITHMS[args.algorithm]
    names = {o.name for o in alg.options}
    for key, val in vars(args).items():
        if key.startswith("opt_") and val is not None and key[4:] not in names:
            raise _Usage(f"--{key[4:].replace('_', '-')} is not a parameter of {args.algorithm}")
    kw: dict[str, Any] = {}
    for o in alg.options:
        v = getattr(args, f"opt_{o.name}")
        if v is None and o.required:
            raise _Usage(f"{args.algorithm} needs --{o.name.replace('_', '-')}")
        kw[o.name] = o.default if v is None else v
    if args.flush_mode not in alg.flush_modes:
        raise _Usage(f"--flush-mode {args.flush_mode} is not available for {args.algorithm} "
                     f"(choices: {', '.join(alg.flush_modes)})")
    kw["rng"] = args.seed
    return kw


# ---------------------------------------------------------------------------------------------- input/output
def _batches(args: argparse.Namespace, schema: Any) -> Generator[pd.DataFrame, None, None]:
    fmt = args.input_format or ("jsonl" if args.input.endswith((".jsonl", ".json", ".jsonl.gz")) else "csv")
    src: Any = sys.stdin if args.input == "-" else args.input
    if args.input != "-" and not os.path.exists(args.input):
        raise _Usage(f"input file {args.input!r} does not exist")
    size = max(1, args.batch_size)
    time_cols = schema.with_role("time")
    if fmt == "csv":
        with pd.read_csv(src, sep=args.sep, dtype=str, keep_default_na=False, na_values=[""], chunksize=size,
                         skipinitialspace=True) as reader:
            yield from _csv_chunks(reader, time_cols)
    else:
        with pd.read_json(src, lines=True, chunksize=size, dtype=False) as jreader:
            yield from jreader


def _csv_chunks(reader: Any, time_cols: Sequence[str]) -> Iterator[pd.DataFrame]:
    for chunk in reader:
        for c in time_cols:
            if c in chunk.columns:
                t = pd.to_numeric(chunk[c], errors="coerce")
                if t.isna().any() or (t != t.round()).any():
                    i = int((t.isna() | (t != t.round())).to_numpy().nonzero()[0][0])
                    raise ValueError(f"Position column {c!r} holds {chunk[c].iloc[i]!r}, not an integer "
                                     f"(input row {chunk.index[i] + 1}).")
                chunk[c] = t.astype("int64")
        yield chunk


class _Writer:
    """Output file. Without a checkpoint it is written to a temporary file next to ``path`` and renamed when the
    stream ends (an interrupted run leaves no half-written file); with one, it is written in place so that a
    resumed run can cut it back to its checkpointed length."""

    def __init__(self, path: str, fmt: str, offset: int | None, in_place: bool = False) -> None:
        self.fmt = fmt
        self.header = True
        self.stdout = path == "-"
        self.path = path
        self.tmp: str | None = None
        if self.stdout:
            self.fh: TextIO = sys.stdout
        elif offset is not None and os.path.exists(path):
            self.fh = open(path, "r+", encoding="utf-8", newline="")  # noqa: SIM115
            self.fh.truncate(offset)  # drop what was written after the checkpoint
            self.fh.seek(offset)
            self.header = offset == 0
        elif in_place:
            self.fh = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115
        else:
            import tempfile

            fd, self.tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".part",
                                            dir=os.path.dirname(os.path.abspath(path)))
            self.fh = os.fdopen(fd, "w", encoding="utf-8", newline="")

    def write(self, df: pd.DataFrame) -> None:
        if df.empty and not (self.fmt == "csv" and self.header and len(df.columns)):
            return
        if self.fmt == "jsonl":
            if not df.empty:
                self.fh.write(df.to_json(orient="records", lines=True, force_ascii=False).rstrip("\n") + "\n")
        else:
            df.to_csv(self.fh, index=False, header=self.header, lineterminator="\n")
            self.header = False
        self.fh.flush()

    def offset(self) -> int | None:
        return None if self.stdout else self.fh.tell()

    def close(self, commit: bool = True) -> None:
        if self.stdout:
            return
        self.fh.close()
        if self.tmp is not None:
            if commit:
                mask = os.umask(0)
                os.umask(mask)
                os.chmod(self.tmp, 0o666 & ~mask)
                os.replace(self.tmp, self.path)
            else:
                os.remove(self.tmp)


# ---------------------------------------------------------------------------------------------- main
def cli_main(argv: Sequence[str] | None = None, stdout: TextIO | None = None) -> int:
    """Run ``anoncore stream``; returns the exit code (0 ok, 1 bad data, 2 bad arguments).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> src = os.path.join(d, "in.csv")
    >>> with open(src, "w") as fh:
    ...     _ = fh.write("pid,age,disease\\n" + "".join(f"{i},{20 + i % 7},flu\\n" for i in range(12)))
    >>> out = os.path.join(d, "out.jsonl")
    >>> cli_main([src, "--algorithm", "castle", "--numeric", "age=0:100", "--pid", "pid",
    ...           "--sensitive", "disease", "--k", "3", "--delta", "5", "-o", out])
    0
    >>> sum(1 for _ in open(out))
    12
    """
    err = sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    if stdout is not None:
        sys_stdout, sys.stdout = sys.stdout, stdout
    try:
        return _run(args, err)
    except _Usage as exc:
        err.write(f"anoncore stream: error: {exc}\n")
        return 2
    except BrokenPipeError:  # the reader of stdout went away (e.g. `| head`): stop quietly, say so
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        err.write("anoncore stream: error: the output was closed (broken pipe); the stream stopped\n")
        return 1
    except (ValueError, TypeError, RuntimeError, OSError) as exc:
        err.write(f"anoncore stream: error: {exc}\n")
        return 1
    finally:
        if stdout is not None:
            sys.stdout = sys_stdout


def _run(args: argparse.Namespace, err: TextIO) -> int:
    schema = _schema_from_args(args)
    kw = _algorithm_kwargs(args)
    alg = ALGORITHMS[args.algorithm]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stream = alg.factory(schema, **kw)
    skip = 0
    out_offset = sup_offset = None
    resumed = False
    ck = CheckpointFile(args.checkpoint) if args.checkpoint else None
    options = json.loads(json.dumps(kw))
    head: dict[str, Any] = {}
    if ck is not None and ck.exists():
        head, state, keys = ck.load()
        _check_resume(args, head, options)
        stream = stream._resume(state, keys)
        skip, out_offset, sup_offset = int(head["rows"]), head["output_offset"], head["suppressed_offset"]
        if skip != stream.n_arrivals_:
            raise ValueError(f"checkpoint {args.checkpoint!r} is inconsistent: it records {skip} input rows but its "
                             f"state received {stream.n_arrivals_}.")
        _check_offset(args.output, out_offset, "output")
        _check_offset(args.suppressed, sup_offset, "--suppressed file")
        resumed = True
    else:
        err.writelines(f"anoncore stream: warning: {w.message}\n" for w in caught)
    inputs = [args.input, args.schema, *[c.partition("=")[2] for c in args.categorical]]
    for opt, path in (("-o/--output", args.output), ("--suppressed", args.suppressed)):
        _check_output(path, inputs + [args.checkpoint], force=args.force, option=opt, allow_existing=resumed)
    if args.output not in (None, "-") and args.suppressed and os.path.abspath(args.output) == \
            os.path.abspath(args.suppressed):
        raise _Usage("-o/--output and --suppressed name the same file")
    in_place = bool(args.checkpoint)
    writer = _Writer(args.output, args.output_format, out_offset if resumed else None, in_place)
    sup = _Writer(args.suppressed, "csv", sup_offset if resumed else None, in_place) if args.suppressed else None
    ok = False
    n_in = n_rel = n_sup = 0
    rows = 0
    digest = InputDigest()
    verified = not resumed

    def emit(rel: Any) -> None:
        nonlocal n_rel, n_sup
        writer.write(rel.to_pandas(ranges=args.ranges))
        n_rel += rel.n_released
        n_sup += rel.n_suppressed
        if sup is not None:
            m = rel.suppressed
            sup.write(pd.DataFrame({"position": rel.position[m], "pid": rel.pid[m]}))

    def verify() -> None:
        if digest.hexdigest() != head.get("input_digest"):
            raise ValueError(f"checkpoint {args.checkpoint!r} was made on another input: the digest of the first "
                             f"{skip} rows differs. Resume with the same input, or remove the checkpoint (and its "
                             f".keys file) to start again.")

    def save() -> None:
        assert ck is not None
        ck.save(stream, {"stream_algorithm": args.algorithm, "options": options, "rows": rows,
                         "input_digest": digest.hexdigest(), "output_offset": writer.offset(),
                         "suppressed_offset": None if sup is None else sup.offset()})

    from anoncore._progress import Progress

    bar = Progress(None, f"anoncore stream --algorithm {args.algorithm}: rows")  # drawn on a terminal only
    batches = _batches(args, schema)
    try:
        if not verified and skip == 0:
            verify()
            verified = True
        for df in batches:
            start = rows
            rows += len(df)
            if not verified:
                digest.update(df.iloc[:skip - start])
                if rows >= skip:
                    verify()
                    verified = True
                if rows <= skip:
                    continue
                df = df.iloc[skip - start:]
            try:
                rel = stream.push(df)
            except (ValueError, TypeError) as exc:
                first = max(start, skip) + 1
                pending = _pending(stream)
                if ck is not None:  # keep the state of the last good batch: fix the input and rerun to resume
                    what = f"the {pending} pending tuples stay in the checkpoint {args.checkpoint!r}"
                else:  # nothing is lost silently: release or suppress the tuples received so far
                    emit(_flush(stream, args))
                    what = f"the {pending} pending tuples were flushed (released or suppressed)"
                ok = True  # a reported stop: the output holds every tuple released so far
                raise ValueError(f"{exc} Input rows {first}-{rows} (this batch) were not consumed; "
                                 f"{what}.") from exc
            digest.update(df)
            n_in += len(df)
            emit(rel)
            bar.advance(len(df), step=f"{n_rel:,} released, {n_sup:,} suppressed")
            if ck is not None:
                save()
        if not verified:
            raise ValueError(f"checkpoint {args.checkpoint!r} consumed {skip} input rows but the input has only "
                             f"{rows}: it was made on another input.")
        if not getattr(stream, "closed_", False):
            emit(_flush(stream, args))
        if ck is not None:
            save()
        ok = True
    finally:
        bar.close()
        batches.close()
        writer.close(commit=ok)
        if sup is not None:
            sup.close(commit=ok)
    summary = {"algorithm": args.algorithm, "input_rows": n_in, "resumed_after_rows": skip if resumed else None,
               "released": n_rel, "suppressed": n_sup}
    err.write("anoncore stream: " + json.dumps(summary) + "\n")
    return 0


def _check_resume(args: argparse.Namespace, head: dict[str, Any], options: dict[str, Any]) -> None:
    """Refuse a checkpoint of another algorithm or made with other options than this run's."""
    if head.get("stream_algorithm") != args.algorithm:
        raise _Usage(f"checkpoint {args.checkpoint!r} is for {head.get('stream_algorithm')!r}, not {args.algorithm!r}")
    saved = head.get("options")
    if not isinstance(saved, dict) or saved != options:
        saved = saved if isinstance(saved, dict) else {}
        diff = ", ".join(f"--{k.replace('_', '-') if k != 'rng' else 'seed'} {saved.get(k)} (this run: {v})"
                         for k, v in options.items() if saved.get(k) != v)
        raise _Usage(f"checkpoint {args.checkpoint!r} was made with other parameters: {diff}. Resume with the same "
                     f"ones, or remove the checkpoint (and its .keys file) to start again")


def _check_offset(path: str | None, offset: Any, what: str) -> None:
    if path is None or path == "-" or offset is None:
        return
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"the checkpoint's {what} offset {offset!r} is not a byte offset.")
    size = os.path.getsize(path) if os.path.exists(path) else 0
    if offset > size:
        raise ValueError(f"the {what} {path!r} has {size} bytes, fewer than the {offset} the checkpoint recorded: "
                         f"it was changed since; remove the checkpoint to start again.")


def _flush(stream: Any, args: argparse.Namespace) -> Any:
    if len(ALGORITHMS[args.algorithm].flush_modes) > 1:
        return stream.flush(mode=args.flush_mode)
    return stream.flush()


def _pending(stream: Any) -> int:
    return int(getattr(stream, "n_pending_", 0))


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - python -m entry
    return cli_main(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
