#!/usr/bin/env python3
"""Check the size rules of the C++ sources: no file over 1,000 lines, no function over 150 lines.

Usage: ``python tools/check_rooms.py [--max-file N] [--max-function N] [PATH ...]`` (default path: ``csrc``).
Every ``.cpp``/``.hpp``/``.h``/``.cc`` file under the paths is read; comments, string and character literals
and preprocessor lines are blanked out, then every ``{`` whose head (the text back to the previous ``;``,
``{`` or ``}`` outside parentheses) ends in a parameter list ``)`` -- after trailing qualifiers such as
``const``, ``noexcept``, ``override`` or ``-> T`` -- and does not start with a control keyword is a function
body (free functions, member functions, constructors, lambdas, ``PYBIND11_MODULE``). A function's length
counts the lines from the first line of its head to its closing brace, both included. Prints one line per
violation and exits 1 if there is any (2 if a file's braces do not balance), 0 otherwise.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

SUFFIXES = {".cpp", ".hpp", ".h", ".cc", ".cxx", ".hh"}
CONTROL = re.compile(r"^(?:else\s+)?(?:if|for|while|switch|catch|do|else|try|constexpr)\b")
QUALIFIER = re.compile(
    r"(?:\s+|(?<=\)))(?:const|noexcept|override|final|mutable|volatile|&&|&)\s*$"
    r"|\s*noexcept\s*\([^()]*\)\s*$"
    r"|\s*->\s*[\w:<>,\s*&]+$"
)


@dataclass(frozen=True)
class Function:
    path: str
    line: int  # first line of the head, 1-based
    length: int
    head: str


def blank(text: str) -> str:
    """Blank comments, literals and preprocessor lines, keeping every newline (and so the line numbers)."""
    out: list[str] = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(', text[i:i + 24])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def head_start(code: str, brace: int) -> int:
    """Index where the head of the block opened at ``brace`` starts (after the previous ; { } outside parens)."""
    depth = 0
    i = brace - 1
    while i >= 0:
        c = code[i]
        if c in ")]":
            depth += 1
        elif c in "([":
            if depth == 0:
                return i + 1
            depth -= 1
        elif c in ";{}" and depth == 0:
            return i + 1
        i -= 1
    return 0


def is_function_head(head: str) -> bool:
    h = " ".join(head.split())
    if not h or CONTROL.match(h):
        return False
    prev = None
    while prev != h:
        prev = h
        h = QUALIFIER.sub("", h).rstrip()
    return h.endswith(")") and "(" in h


def functions(path: Path) -> tuple[list[Function], bool]:
    """Function bodies of one file, and whether its braces balance."""
    text = path.read_text(encoding="utf-8", errors="replace")
    code = blank(text)
    line_of = [0] * (len(code) + 1)
    ln = 1
    for i, c in enumerate(code):
        line_of[i] = ln
        if c == "\n":
            ln += 1
    line_of[len(code)] = ln
    found: list[Function] = []
    stack: list[tuple[int, int | None]] = []  # (brace index, head start when a function)
    for i, c in enumerate(code):
        if c == "{":
            s = head_start(code, i)
            head = code[s:i]
            if is_function_head(head):
                while s < i and code[s].isspace():
                    s += 1
                stack.append((i, s))
            else:
                stack.append((i, None))
        elif c == "}":
            if not stack:
                return found, False
            _, s = stack.pop()
            if s is not None:
                first = line_of[s]
                found.append(Function(str(path), first, line_of[i] - first + 1,
                                      " ".join(code[s:code.find("{", s)].split())[:80]))
    return found, not stack


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=["csrc"])
    ap.add_argument("--max-file", type=int, default=1000)
    ap.add_argument("--max-function", type=int, default=150)
    ap.add_argument("--top", type=int, default=0, help="also list the N longest functions")
    args = ap.parse_args(argv)
    files: list[Path] = []
    for p in map(Path, args.paths):
        if p.is_dir():
            files += sorted(f for f in p.rglob("*") if f.suffix in SUFFIXES and f.is_file())
        elif p.is_file():
            files.append(p)
        else:
            print(f"check_rooms: no such file or directory: {p}", file=sys.stderr)
            return 2
    status = 0
    every: list[Function] = []
    for f in files:
        n_lines = len(f.read_text(encoding="utf-8", errors="replace").splitlines())
        if n_lines > args.max_file:
            print(f"{f}: {n_lines} lines (limit {args.max_file})")
            status = max(status, 1)
        found, balanced = functions(f)
        if not balanced:
            print(f"{f}: braces do not balance after blanking comments and literals; cannot check", file=sys.stderr)
            status = 2
        every += found
        for fn in found:
            if fn.length > args.max_function:
                print(f"{fn.path}:{fn.line}: function of {fn.length} lines (limit {args.max_function}): {fn.head}")
                status = max(status, 1)
    if args.top:
        for fn in sorted(every, key=lambda x: -x.length)[: args.top]:
            print(f"  {fn.length:5d}  {fn.path}:{fn.line}: {fn.head}")
    if status == 0:
        print(f"check_rooms: {len(files)} files, {len(every)} functions, none over the limits "
              f"({args.max_file} lines per file, {args.max_function} per function)")
    return status


if __name__ == "__main__":
    sys.exit(main())
