"""``anoncore release``: generalize T1 so its join with earlier releases meets an (X,Y)-privacy requirement.

``anoncore release T1.csv T2.csv [T3.csv ...] --schema SCHEMA.json -o OUT.csv [--json]``.

The schema is a JSON object::

    {"requirement": {"model": "linkability", "x": ["T1.Job"], "y": ["Disease"], "k": 0.6,
                     "values": {"Disease": ["HIV"]}, "thresholds": [["Disease", "HIV", 0.5]]},
     "taxonomies": {"Job": {"ANY": ["Banker", "Clerk", "Driver", "Engineer"]}},
     "class_column": "Class", "continuous": [], "join": ["Job"],
     "inconsistent": [["T1.Sex", "Male", "T2.Cond", "Pregnant"]], "metric": "entropy"}

Only ``requirement`` is required (``model`` is ``anonymity`` or ``linkability``; anonymity needs an int k).
Taxonomies are nested objects as accepted by :meth:`anoncore.Hierarchy.from_nested`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

__all__ = ["build_parser", "register", "run"]

_KEYS = {"requirement", "taxonomies", "class_column", "continuous", "join", "inconsistent", "metric", "privloss"}


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """Add the release options to ``parser`` (or a new one)."""
    p = parser or argparse.ArgumentParser(
        prog="anoncore release",
        description="Anonymize a sequential release with TDS4SA (Wang & Fung, KDD 2006).")
    p.add_argument("t1", help="CSV of the table to release (raw values)")
    p.add_argument("t2", nargs="+", help="CSV of the earlier release(s)")
    p.add_argument("--schema", required=True, help="JSON file: requirement, taxonomies, class column, ...")
    p.add_argument("-o", "--output", required=True, help="output CSV: T1 as published")
    p.add_argument("--json", action="store_true", help="print one JSON document (docs/cli.md)")
    from anoncore.cli._common import add_force_argument

    add_force_argument(p)
    return p


def register(sub: Any) -> None:
    """Add the ``release`` subcommand to ``sub``."""
    build_parser(sub.add_parser("release", help="generalize T1 so that its join with earlier releases meets "
                                "(X,Y)-anonymity or (X,Y)-linkability (docs/release.md)"))


def _load_schema(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            schema = json.load(f)
    except json.JSONDecodeError as exc:
        raise ValueError(f"The schema {path!r} is not valid JSON: {exc}.") from None
    if not isinstance(schema, dict) or "requirement" not in schema:
        raise ValueError(f"The schema {path!r} must be a JSON object with a 'requirement'.")
    extra = set(schema) - _KEYS
    if extra:
        raise ValueError(f"Unknown schema keys {sorted(extra)}; allowed: {sorted(_KEYS)}.")
    return schema


def _requirement(spec: Any) -> Any:
    from anoncore.release import XYAnonymity, XYLinkability

    if not isinstance(spec, dict):
        raise TypeError("The schema's 'requirement' must be an object with model, x, y and k.")
    model = spec.get("model")
    missing = [k for k in ("x", "y", "k") if k not in spec]
    if missing:
        raise ValueError(f"The schema's requirement lacks {missing}.")
    if model == "anonymity":
        return XYAnonymity(spec["x"], spec["y"], spec["k"])
    if model == "linkability":
        thr = {(a, v): t for a, v, t in spec.get("thresholds", [])} or None
        return XYLinkability(spec["x"], spec["y"], spec["k"], values=spec.get("values"), thresholds=thr)
    raise ValueError(f"The requirement's 'model' must be 'anonymity' or 'linkability'. Got {model!r} instead.")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``anoncore release``; returns the exit status."""
    import pandas as pd

    from anoncore.cli._common import _document, _jsonable, check_output, write_csv
    from anoncore.data.hierarchy import Hierarchy
    from anoncore.release import tds4sa

    check_output(args.output, [args.t1, *args.t2, args.schema], force=args.force)
    schema = _load_schema(args.schema)
    req = _requirement(schema["requirement"])
    tax = {a: Hierarchy.from_nested(t, name=a) for a, t in (schema.get("taxonomies") or {}).items()}
    cont = schema.get("continuous")

    def read(path: str) -> pd.DataFrame:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        for c in cont or []:
            if c in df.columns:
                df[c] = pd.to_numeric(df[c], errors="raise")
        return df

    t1 = read(args.t1)
    t2 = [read(p) for p in args.t2]
    res = tds4sa(t1, t2 if len(t2) > 1 else t2[0], req, taxonomies=tax, class_column=schema.get("class_column"),
                 continuous=cont if cont is not None else [], join=schema.get("join"),
                 inconsistent=[tuple(i) for i in schema.get("inconsistent", [])] or None,
                 metric=schema.get("metric", "entropy" if schema.get("class_column") else "distortion"),
                 privloss=schema.get("privloss", "max"))
    write_csv(res.published, args.output)
    summary = {"records": len(res.published), "published": len(res.published), "suppressed": 0, "cut": res.cut,
                   "achieved": res.achieved if "L_y" not in res.achieved else
                   {"L_Y": res.achieved["L_Y"], "L_y": {"|".join(k): v for k, v in res.achieved["L_y"].items()}},
                   "audit_passed": bool(res.audit and res.audit.passed), "specializations": len(res.trace),
                   "distortion": res.metrics["distortion"], "output": args.output}
    if args.json:
        doc = _document("release", {"t1": args.t1, "t2": args.t2, "schema": schema}, summary)
        out.write(json.dumps(_jsonable(doc)) + "\n")
    else:
        value = ", ".join(f"{k} = {v:g}" for k, v in res.achieved.items() if not isinstance(v, dict))
        out.write(f"{len(res.published)} records published, 0 suppressed; {len(res.trace)} specializations; "
                  f"audit on the join: {value} ({'passed' if summary['audit_passed'] else 'FAILED'})\n")
        out.writelines(f"  {a}: {', '.join(vals)}\n" for a, vals in res.cut.items())
    return 0
