"""anoncore._validation: the one parameter-checking module (scikit-learn grammar, STYLE.md §2.6), the models'
declarative constraints, and the stubs of the compiled module."""

from __future__ import annotations

import dataclasses
import math
import pathlib
import re
import types
from typing import Any

import numpy as np
import pytest

import anoncore
import anoncore._core as core
from anoncore import models as M
from anoncore._validation import (
    Boolean,
    InstanceOf,
    Interval,
    Options,
    ParameterTypeError,
    check_bool,
    check_float,
    check_instance,
    check_int,
    check_option,
    check_params,
    check_rng,
    check_seed,
)


# ------------------------------------------------------------------------------------------------ Interval
@pytest.mark.parametrize("interval, text", [
    (Interval("int", 1, None, "left"), "[1, inf)"),
    (Interval("int", 1, 30162), "[1, 30162]"),
    (Interval("float", 0, 1, "right"), "(0, 1]"),
    (Interval("float", 0.0, 1.0), "[0.0, 1.0]"),
    (Interval("float", 1, None, "neither"), "(1, inf)"),
    (Interval("float", None, 0, "both"), "(-inf, 0]"),
    (Interval("int", 1, math.inf, "both"), "[1, inf]"),  # an explicit infinite bound keeps its bracket
])
def test_interval_is_drawn_as_given(interval: Interval, text: str) -> None:
    assert str(interval) == text


@pytest.mark.parametrize("interval, inside, outside", [
    (Interval("float", 0, 1, "right"), [1e-300, 0.5, 1.0], [0.0, -1.0, 1.0000001, math.nan]),
    (Interval("float", 0, 1, "left"), [0.0, 0.999], [1.0, math.nan]),
    (Interval("float", 0, None, "neither"), [1e-9, 1e300], [0.0, math.inf, math.nan]),
    (Interval("float", None, None), [-1e300, 0.0, 1e300], [math.inf, -math.inf, math.nan]),
    (Interval("float", 0, math.inf, "both"), [0.0, math.inf], [-1.0, math.nan]),
])
def test_interval_membership(interval: Interval, inside: list[float], outside: list[float]) -> None:
    assert all(x in interval for x in inside)
    assert not any(x in interval for x in outside)


# ------------------------------------------------------------------------------------------------ scalars
def test_the_style_guide_sentence() -> None:
    with pytest.raises(ValueError) as e:
        check_int(0, "k", "lattice_search", 1, 30162)
    assert str(e.value) == "The 'k' parameter of lattice_search must be an int in the range [1, 30162]. Got 0 instead."
    assert type(e.value) is ValueError


@pytest.mark.parametrize("bad", [5.0, True, np.bool_(True), "3", None, 2 + 0j])
def test_check_int_wrong_type(bad: Any) -> None:
    with pytest.raises(ParameterTypeError, match=r"^The 'k' parameter of f must be an int in the range \[1, inf\)\. Got "):
        check_int(bad, "k", "f", 1)


def test_parameter_type_error_is_both_type_and_value_error() -> None:
    assert issubclass(ParameterTypeError, TypeError) and issubclass(ParameterTypeError, ValueError)


def test_check_int_accepts_numpy_ints_and_returns_python_ints() -> None:
    out = check_int(np.int64(7), "k", "f", 1, 7)
    assert out == 7 and type(out) is int
    assert check_int(10**400, "k", "f", 1) == 10**400  # beyond float range: compared exactly, never NaN
    with pytest.raises(ValueError, match=r"\[1, 100\]"):
        check_int(10**400, "k", "f", 1, 100)


@pytest.mark.parametrize("value, ok", [(0.5, True), (1, True), (np.float32(0.25), True), (0, False),
                                       (math.nan, False), (1.5, False)])
def test_check_float_range(value: Any, ok: bool) -> None:
    if ok:
        out = check_float(value, "t", "sabre", 0, 1, closed="right")
        assert out == float(value) and type(out) is float
    else:
        with pytest.raises(ValueError, match=r"The 't' parameter of sabre must be a float in the range \(0, 1\]"):
            check_float(value, "t", "sabre", 0, 1, closed="right")


@pytest.mark.parametrize("bad", [True, "0.5", None, [0.5]])
def test_check_float_wrong_type(bad: Any) -> None:
    with pytest.raises(TypeError, match="must be a float in the range"):
        check_float(bad, "t", "sabre", 0, 1)


def test_allowed_replaces_the_range_words() -> None:
    with pytest.raises(ValueError, match=r"^The 'c' parameter of Mu must be a finite real number > 0\. Got -1\.0"):
        check_float(-1.0, "c", "Mu", 0, None, closed="neither", allowed="a finite real number > 0")


