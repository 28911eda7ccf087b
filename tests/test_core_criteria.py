"""Edge cases of the compiled criteria/distance kernels, called directly (anoncore._core)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anoncore import _core

C = _core.criteria
D = _core.distance


def _h(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    hist = np.array(rows, dtype=np.int64)
    return hist, hist.sum(axis=1)


def test_recursive_cl_ratio_from_the_definition() -> None:
    # generalization-lattice.md §2.6: r1 < c (r_l + ... + r_m); fewer than l distinct values fails (+inf).
    hist, sizes = _h([[5, 1, 3, 0], [2, 2, 0, 0], [4, 0, 0, 0], [0, 0, 0, 0]])
    assert C.recursive_cl_ratio(hist, sizes, 2, 1)[:3].tolist() == [5 / 4, 1.0, math.inf]
    assert C.recursive_cl_ratio(hist, sizes, 3, 1)[:3].tolist() == [5.0, math.inf, math.inf]
    assert C.recursive_cl_ratio(hist, sizes, 1, 1)[:3].tolist() == [5 / 9, 0.5, 1.0]
    assert math.isnan(C.recursive_cl_ratio(hist, sizes, 2, 1)[3])


def test_distinct_and_entropy() -> None:
    hist, sizes = _h([[2, 2, 2], [6, 0, 0], [0, 0, 0]])
    assert C.distinct_values(hist, 1).tolist() == [3, 1, 0]
    e = C.entropy(hist, sizes, 1)
    assert e[0] == pytest.approx(math.log(3), abs=1e-15) and e[1] == 0.0 and math.isnan(e[2])


def test_beta_and_delta_edge_cases() -> None:
    ref = np.array([1, 1, 2], dtype=np.int64)  # p = (1/4, 1/4, 1/2)
    hist, sizes = _h([[1, 1, 2], [2, 0, 0], [1, 0, 1], [0, 1, 0]])
    basic = C.beta_likeness(hist, sizes, ref, False, 1)
    enhanced = C.beta_likeness(hist, sizes, ref, True, 1)
    assert basic.tolist() == [0.0, 3.0, 1.0, 3.0]
    # -ln(1/4) = 1.386 < 3 (classes 1 and 3 violate for every beta); gain 1 on p = 1/4 is allowed.
    assert enhanced.tolist() == [0.0, math.inf, 1.0, math.inf]
    delta = C.delta_disclosure(hist, sizes, ref, 1)
    assert delta[0] == 0.0 and delta[1:].tolist() == [math.inf] * 3
    full = C.delta_disclosure(np.array([[1, 2, 1]], dtype=np.int64), np.array([4]), ref, 1)
    assert full[0] == pytest.approx(math.log(2), abs=1e-15)


@pytest.mark.parametrize(("call", "exc", "match"), [
    (lambda: C.recursive_cl_ratio(np.ones((1, 2), dtype=np.int64), np.array([2]), 0, 1), ValueError, "l must"),
    (lambda: C.distinct_values(np.ones((1, 2), dtype=np.int32), 1), TypeError, "incompatible"),
    (lambda: C.beta_likeness(np.ones((1, 2), dtype=np.int64), np.array([2]), np.array([2**31, 0]), True, 1),
     ValueError, r"2\^31"),
    (lambda: D.emd_equal_classes(np.ones((1, 2), dtype=np.int64), np.array([2]), np.array([0, 0]), 1),
     ValueError, r"2\^31"),
    (lambda: D.emd_ordered_classes(np.ones((1, 2), dtype=np.int64), np.array([2, 2]), np.array([1, 1]), 1),
     ValueError, "sizes has length 2"),
    (lambda: D.emd_hierarchical_classes(np.ones((1, 3), dtype=np.int64), np.array([3]), np.ones(3, dtype=np.int64),
                                        np.array([2, 2, -1], dtype=np.int32), np.array([0, 0, 1], dtype=np.int32),
                                        2, 1), ValueError, "one column per hierarchy leaf"),
])
def test_kernel_guards(call: object, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        call()  # type: ignore[operator]


def test_models_table_agrees_with_the_python_models() -> None:
    # One metadata table (criteria/models.hpp) exported by the kernel: every Python model class is in it, under
    # a distinct kernel id, with parameters the class has, the same need for a sensitive attribute, and the same
    # declarations as criteria_info; the lattice's model table is the rows the kernel marks as judged there.
    import dataclasses

    from anoncore.models import MODELS
    from anoncore.static.lattice import _MODEL_KINDS

    table = _core.criteria.models
    assert set(table) == {m.__name__ for m in MODELS}
    assert sorted(v[0] for v in table.values()) == list(range(len(table)))
    for m in MODELS:
        kid, a, b, needs_sa, lattice = table[m.__name__]
        fields = {f.name for f in dataclasses.fields(m)}
        assert a in fields and (b is None or b in fields), m.__name__
        assert needs_sa == m.needs_sensitive, m.__name__
        assert _core.criteria.criteria_info[m.__name__] == (m.requirement, m.monotone_generalization,
                                                            m.monotone_suppression)
        assert (m.__name__ in _MODEL_KINDS) == lattice
        if lattice:
            assert _MODEL_KINDS[m.__name__] == (kid, a, b, needs_sa)
    assert table["RecursiveCLDiversity"][1:3] == ("l", "c")
    assert not table["SemanticBetaLikeness"][4] and table["DeltaDisclosure"][4]
