"""The ``anoncore`` command line.

One module per command (:mod:`anoncore.cli.demo`, :mod:`~anoncore.cli.audit`, :mod:`~anoncore.cli.anonymize`,
:mod:`~anoncore.cli.stream`, :mod:`~anoncore.cli.temporal`, :mod:`~anoncore.cli.sequence`), each with
``register(sub)``, which adds its subparser, and ``run(args, out) -> int``; the pieces they share live in
:mod:`anoncore.cli._common`. A new command is a new module and one entry of :data:`COMMANDS`.

Every command takes ``--json`` and then prints exactly one JSON document on stdout, whose layout is
documented (and versioned by :data:`SCHEMA_VERSION`) in ``docs/cli.md``. Without ``--json`` the output is a
readable report. Progress is drawn on stderr only when stderr is a terminal.

Exit codes: 0 success (for ``audit``: every model passed), 1 an audited model failed or the work could not
be done, 2 bad arguments, 130 interrupted (Ctrl-C). Every output file is written to a temporary file in its
folder and renamed when complete (:func:`anoncore.cli._common.atomic_output`), an output that is an input is
refused and an existing one is overwritten only with ``--force``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import TextIO

from anoncore.cli._common import (
    MODEL_SPECS,
    SCHEMA_VERSION,
    ModelSpec,
    UsageError,
    _version,
    parse_model_spec,
)

__all__ = ["COMMANDS", "MODEL_SPECS", "SCHEMA_VERSION", "ModelSpec", "build_parser", "main", "parse_model_spec"]

#: The commands, in the order ``anoncore --help`` lists them (module names under ``anoncore.cli``).
COMMANDS = ("demo", "audit", "anonymize", "risk", "temporal", "sequence", "stream", "release", "graph")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``anoncore`` command."""
    p = argparse.ArgumentParser(prog="anoncore", description="Privacy-preserving data publishing: audit "
                                "anonymized tables and try the library on a synthetic census.")
    p.add_argument("--version", action="version", version=f"anoncore {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"anoncore.cli.{name}").register(sub)
    return p


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failed audit or error, 2 bad arguments)."""
    out = stdout if stdout is not None else sys.stdout
    argv = list(argv) if argv is not None else sys.argv[1:]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed its message (or --help / --version)
        return int(exc.code) if isinstance(exc.code, int) else 2
    args.command_argv = argv[argv.index(args.command) + 1:]
    sub = f"{parser.prog} {args.command}"
    try:
        return int(importlib.import_module(f"anoncore.cli.{args.command}").run(args, out))
    except UsageError as exc:
        sys.stderr.write(f"{sub}: error: {exc}\n")
        return 2
    except (ValueError, TypeError, RuntimeError, OSError) as exc:
        sys.stderr.write(f"{sub}: error: {exc}\n")
        return 1
    except MemoryError:
        sys.stderr.write(f"{sub}: error: out of memory: the input or a size parameter (a window, k, a lattice) is too "
                         f"large for this machine\n")
        return 1
    except KeyboardInterrupt:  # Ctrl-C: outputs are written to a temporary file first, so none is half written
        sys.stderr.write(f"{sub}: interrupted; no output file was replaced or left half written\n")
        return 130
