"""Run the Examples sections of the installed package's docstrings."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import anoncore


def _modules() -> list[str]:
    names = ["anoncore"]
    for info in pkgutil.walk_packages(anoncore.__path__, "anoncore."):
        if info.name.split(".")[-1].startswith("_") or info.name.endswith(".cli"):
            continue
        names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
