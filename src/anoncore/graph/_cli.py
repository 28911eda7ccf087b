"""``anoncore graph``: prominence-based anonymization of a social network's node labels from the command line.

::

    anoncore graph EDGES --labels LABELS --taxonomy TAXONOMY [--measure M] [--a A] [--level-map linear|quantile]
                   [--undirected] [--weighted] [--samples K] [--seed S] [-o PREFIX] [--mapping FILE] [--json]

EDGES is a SNAP edge list (``# comments``, then ``src dst [weight]``); LABELS a CSV with a header and columns
``--node-col`` (default ``node``) and ``--label-col`` (default ``label``); TAXONOMY a nested JSON
``{root: {category: [leaves...]}}`` or ARX rows ``leaf;level1;...;root``. With ``-o PREFIX`` the masked graph
is written as ``PREFIX.nodes.csv`` (super node, size, label) and ``PREFIX.edges.csv`` (src, dst, weight);
``--mapping FILE`` writes the private node -> super node table for the publisher. See docs/graph.md.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any, TextIO

__all__ = ["build_parser", "register", "run"]


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """Add the ``graph`` options to ``parser`` (or a new one)."""
    from anoncore.graph.measures import MEASURES

    p = parser or argparse.ArgumentParser(prog="anoncore graph")
    p.description = ("Generalize the node labels of a social network along a taxonomy, more for more prominent "
                     "nodes (centrality / prestige), merge generalized nodes into super nodes and report the "
                     "information loss (Babu 2013, ch. 6; docs/graph.md).")
    p.add_argument("edges", metavar="EDGES", help="SNAP edge list: 'src dst [weight]' per line, '#' comments")
    p.add_argument("--labels", required=True, metavar="FILE", help="CSV with a header: node id and leaf label")
    p.add_argument("--taxonomy", required=True, metavar="FILE",
                   help="nested JSON {root: {category: [leaves...]}} (.json) or ARX rows leaf;...;root (.csv)")
    p.add_argument("--node-col", default="node", help="node column of LABELS (default: node)")
    p.add_argument("--label-col", default="label", help="label column of LABELS (default: label)")
    p.add_argument("--measure", default="degree", choices=MEASURES, help="prominence measure (default: degree)")
    p.add_argument("--a", type=float, default=0.5, help="weight of the first combined measure, in [0, 1]")
    p.add_argument("--combine", default="degree,betweenness", metavar="M1,M2",
                   help="the two measures of 'combined' (default: degree,betweenness)")
    p.add_argument("--level-map", default="linear", choices=("linear", "quantile"))
    p.add_argument("--closeness", default="harmonic", choices=("harmonic", "reachable"))
    p.add_argument("--distance", default="inverse", choices=("inverse", "weight"),
                   help="edge length on weighted graphs: 1/w (default) or w")
    p.add_argument("--damping", type=float, default=0.85, help="rank prestige damping (default: 0.85)")
    p.add_argument("--iloss", default="leaves", choices=("leaves", "level"))
    p.add_argument("--merge-min-level", type=int, default=1, help="lowest level at which nodes merge (default 1)")
    p.add_argument("--no-merge", action="store_true", help="do not form super nodes")
    p.add_argument("--undirected", action="store_true", help="read the edges as undirected")
    p.add_argument("--weighted", action="store_true", help="read a third column as edge weights")
    p.add_argument("--samples", type=int, default=None, help="sampled betweenness sources (default: exact)")
    p.add_argument("--seed", type=int, default=0, help="seed of the betweenness sample (default 0)")
    p.add_argument("--threads", type=int, default=None, help="threads of the path kernels (default: all)")
    p.add_argument("-o", "--output", metavar="PREFIX", help="write PREFIX.nodes.csv and PREFIX.edges.csv")
    p.add_argument("--mapping", metavar="FILE", help="write the (private) node -> super node table")
    p.add_argument("--json", action="store_true", help="print one JSON document (schema in docs/cli.md)")
    from anoncore.cli._common import add_force_argument

    add_force_argument(p)
    return p


def register(sub: Any) -> None:
    """Add the ``graph`` subcommand to ``sub``."""
    build_parser(sub.add_parser("graph", help="prominence-based anonymization of a social network's node "
                                "labels (docs/graph.md)"))


def _read_taxonomy(path: str) -> Any:
    from anoncore.data.hierarchy import Hierarchy

    if not os.path.exists(path):
        raise ValueError(f"taxonomy file {path!r} does not exist")
    if path.endswith(".json"):
        with open(path) as fh:
            try:
                tree = json.load(fh)
            except json.JSONDecodeError as exc:
                raise ValueError(f"taxonomy file {path!r} is not valid JSON: {exc}") from None
        return Hierarchy.from_nested(tree, name=os.path.basename(path))
    with open(path) as fh:
        first = fh.readline()
    return Hierarchy.from_arx_csv(path, sep=";" if ";" in first else ",", name=os.path.basename(path))


def _read_labels(path: str, node_col: str, label_col: str) -> dict[Any, str]:
    import pandas as pd

    if not os.path.exists(path):
        raise ValueError(f"labels file {path!r} does not exist")
    df = pd.read_csv(path, sep=None, engine="python", dtype={label_col: str})
    for c in (node_col, label_col):
        if c not in df.columns:
            raise ValueError(f"labels file {path!r} has no column {c!r} (columns: {', '.join(map(str, df.columns))})")
    nodes = df[node_col].tolist()
    if len(set(nodes)) != len(nodes):
        dup = next(v for v in nodes if nodes.count(v) > 1)
        raise ValueError(f"labels file {path!r} gives node {dup!r} more than one label")
    return dict(zip(nodes, df[label_col].tolist()))


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore graph``; returns the exit status (errors raise; :func:`anoncore.cli.main` maps them)."""
    import numpy as np
    import pandas as pd

    from anoncore.cli._common import _document, check_output, write_csv
    from anoncore.graph import load_snap_edges, prominence_anonymize

    if not os.path.exists(args.edges):
        raise ValueError(f"edge list {args.edges!r} does not exist")
    targets = ([f"{args.output}.nodes.csv", f"{args.output}.edges.csv"] if args.output else []) + \
        ([args.mapping] if args.mapping else [])
    for path in targets:
        check_output(path, [args.edges, args.labels, args.taxonomy], force=args.force,
                     option="--mapping" if path == args.mapping else "-o/--output")
    el = load_snap_edges(args.edges, directed=not args.undirected, weighted=args.weighted)
    labels = _read_labels(args.labels, args.node_col, args.label_col)
    tax = _read_taxonomy(args.taxonomy)
    params = {k: getattr(args, k) for k in ("edges", "labels", "taxonomy", "measure", "a", "combine", "level_map",
                                             "closeness", "distance", "damping", "iloss", "merge_min_level",
                                             "no_merge", "undirected", "weighted", "samples", "seed")}
    r = prominence_anonymize(
        el, labels, tax, args.measure, a=args.a, combine=tuple(args.combine.split(",")), damping=args.damping,
        closeness=args.closeness, distance=args.distance, level_map=args.level_map, merge=not args.no_merge,
        merge_min_level=args.merge_min_level, iloss=args.iloss, betweenness_samples=args.samples, rng=args.seed,
        n_threads=args.threads,
    )
    m = r.masked
    written = []
    if args.output:
        nodes_path, edges_path = f"{args.output}.nodes.csv", f"{args.output}.edges.csv"
        write_csv(pd.DataFrame({"super_node": range(m.n_nodes), "size": m.sizes, "label": m.labels}), nodes_path)
        write_csv(pd.DataFrame({"src": m.src, "dst": m.dst, "weight": m.weight}), edges_path)
        written += [nodes_path, edges_path]
    if args.mapping:
        write_csv(pd.DataFrame({"node": list(r.nodes), "super_node": r.group, "level": r.levels, "si": r.si,
                                "label": r.labels}), args.mapping)
        written.append(args.mapping)
    levels = {int(k): int(v) for k, v in zip(*np.unique(r.levels, return_counts=True))}
    result = {
        "n_nodes": len(r.nodes), "n_edges": el.n_edges, "measure": r.measure, "iloss": r.iloss,
        "levels": levels, "super_nodes": m.n_nodes, "super_edges": m.n_edges,
        "self_loops": int((m.src == m.dst).sum()), "largest_super_node": int(m.sizes.max()),
        "written": written, "timings": r.stats,
    }
    if args.json:
        out.write(json.dumps(_document("graph", params, result)) + "\n")
        return 0
    out.write(f"anoncore graph: {len(r.nodes)} nodes, {el.n_edges} edges, measure {r.measure}, "
              f"level map {args.level_map}\n")
    out.write(f"  nodes per level: {', '.join(f'{k}: {v}' for k, v in levels.items())}\n")
    out.write(f"  masked graph: {m.n_nodes} super nodes (largest {result['largest_super_node']}), {m.n_edges} edges "
              f"({result['self_loops']} self-loops)\n")
    out.write(f"  Iloss: {r.iloss:.6f}\n")
    out.writelines(f"  wrote {path}\n" for path in written)
    return 0
