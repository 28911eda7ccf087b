"""Hierarchy, builders, Schema, Table and Partition."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import anoncore as ac
from anoncore import Attribute, Hierarchy, Partition, Schema, Table
from anoncore.datasets import toy_table

# --------------------------------------------------------------------------- hierarchy


def _fig31() -> Hierarchy:
    # Cao thesis Fig. 3.1: respiratory and digestive diseases.
    return Hierarchy.from_nested({"RD": {"R": ["SARS", "pneumonia", "bronchitis"],
                                          "D": ["intestinal cancer", "gastric flu", "gastric ulcer"]}})


def test_numbering_preorder_leaves_postorder_internal() -> None:
    h = _fig31()
    assert h.leaves == ("SARS", "pneumonia", "bronchitis", "intestinal cancer", "gastric flu", "gastric ulcer")
    assert h.labels[6:] == ("R", "D", "RD")
    assert h.parent.tolist() == [6, 6, 6, 7, 7, 7, 8, 8, -1]
    assert h.node_height.tolist() == [0] * 6 + [1, 1, 2]
    assert h.node_depth.tolist() == [2] * 6 + [1, 1, 0]
    assert h.leaf_start.tolist() == [0, 1, 2, 3, 4, 5, 0, 3, 0]
    assert h.leaf_count.tolist() == [1] * 6 + [3, 3, 6]
    assert h.children(8) == [6, 7]
    assert h.lca(0, 2) == 6 and h.lca(0, 4) == 8 and h.lca(3, 3) == 3
    for i in range(h.n_nodes - 1):  # post-order: every child before its parent
        assert h.parent[i] > i


def _naive_lca(h: Hierarchy, a: int, b: int) -> int:
    anc = set()
    x = a
    while x != -1:
        anc.add(x)
        x = int(h.parent[x])
    x = b
    while x not in anc:
        x = int(h.parent[x])
    return x


@st.composite
def random_trees(draw: st.DrawFn) -> dict[str, str]:
    n_internal = draw(st.integers(1, 6))
    parents: dict[str, str] = {}
    internal = ["n0"]
    for i in range(1, n_internal):
        parents[f"n{i}"] = draw(st.sampled_from(internal))
        internal.append(f"n{i}")
    n_leaves = draw(st.integers(1, 10))
    for i in range(n_leaves):
        parents[f"v{i}"] = draw(st.sampled_from(internal))
    # internal nodes without children become leaves themselves: allowed (unbalanced trees)
    return parents


@given(random_trees())
def test_unbalanced_tree_invariants(parents: dict[str, str]) -> None:
    h = Hierarchy.from_parent_map(parents)
    n, L = h.n_nodes, h.n_leaves
    assert h.labels[-1] == "n0" and h.parent[-1] == -1
    # heights: longest path to a leaf, by brute force
    kids: dict[int, list[int]] = {i: [] for i in range(n)}
    for i in range(n - 1):
        kids[int(h.parent[i])].append(i)

    def height(i: int) -> int:
        return 0 if not kids[i] else 1 + max(height(c) for c in kids[i])

    def leaves(i: int) -> list[int]:
        return [i] if not kids[i] else [x for c in kids[i] for x in leaves(c)]

    for i in range(n):
        assert h.node_height[i] == height(i)
        lv = sorted(leaves(i))
        assert lv == list(range(h.leaf_start[i], h.leaf_start[i] + h.leaf_count[i]))
    for v in range(L):
        path = [v]
        while h.parent[path[-1]] != -1:
            path.append(int(h.parent[path[-1]]))
        for lvl in range(h.height + 1):
            assert h.ancestor[v, lvl] == next(x for x in path if h.node_height[x] >= lvl)
    for a, b in itertools.product(range(n), repeat=2):
        assert h.lca(a, b) == _naive_lca(h, a, b)


def test_arx_files_levels(data_dir) -> None:  # type: ignore[no-untyped-def]
    sizes = {"sex": [2, 1], "age": [100, 20, 10, 5, 1], "race": [5, 1], "marital-status": [7, 2, 1],
             "education": [16, 5, 3, 1], "native-country": [41, 5, 1], "workclass": [8, 3, 1],
             "occupation": [14, 3, 1], "salary-class": [2, 1]}
    for name, expected in sizes.items():
        h = Hierarchy.from_arx_csv(data_dir / "adult" / f"adult_hierarchy_{name}.csv")
        assert h.level_sizes() == expected, name
        assert h.is_balanced
        rows = [line.split(";") for line in
                (data_dir / "adult" / f"adult_hierarchy_{name}.csv").read_text().strip().splitlines()]
        got = {tuple(r) for r in h.to_rows()}
        assert got == {tuple(x.strip() for x in r) for r in rows}


@pytest.mark.parametrize(
    "rows, match",
    [
        ([["a", "x", "*"], ["b", "*"]], "ragged levels"),
        ([["a", "x", "*"], ["b", "x", "+"]], "two parents"),
        ([["a", "*"], ["b", "+"]], "exactly one root"),
        ([["a", "x", "*"], ["a", "y", "*"]], "leaf twice"),
        ([], "empty"),
        ([["a", "*"], ["a", "*"]], "lists a leaf twice"),
    ],
)
def test_hierarchy_refuses_bad_rows(rows, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=match):
        Hierarchy.from_rows(rows)


def test_parent_map_refusals() -> None:
    with pytest.raises(ValueError, match="own parent"):
        Hierarchy.from_parent_map({"a": "a"})
    with pytest.raises(ValueError, match="exactly one root"):
        Hierarchy.from_parent_map({"a": "r1", "b": "r2"})
    with pytest.raises(ValueError, match="cycle|one root"):
        Hierarchy.from_parent_map({"a": "b", "b": "a"})
    with pytest.raises(TypeError, match="mapping"):
        Hierarchy.from_parent_map([("a", "b")])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        Hierarchy.from_parent_map({})


# --------------------------------------------------------------------------- builders


def test_builders() -> None:
    h = ac.interval_hierarchy(range(100), width=5, fanout=2)
    assert h.level_sizes()[:3] == [100, 20, 10]
    assert h.to_rows()[7][:3] == ["7", "[5-9]", "[0-9]"]
    m = ac.masking_hierarchy(["13053", "13068", "14850"])
    assert m.height == 5 and m.level_sizes() == [3, 3, 2, 2, 1, 1]
    g = ac.ordered_grouping_hierarchy(list("abcde"), group_size=2, fanout=2)
    assert g.to_rows()[4] == ["e", "e", "e", "*"]
    assert g.level_sizes() == [5, 3, 2, 1]
    r = ac.interval_hierarchy([0.5, 1.5, 2.5], widths=[1.0])
    assert r.to_rows()[0][1] == "[0.5, 1.5)"
    with pytest.raises(ValueError, match="same length"):
        ac.masking_hierarchy(["123", "12"])
    with pytest.raises(ValueError, match="multiple"):
        ac.interval_hierarchy(range(10), widths=[3, 4])
    with pytest.raises(ValueError, match="fanout"):
        ac.ordered_grouping_hierarchy(list("ab"), group_size=1, fanout=1)


# --------------------------------------------------------------------------- schema and table


def _df() -> pd.DataFrame:
    return pd.DataFrame({"name": ["a", "b", "c", "d"], "age": [30, 41, 30, 52],
                         "zip": ["130", "148", "?", "130"], "disease": ["flu", "flu", "ulcer", "cancer"]})


def test_table_encoding_and_decoding() -> None:
    s = Schema.build({"age": "numeric", "zip": None}, sensitive="disease", identifiers=["name"], missing="as_value")
    t = Table.from_pandas(_df(), s)
    assert t.columns == ("age", "zip", "disease")
    assert t.codes.dtype == np.int32 and t.codes.flags.c_contiguous and not t.codes.flags.writeable
    assert t.decode("age", t.column("age")).tolist() == [30.0, 41.0, 30.0, 52.0]
    assert t.to_pandas()["zip"].tolist() == ["130", "148", "?", "130"]
    assert t.domain("age") == (30.0, 52.0)
    assert t.hierarchy("zip") is not None and t.hierarchy("zip").height == 1  # type: ignore[union-attr]


def test_missing_policies() -> None:
    s = Schema.build({"age": "numeric", "zip": None}, sensitive="disease", identifiers=["name"])
    with pytest.raises(ValueError, match=r"Column 'zip' has 1 missing value\(s\) \(first at row 2"):
        Table.from_pandas(_df(), s)
    t = Table.from_pandas(_df(), Schema.build({"age": "numeric", "zip": None}, sensitive="disease",
                                             identifiers=["name"], missing="drop"))
    assert t.n_rows == 3 and t.dropped_rows.tolist() == [2] and t.row_ids.tolist() == [0, 1, 3]
    import pyarrow as pa

    keep_all = Schema.build({"age": "numeric", "zip": None}, sensitive="disease", identifiers=["name"],
                            missing="as_value")
    for path in ("pandas", "arrow"):  # every row kept: row_ids made on first use, the same read-only array after
        full = (Table.from_pandas(_df(), keep_all) if path == "pandas"
                else Table.from_arrow(pa.Table.from_pandas(_df()), keep_all))
        ids = full.row_ids
        assert ids.tolist() == list(range(len(_df()))) and ids.dtype == np.int64 and not ids.flags.writeable
        assert full.row_ids is ids and full.take([3, 1]).row_ids.tolist() == [3, 1]
    df = _df()
    df.loc[1, "age"] = np.nan
    with pytest.raises(ValueError, match="'age'"):
        Table.from_pandas(df, Schema.build({"age": "numeric"}, missing="as_value"))
    t2 = Table.from_pandas(_df(), Schema.build(["zip"], missing="as_value", missing_tokens=("none",)))
    assert "?" in t2.dictionary("zip")  # '?' is a value when it is not a missing token


@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda: Table.from_pandas(_df().iloc[:0], Schema.build(["zip"])), ValueError, "0 row"),
        (lambda: Table.from_pandas(_df(), Schema.build(["nope"])), ValueError, "Unknown column 'nope'"),
        (lambda: Table.from_pandas(_df(), Schema.build({"zip": ac.flat_hierarchy(["130"])}, missing="drop")),
         ValueError, "Value '148' of column 'zip' is missing from its hierarchy"),
        (lambda: Table.from_pandas(_df(), Schema.build({"disease": "numeric"})), ValueError, "numeric but holds 'flu'"),
        (lambda: Table.from_pandas([[1]], Schema.build(["zip"])), TypeError, "DataFrame"),  # type: ignore[arg-type]
        (lambda: Attribute("x", role="boss"), ValueError, "role"),
        (lambda: Attribute("x", kind="text"), ValueError, "kind"),
        (lambda: Attribute("x", hierarchy={"a": "*"}), TypeError, "must be a Hierarchy"),  # type: ignore[arg-type]
        (lambda: Schema((Attribute("x"), Attribute("x"))), ValueError, "twice"),
        (lambda: Schema((Attribute("x"),), missing="ignore"), ValueError, "missing"),
    ],
)
def test_bad_input_refused(make, exc, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=match):
        make()


def test_schema_toml_and_csv(tmp_path, data_dir) -> None:  # type: ignore[no-untyped-def]
    toml = tmp_path / "adult.toml"
    adult = data_dir / "adult"
    toml.write_text(
        f'[attributes.age]\nrole = "qi"\nhierarchy = "{adult}/adult_hierarchy_age.csv"\n'
        f'[attributes.sex]\nrole = "qi"\nhierarchy = "{adult}/adult_hierarchy_sex.csv"\n'
        f'[attributes.occupation]\nrole = "sensitive"\nhierarchy = "{adult}/adult_hierarchy_occupation.csv"\n'
    )
    s = Schema.from_toml(toml)
    assert s.quasi_identifiers == ("age", "sex") and s.sensitive == ("occupation",)
    t = Table.from_csv(adult / "adult.csv", s)
    assert t.n_rows == 30162
    raw = pd.read_csv(adult / "adult.csv", sep=";")
    assert (t.decode("occupation", t.column("occupation")) == raw["occupation"].to_numpy()).all()
    toml.write_text('[attributes.age]\nrole = "qi"\ncolour = "red"\n')
    with pytest.raises(ValueError, match="colour"):
        Schema.from_toml(toml)


def test_numeric_with_interval_hierarchy() -> None:
    t = toy_table()
    h = t.hierarchy("age")
    assert h is not None
    assert t.numeric_values("age")[t.column("age")].tolist() == [28, 28, 50, 50, 30, 30]


# --------------------------------------------------------------------------- partition


def test_partition_from_levels_matches_pandas_groupby(adult) -> None:  # type: ignore[no-untyped-def]
    levels = [1, 0, 1, 1, 3, 2, 2, 0, 1]
    p = Partition.from_levels(adult, levels)
    df = adult.to_pandas()
    keys = []
    for q, lv in zip(adult.quasi_identifiers, levels):
        h = adult.hierarchy(q)
        keys.append(pd.Series(h.ancestor[adult.column(q), lv]))
    sizes = pd.concat(keys, axis=1).value_counts()
    assert p.n_classes == len(sizes) == 1498
    assert sorted(p.class_sizes.tolist()) == sorted(sizes.tolist())
    assert int((sizes >= 5).sum()) == 1046 and int(sizes[sizes < 5].sum()) == 906  # ARX-ORACLES §7.3
    # rows in one class share their generalized values, and published labels agree
    pub = p.to_pandas()
    assert pub.groupby("ec")[list(adult.quasi_identifiers)].nunique().max().max() == 1
    assert len(df) == len(pub)


@given(st.lists(st.integers(0, 3), min_size=6, max_size=6), st.lists(st.booleans(), min_size=6, max_size=6))
def test_partition_from_labels_boxes(labels, sup) -> None:  # type: ignore[no-untyped-def]
    t = toy_table()
    p = Partition.from_labels(t, labels, suppressed=np.array(sup))
    assert p.n_rows == 6 and p.labels.max() + 1 == p.n_classes
    # every published row lies inside its class's box; the box is the smallest hierarchy node doing so
    for j, q in enumerate(t.quasi_identifiers):
        h = t.hierarchy(q)
        codes = t.column(q)
        for c in range(p.n_classes):
            rows = np.flatnonzero((p.labels == c) & ~np.array(sup))
            node = p.gen_node[c, j]
            if rows.size == 0:
                assert node == h.root
                continue
            assert all(p.gen_lo[c, j] <= codes[r] <= p.gen_hi[c, j] for r in rows)
            for ch in h.children(node):
                lo, n = h.leaf_start[ch], h.leaf_count[ch]
                assert not all(lo <= codes[r] < lo + n for r in rows)
    pub = p.to_pandas()
    assert (pub.loc[np.array(sup), "zip"] == "*").all()
    assert pub["disease"].tolist() == t.to_pandas()["disease"].tolist()


def test_partition_bad_input() -> None:
    t = toy_table()
    with pytest.raises(ValueError, match="levels has 1 entries"):
        Partition.from_levels(t, [1])
    with pytest.raises(ValueError, match=r"level of 'zip' must be in the range \[0, 5\]"):
        Partition.from_levels(t, [6, 0])
    with pytest.raises(TypeError, match="must be an int"):
        Partition.from_levels(t, [1.0, 0])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="one entry per row"):
        Partition.from_labels(t, [0, 1])
    with pytest.raises(TypeError, match="boolean"):
        Partition.from_labels(t, [0] * 6, suppressed=np.zeros(6, dtype=int))


def test_partition_arrow_and_equality() -> None:
    t = toy_table()
    a = Partition.from_levels(t, [1, 0])
    b = Partition.from_labels(t, [5, 5, 7, 7, 9, 9])
    assert a == b  # same classes, same boxes
    tbl = a.to_arrow()
    assert tbl.num_rows == 6 and tbl.column("zip").to_pylist()[0] == "1305*"
    assert a != Partition.from_levels(t, [2, 0])


@pytest.mark.parametrize("path", ["pandas", "arrow"])
def test_numeric_domain_checked_on_the_fast_path(path: str) -> None:
    import pyarrow as pa

    schema = Schema([Attribute("v", "quasi_identifier", "numeric", domain=(0, 100)),
                     Attribute("w", "quasi_identifier", "numeric", domain=(-5, 5)), Attribute("s", "sensitive")])

    def make(v: list[str]) -> Table:
        df = pd.DataFrame({"v": v, "w": ["1", "-5", "5", "0"], "s": ["a", "b", "a", "b"]})
        return Table.from_pandas(df, schema) if path == "pandas" else Table.from_arrow(pa.Table.from_pandas(df), schema)

    t = make(["0", "100", "30", "30"])
    assert t.to_pandas()["v"].tolist() == [0, 100, 30, 30] and t.to_pandas()["w"].tolist() == [1, -5, 5, 0]
    with pytest.raises(ValueError, match="'v'.*widen the domain"):
        make(["0", "101", "30", "30"])
    with pytest.raises(ValueError, match="'v'.*widen the domain"):
        make(["-1", "100", "30", "30"])


@pytest.mark.parametrize("ints", [False, True])
def test_numeric_domain_reads_the_kept_rows(ints: bool) -> None:
    """The domain check reads the extremes the encoding kernels return, or, when rows are dropped, those of the
    kept rows only: 101 in a dropped row passes, 101 in a kept row is refused (text and integer columns)."""
    schema = Schema([Attribute("v", "quasi_identifier", "numeric", domain=(0, 100)),
                     Attribute("s", "sensitive")], missing="drop")

    def make(v: list[int], s: list[str]) -> Table:
        return Table.from_pandas(pd.DataFrame({"v": v if ints else [str(x) for x in v], "s": s}), schema)

    t = make([0, 101, 30, 30], ["a", "?", "a", "b"])  # row 1 dropped: its 101 is not published
    assert t.dropped_rows.tolist() == [1] and t.to_pandas()["v"].tolist() == [0, 30, 30]
    with pytest.raises(ValueError, match="'v'.*widen the domain"):
        make([0, 101, 30, 30], ["a", "b", "?", "b"])
    with pytest.raises(ValueError, match="'v'.*widen the domain"):
        make([0, 101, 30, 30], ["a", "b", "a", "b"])
