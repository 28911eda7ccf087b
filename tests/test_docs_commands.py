"""Every `anoncore` command in the README's and the docs' bash blocks runs on the example folder and succeeds."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import anoncore

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "examples/README.md", "docs/cli.md"]


def shell_blocks(path: Path) -> list[str]:
    """The ```bash blocks of a markdown file (indented blocks of list items included), dedented."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"^( *)```bash\n(.*?)^\1```", text, flags=re.DOTALL | re.MULTILINE):
        indent = len(m.group(1))
        out.append("\n".join(line[indent:] for line in m.group(2).splitlines()))
    return out


def commands(block: str) -> list[str]:
    """The ``anoncore`` command lines of a block (backslash continuations joined); pip lines are skipped."""
    joined = re.sub(r"\\\n\s*", " ", block)
    return [c.strip() for c in joined.splitlines() if c.strip().startswith("anoncore ")]


CASES = [(doc, i, block) for doc in DOCS for i, block in enumerate(shell_blocks(ROOT / doc)) if commands(block)]


def test_the_docs_have_example_commands() -> None:
    assert len(CASES) >= 4
    assert (ROOT / "examples" / "census.csv").exists() and (ROOT / "examples" / "census.toml").exists()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "```toml" in text and "[attributes." in text  # a TOML schema example in the README


@pytest.mark.parametrize(("doc", "index", "block"), CASES, ids=[f"{d}#{i}" for d, i, _ in CASES])
def test_docs_block_runs_on_the_examples(doc: str, index: int, block: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    # the anoncore this process imports (source tree with a dev build, or site-packages in CI)
    site = str(Path(anoncore.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=site + os.pathsep + os.environ.get("PYTHONPATH", ""))
    prog = f"{shlex.quote(sys.executable)} -m anoncore.cli"
    for cmd in commands(block):
        line = prog + cmd[len("anoncore"):]
        line = line.replace("| python ", f"| {shlex.quote(sys.executable)} ")
        p = subprocess.run(line, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300, check=False)
        assert p.returncode == 0, f"{doc} block {index}: {cmd}\n{p.stderr[-2000:]}"
        assert "Traceback" not in p.stderr