def test_check_option() -> None:
    assert check_option("dm", "metric", "f", ("dm", "loss")) == "dm"
    assert check_option("SUM", "aggregate", "f", ("sum", "rank"), ignore_case=True) == "sum"
    with pytest.raises(ValueError, match=r"^The 'metric' parameter of f must be a str among \{'dm', 'loss'\}\. "
                                         r"Got 'x' instead\.$"):
        check_option("x", "metric", "f", ("dm", "loss"))
    with pytest.raises(TypeError, match="must be a str among"):
        check_option(3, "metric", "f", ("dm", "loss"))
    with pytest.raises(ValueError, match=r"must be one of \{'ak', 'knn'\}"):
        check_option("exact", "method", "sabre", ("ak", "knn"), phrase="one of")
    with pytest.raises(ValueError, match="among"):
        check_option("sum", "aggregate", "f", ("SUM",))  # case matters unless asked


def test_check_bool() -> None:
    assert check_bool(np.bool_(False), "x", "f") is False
    for bad in (0, 1, "True", None):
        with pytest.raises(TypeError, match=r"^The 'x' parameter of f must be a bool\."):
            check_bool(bad, "x", "f")


def test_check_rng_and_seed() -> None:
    g = np.random.default_rng(3)
    assert check_rng(g, "f") is g
    assert check_rng(5, "f").integers(0, 100, 5).tolist() == np.random.default_rng(5).integers(0, 100, 5).tolist()
    assert check_seed(np.int32(9), "f") == int(np.random.default_rng(9).integers(0, 2**64, dtype=np.uint64))
    for bad in (True, 1.0, "x"):
        with pytest.raises(TypeError, match=r"The 'rng' parameter of f must be an int, a numpy Generator or None"):
            check_rng(bad, "f")


def test_check_instance_and_params() -> None:
    assert check_instance("a", "name", "f", str, "a str") == "a"
    with pytest.raises(TypeError, match=r"^The 'name' parameter of f must be a str\. Got int instead\.$"):
        check_instance(1, "name", "f", str, "a str")
    cons = {"k": Interval("int", 1, None, "left"), "flag": Boolean(), "col": InstanceOf(str, "a str", True)}
    check_params({"k": 2, "flag": True, "col": None}, cons, "g")
    with pytest.raises(ValueError, match="'k' parameter of g"):  # checked in the table's order: k first
        check_params({"k": 0, "flag": 1, "col": 3}, cons, "g")
    with pytest.raises(TypeError, match=r"'col' parameter of g must be a str or None\. Got 3 instead"):
        check_params(types.SimpleNamespace(k=1, flag=False, col=3), cons, "g")
    with pytest.raises(ValueError, match=r"^The 'how' parameter of g must be a str among \{'a', 'b'\}\. Got 'c'"):
        check_params({"how": "c"}, {"how": Options(("a", "b"))}, "g")


# ------------------------------------------------------------------------------------------------ models
@pytest.mark.parametrize("model", M.MODELS, ids=lambda c: c.__name__)
def test_every_model_parameter_has_a_constraint(model: type[M.PrivacyModel]) -> None:
    params = [f.name for f in dataclasses.fields(model)]
    assert list(model.constraints) == params


@pytest.mark.parametrize("build, name", [
    (lambda: M.KAnonymity(0), "k"),
    (lambda: M.DistinctLDiversity(2, sensitive=3), "sensitive"),
    (lambda: M.EntropyLDiversity(0.5), "l"),
    (lambda: M.RecursiveCLDiversity(0.0, 2), "c"),
    (lambda: M.EqualDistanceTCloseness(1.5), "t"),
    (lambda: M.HellingerTCloseness(math.nan), "t"),
    (lambda: M.BasicBetaLikeness(-1.0), "beta"),
    (lambda: M.SemanticBetaLikeness(1.0, level=-1), "level"),
    (lambda: M.RangeBetaLikeness(1.0, epsilon=1, relative=1), "relative"),
])
def test_model_constraints_reject(build: Any, name: str) -> None:
    with pytest.raises(ValueError, match=rf"The '{name}' parameter of \w+ must be"):
        build()


# ------------------------------------------------------------------------------------------------ stubs
def test_every_core_submodule_has_a_stub() -> None:
    runtime = {n for n in dir(core) if isinstance(getattr(core, n), types.ModuleType)}
    stubdir = pathlib.Path(anoncore.__file__).parent / "_core"
    stubs = {p.stem for p in stubdir.glob("*.pyi")} - {"__init__"}
    assert runtime == stubs
    init = (stubdir / "__init__.pyi").read_text()
    assert set(re.findall(r"^from \. import (\w+) as \1$", init, re.MULTILINE)) == runtime
