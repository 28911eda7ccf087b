"""tools/check_rooms.py: finds C++ function bodies by brace matching and enforces the size rules."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rooms():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("check_rooms", ROOT / "tools" / "check_rooms.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["check_rooms"] = mod
    spec.loader.exec_module(mod)
    return mod


def _body(n: int) -> str:
    return "".join(f"  x += {i};\n" for i in range(n))


def test_finds_functions_and_their_lengths(rooms, tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = (
        "// a comment with { and } and f(x) {\n"
        "namespace a {\n"
        "struct S {\n"
        "  int g(int y) const noexcept { return y; }\n"
        "};\n"
        "int f(int x)\n"
        "{\n"
        f"{_body(10)}"
        '  const char* s = "}{ (";\n'
        "  for (int i = 0; i < 3; ++i) {\n"
        "    if (i) { x += i; } else { x -= i; }\n"
        "  }\n"
        "  auto h = [&](int z) -> int {\n"
        "    return z + 1;\n"
        "  };\n"
        "  return h(x);\n"
        "}\n"
        "}  // namespace a\n"
    )
    p = tmp_path / "a.cpp"
    p.write_text(src)
    found, balanced = rooms.functions(p)
    assert balanced
    by_line = {fn.line: fn.length for fn in found}
    # g (one line), f (lines 6..26), the lambda (lines 22..24); no control block, struct or namespace.
    assert by_line == {4: 1, 6: 26 - 6 + 1, 22: 3}


def test_reports_long_functions_and_files(rooms, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "ok.cpp").write_text("void ok() {\n" + _body(148) + "}\n")  # 150 lines
    assert rooms.main([str(tmp_path)]) == 0
    (tmp_path / "long.hpp").write_text("void too_long(int x) {\n" + _body(149) + "}\n")  # 151 lines
    assert rooms.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "long.hpp:1: function of 151 lines" in out and "ok.cpp" not in out
    (tmp_path / "long.hpp").unlink()
    (tmp_path / "big.cpp").write_text("int v;\n" * 1001)
    assert rooms.main([str(tmp_path)]) == 1
    assert "big.cpp: 1001 lines" in capsys.readouterr().out


def test_unbalanced_braces_are_an_error(rooms, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bad.cpp").write_text("void f() {\n  if (x) {\n}\n")
    assert rooms.main([str(tmp_path)]) == 2


def test_the_sources_keep_the_rules(rooms) -> None:  # type: ignore[no-untyped-def]
    assert rooms.main([str(ROOT / "csrc")]) == 0
