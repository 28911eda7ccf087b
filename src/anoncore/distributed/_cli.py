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

__all__ = ["add_arguments", "connect", "is_parquet", "run_anonymize", "run_audit"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Parquet DATA: the Dask scheduler, tcp://host:port (default: a local cluster)")


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
            processes=True, dashboard_address=None))
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

    if args.algorithm != "flash":
        raise UsageError(f"Parquet DATA runs the optimal lattice search only (--algorithm flash); got "
                         f"{args.algorithm!r}.")
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


def run_audit(args: argparse.Namespace, out: TextIO) -> int:
    """Audit Parquet DATA generalized to ``--levels`` (classes below ``--suppress-below`` suppressed)."""
    import numpy as np

    from anoncore.cli._common import UsageError
    from anoncore.distributed import FrequencySet
    from anoncore.distributed.publish import audit_published, publish_parquet
    from anoncore.distributed.search import FrequencyResult, generalized_nodes

    if args.levels is None:
        raise UsageError("Parquet DATA is audited at full-domain --levels (--labels is for CSV).")
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
