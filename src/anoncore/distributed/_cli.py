"""`anoncore anonymize` / `anoncore audit` on a folder or glob of Parquet files, on Dask (``--scheduler``).

The commands' modules (src/anoncore/cli/anonymize.py, audit.py) add ``--scheduler`` with :func:`add_arguments`
and hand over to :func:`run_anonymize` / :func:`run_audit` when DATA is Parquet (:func:`is_parquet`).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import time
from typing import Any, TextIO

__all__ = ["add_anonymize_arguments", "add_arguments", "connect", "is_parquet", "run_anonymize", "run_audit"]

TWO_PHASE = ("sabre", "burel", "tmondrian", "lmondrian", "dmondrian")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Parquet DATA: the Dask scheduler, tcp://host:port (default: a local cluster)")


def add_anonymize_arguments(p: argparse.ArgumentParser) -> None:
    """The options of the two-phase algorithms on Parquet DATA (``anoncore anonymize``)."""
    p.add_argument("--parts", type=int, default=None, metavar="N",
                   help="Parquet DATA, sabre/burel/*mondrian: parts anonymized apart, each on one worker "
                        "(default: the input's partitions)")
    p.add_argument("--split", choices=("hilbert", "rows"), default="hilbert",
                   help="Parquet DATA, sabre/burel: how each sensitive bucket's rows are dealt to the parts "
                        "(default hilbert: along the Hilbert curve of the quasi-identifiers; rows: input order)")


def _log(message: str) -> None:
    import sys

    print(message, file=sys.stderr, flush=True)


def is_parquet(path: str) -> bool:
    """A folder of Parquet files, a glob, or a .parquet file."""
    if any(ch in path for ch in "*?["):
        return True
    if os.path.isdir(path):
        return any(f.endswith(".parquet") for f in os.listdir(path))
    return path.endswith(".parquet") or "://" in path


def connect(address: str | None = None, timeout: float = 5.0) -> Any:
    """A ``distributed.Client`` on ``address`` (``tcp://host:port``), or on a new local cluster when None.

    Raises ConnectionError naming the address when no scheduler answers within ``timeout`` seconds."""
    try:
        import distributed
    except ImportError:
        raise RuntimeError("Parquet input runs on Dask: pip install 'anoncore[dask]'.") from None
    if address is None:
        return distributed.Client(distributed.LocalCluster(  # type: ignore[no-untyped-call]
            processes=True, dashboard_address=":0"))
    try:
        return distributed.Client(address, timeout=timeout)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as e:
        raise ConnectionError(f"No Dask scheduler answers at {address!r} ({type(e).__name__}: {e}); start one "
                              f"with `dask scheduler` or leave --scheduler out for a local cluster.") from e


def _read(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    import dask.dataframe as dd

    from anoncore.cli._common import UsageError
    from anoncore.data.schema import Schema

    if not os.path.exists(args.schema):
        raise UsageError(f"schema file {args.schema!r} does not exist.")
    if "://" not in args.data and not os.path.exists(args.data) and not glob.glob(args.data):
        raise UsageError(f"no Parquet data at {args.data!r}.")
    try:
        schema = Schema.from_toml(args.schema)
    except Exception as exc:  # noqa: BLE001
        raise UsageError(f"invalid schema {args.schema!r}: {exc}") from None
    try:
        client = connect(getattr(args, "scheduler", None))
    except ConnectionError as exc:
        raise UsageError(str(exc)) from None
    return dd.read_parquet(args.data), schema, client


def _sensitive(specs: Any, schema: Any) -> str | None:
    models = [s.build() for s in specs]
    if any(m.needs_sensitive for m in models):
        name = next((s.sensitive for s in specs if s.sensitive), None)
        return schema.sensitive_column(name, caller="anoncore")  # type: ignore[no-any-return]
    return None


def run_anonymize(args: argparse.Namespace, out: TextIO) -> int:
    """The optimal lattice search (``--algorithm flash``) on Parquet DATA; ``--output`` a Parquet folder."""
    from anoncore._progress import Progress
    from anoncore.cli._common import UsageError
    from anoncore.distributed import FrequencySet, lattice_search
    from anoncore.distributed.publish import audit_published, publish_parquet

    if args.algorithm in TWO_PHASE:
        return _run_two_phase(args, out)
    if args.algorithm != "flash":
        raise UsageError(f"Parquet DATA runs the optimal lattice search (--algorithm flash) or a two-phase "
                         f"algorithm ({', '.join(TWO_PHASE)}); got {args.algorithm!r}.")
    if not args.model:
        raise UsageError("--algorithm flash needs at least one --model (e.g. --model k=5).")
    t_all = time.perf_counter()
    ddf, schema, client = _read(args)
    try:
        with Progress(4, "anoncore anonymize (dask)") as bar:
            bar.set_step("frequency set (tree reduction)")
            sa = _sensitive(args.model, schema)
            freq = FrequencySet.from_dask(ddf, schema, sensitive=sa)
            bar.advance(step="optimal lattice search")
            models = [s.build() for s in args.model]
            res = lattice_search(freq, models, suppression_limit=args.suppression_limit, metric=args.metric,
                                 n_threads=args.threads)
            bar.advance(step="publishing")
            counts = None
            audit: dict[str, Any] | None = None
            if args.output is not None:
                import dask.dataframe as dd

                def verify(tmp: str) -> bool:  # the audit of the files, before they appear under --output
                    nonlocal audit
                    bar.advance(step="auditing the output")
                    audit = audit_published(dd.read_parquet(tmp), schema, models, original=freq)
                    return bool(audit["passed"])

                try:
                    counts = publish_parquet(ddf, schema, res, args.output, verify=verify)
                except RuntimeError:
                    if audit is None or audit["passed"]:
                        raise
            bar.advance()
    finally:
        client.close()
    doc = {"command": "anonymize", "scheduler": args.scheduler or "local", "levels": list(res.levels),
           "metric": {res.metric: res.score}, "n_rows": freq.n_rows, "n_suppressed": res.n_suppressed,
           "n_classes": res.n_classes, "output": args.output, "publish": counts, "audit": audit,
           "seconds": time.perf_counter() - t_all}
    if args.json:
        out.write(json.dumps(doc) + "\n")
    else:
        out.write(f"anoncore anonymize {args.data} on Dask ({doc['scheduler']}): levels {list(res.levels)}, "
                  f"{res.metric} {res.score:.6g}, {res.n_suppressed:,} of {freq.n_rows:,} rows suppressed, "
                  f"{res.n_classes:,} classes\n")
        if audit is not None:
            out.write(f"audit {'passed' if audit['passed'] else 'FAILED'}: "
                      + ", ".join(f"{k} {v}" for k, v in audit.items() if "." in k) + "\n")
            out.write(f"Published table written to {args.output}\n" if counts is not None else
                      "Audit failed: nothing written.\n")
    return 1 if audit is not None and not audit["passed"] else 0


def _two_phase_models(args: argparse.Namespace, schema: Any) -> list[Any]:
    """The models of a two-phase algorithm from -k/-t/--beta/--variant (as the CSV path builds them)."""
    from anoncore.cli._common import UsageError
    from anoncore.models import (
        BasicBetaLikeness,
        EnhancedBetaLikeness,
        HierarchicalDistanceTCloseness,
        KAnonymity,
        OrderedDistanceTCloseness,
    )

    name = schema.sensitive_column(args.sensitive, caller="anoncore anonymize")
    if args.algorithm in ("sabre", "tmondrian"):
        if args.t is None:
            raise UsageError(f"--algorithm {args.algorithm} needs -t/--t (the closeness threshold, in (0, 1]).")
        kind = HierarchicalDistanceTCloseness if schema[name].kind == "categorical" else OrderedDistanceTCloseness
        return [KAnonymity(args.k), kind(args.t, sensitive=name)]
    if args.beta is None:
        raise UsageError(f"--algorithm {args.algorithm} needs --beta (the likeness threshold, > 0).")
    if args.variant not in ("enhanced", "basic") or (args.algorithm == "dmondrian" and args.variant != "enhanced"):
        raise UsageError(f"Parquet DATA: --algorithm {args.algorithm} takes --variant enhanced"
                         f"{'' if args.algorithm == 'dmondrian' else ' or basic'}; got {args.variant!r}.")
    return [(EnhancedBetaLikeness if args.variant == "enhanced" else BasicBetaLikeness)(args.beta, sensitive=name)]


def _run_two_phase(args: argparse.Namespace, out: TextIO) -> int:
    """SABRE, BUREL or a Mondrian baseline on parts of Parquet DATA (:func:`anoncore.distributed.twophase.
    two_phase`), audited against the whole table's sensitive distribution; ``--output`` a Parquet folder written
    atomically after the audit passed."""
    import shutil
    import uuid

    from anoncore.cli._common import UsageError
    from anoncore.distributed.twophase import two_phase

    if args.model:
        raise UsageError(f"--model is for the lattice algorithms; --algorithm {args.algorithm} takes its own "
                         f"options (-k, -t, --beta, --variant).")
    if args.parts is not None and args.parts < 1:
        raise UsageError(f"--parts must be >= 1; got {args.parts}.")
    if args.output is not None and os.path.exists(args.output) and not getattr(args, "force", False):
        raise UsageError(f"the output {args.output!r} exists; choose another path or pass --force.")
    t_all = time.perf_counter()
    ddf, schema, client = _read(args)
    try:
        models = _two_phase_models(args, schema)
        _log(f"anoncore anonymize: {args.algorithm} on {ddf.npartitions} partitions of {args.data}")
        try:
            res = two_phase(ddf, schema, models, algorithm=args.algorithm, n_parts=args.parts, split=args.split,
                            rng=args.seed, sensitive=models[-1].sensitive, progress=True)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        _log("anoncore anonymize: distributed audit against the whole table's sensitive distribution")
        audit = res.audit(schema)
        written = False
        if args.output is not None and audit["passed"]:
            parent = os.path.dirname(os.path.abspath(args.output))
            tmp = os.path.join(parent, f".{os.path.basename(args.output)}.tmp-{uuid.uuid4().hex}")
            try:
                res.published.to_parquet(tmp, write_index=False)
                if os.path.exists(args.output):
                    shutil.rmtree(args.output)
                os.rename(tmp, args.output)
                written = True
            finally:
                if os.path.exists(tmp):
                    shutil.rmtree(tmp)
    finally:
        client.close()
    doc = {"command": "anonymize", "algorithm": args.algorithm, "scheduler": args.scheduler or "local",
           "n_rows": res.n_rows, "n_suppressed": 0, "n_classes": res.n_classes, "parts": list(res.part_rows),
           "split": args.split, "output": args.output if written else None, "audit": audit,
           "seconds": time.perf_counter() - t_all}
    if args.json:
        out.write(json.dumps(doc) + "\n")
    else:
        out.write(f"anoncore anonymize {args.data} on Dask ({doc['scheduler']}) with {args.algorithm}: "
                  f"{res.n_classes:,} classes over {res.n_rows:,} rows in {res.n_parts} parts, nothing suppressed\n")
        out.write(f"audit against the whole table {'passed' if audit['passed'] else 'FAILED'}: "
                  + ", ".join(f"{k} {v}" for k, v in audit.items() if "." in k) + "\n")
        if args.output is not None:
            out.write(f"Published table written to {args.output}\n" if written else
                      "Audit failed: nothing written.\n")
    return 0 if audit["passed"] else 1


def _run_audit_labels(args: argparse.Namespace, out: TextIO) -> int:
    """Audit Parquet DATA whose classes are the values of a column (``--labels COLUMN``, or ``--published``:
    the ``ec`` column of a folder written by ``anoncore anonymize``)."""
    from anoncore.cli._common import UsageError
    from anoncore.distributed.twophase import audit_labels

    column = "ec" if getattr(args, "published", False) else args.labels
    ddf, schema, client = _read(args)
    try:
        if column not in ddf.columns:
            raise UsageError(f"--labels {column!r} is not a column of the Parquet data (columns: "
                             f"{list(map(str, ddf.columns))}); on Parquet the labels are a column.")
        models = [s.build() for s in args.model]
        _log(f"anoncore audit: class statistics of {args.data} by {column!r} (dask group-by)")
        try:
            audit = audit_labels(ddf, schema, models, column, suppressed_label=args.suppressed_label,
                                 sensitive=_sensitive(args.model, schema))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    finally:
        client.close()
    doc = {"command": "audit", "labels": column, **audit}
    if args.json:
        out.write(json.dumps(doc) + "\n")
    else:
        out.write(f"anoncore audit {args.data} by classes {column!r}: {'passed' if audit['passed'] else 'FAILED'}; "
                  + ", ".join(f"{k} {v}" for k, v in audit.items() if "." in k)
                  + f"; {audit['n_suppressed']:,} of {audit['n_rows']:,} rows suppressed, "
                  + f"{audit['n_classes']:,} classes\n")
    return 0 if audit["passed"] else 1


def run_audit(args: argparse.Namespace, out: TextIO) -> int:
    """Audit Parquet DATA generalized to ``--levels`` (classes below ``--suppress-below`` suppressed), or by
    the classes of a column (``--labels COLUMN`` / ``--published``)."""
    import numpy as np

    from anoncore.cli._common import UsageError
    from anoncore.distributed import FrequencySet
    from anoncore.distributed.publish import audit_published, publish_parquet
    from anoncore.distributed.search import FrequencyResult, generalized_nodes

    if args.levels is None:
        return _run_audit_labels(args, out)
    ddf, schema, client = _read(args)
    try:
        models = [s.build() for s in args.model]
        freq = FrequencySet.from_dask(ddf, schema, sensitive=_sensitive(args.model, schema))
        lv = tuple(int(x) for x in args.levels)
        if len(lv) != freq.n_qi:
            raise UsageError(f"--levels needs {freq.n_qi} levels (one per quasi-identifier); got {len(lv)}.")
        nodes = generalized_nodes(freq, freq.codes[:, : freq.n_qi], lv)
        _, inv = np.unique(nodes, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        sizes = np.bincount(inv, weights=freq.counts)
        sup = sizes[inv] < args.suppress_below
        res = FrequencyResult(freq, lv, "none", float("nan"), int(freq.counts[sup].sum()), 0, sup, tuple(models))
        import tempfile

        import dask.dataframe as dd

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "published")
            counts = publish_parquet(ddf, schema, res, path)
            audit = audit_published(dd.read_parquet(path), schema, models, original=freq)
    finally:
        client.close()
    doc = {"command": "audit", "levels": list(lv), **counts, **audit}
    if args.json:
        out.write(json.dumps(doc) + "\n")
    else:
        out.write(f"anoncore audit {args.data} at levels {list(lv)}: {'passed' if audit['passed'] else 'FAILED'}; "
                  + ", ".join(f"{k} {v}" for k, v in audit.items() if "." in k)
                  + f"; {counts['n_suppressed']:,} of {counts['n_rows']:,} rows suppressed\n")
    return 0 if audit["passed"] else 1
