"""The one `n_threads` rule (STYLE.md §2.5), checked directly and through public entry points of every concern."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import anoncore
from anoncore import KAnonymity, _core
from anoncore._threads import check_n_threads
from anoncore.static.burel import likeness_model
from anoncore.static.sabre import closeness_model


@pytest.mark.parametrize("value, expected", [(None, 0), (1, 1), (3, 3), (np.int64(2), 2)])
def test_valid_values(value: object, expected: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert check_n_threads(value, "f") == expected


@pytest.mark.parametrize("value, exc", [(0, ValueError), (-2, ValueError), (True, TypeError), (1.5, TypeError),
                                        ("2", TypeError)])
def test_invalid_values_name_the_caller(value: object, exc: type[Exception]) -> None:
    with pytest.raises(exc, match=r"'n_threads' parameter of my_call must be an int in the range \[1, inf\)"):
        check_n_threads(value, "my_call")


def test_openmp_warning_only_for_openmp_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_core, "has_openmp", False, raising=False)
    with pytest.warns(RuntimeWarning, match="without OpenMP"):
        check_n_threads(2, "f")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_n_threads(2, "Castle", openmp=False) == 2
        assert check_n_threads(1, "f") == 1


def _table() -> anoncore.Table:
    return anoncore.datasets.synthetic_census(200, rng=0)


@pytest.mark.parametrize("call, caller", [
    (lambda t: anoncore.audit(t, anoncore.Partition.from_labels(t, np.zeros(t.n_rows, dtype=np.int64)),
                              KAnonymity(2), n_threads=0), "audit"),
    (lambda t: anoncore.static.lattice.lattice_search(t, [KAnonymity(2)], suppression_limit=0.0, metric="loss", n_threads=0), "lattice"),
    (lambda t: anoncore.sabre(t, [KAnonymity(2), closeness_model(t, 0.5)], n_threads=0), "sabre"),
    (lambda t: anoncore.burel(t, likeness_model(beta=4.0), n_threads=0), "burel"),
])
def test_public_entry_points_share_the_rule(call: object, caller: str) -> None:
    with pytest.raises(ValueError, match="'n_threads' parameter of .*must be an int in the range"):
        call(_table())  # type: ignore[operator]
