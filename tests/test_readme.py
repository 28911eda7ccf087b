"""The README's Python examples run (they share one namespace, in order)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run() -> None:
    if not README.exists():
        pytest.skip("README.md not found next to the tests")
    if importlib.util.find_spec("anoncore.audit") is None or importlib.util.find_spec("anoncore.metrics") is None:
        pytest.skip("anoncore.audit / anoncore.metrics not available in this build")
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert len(blocks) >= 5
    ns: dict[str, object] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for i, code in enumerate(blocks):
            exec(compile(code, f"README.md block {i}", "exec"), ns)  # noqa: S102
    text = out.getvalue()
    # the comments in the README state these values
    assert "3 [40, 4, 2, 1]" in text
    assert "['130**', '1485*']" in text
