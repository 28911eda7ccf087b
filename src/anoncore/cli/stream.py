"""``anoncore stream``: anonymize a stream of CSV / JSON-lines tuples (CASTLE, SABRE_W).

The stream command owns its own error handling and checkpointing (:mod:`anoncore.stream._cli`); this module
only registers it with the ``anoncore`` parser.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    """Add the ``stream`` subcommand to ``sub``."""
    from anoncore.stream._cli import build_parser

    build_parser(sub.add_parser("stream", help="anonymize a stream of CSV / JSON-lines tuples (CASTLE; "
                                "docs/castle.md)"))


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore stream`` on the arguments that follow the command name."""
    from anoncore.stream._cli import cli_main

    return cli_main(args.command_argv, stdout=out)
