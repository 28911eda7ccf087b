"""asv: CASTLE throughput and output quality (STYLE.md §2.10).

Synthetic power-law streams (10 QI: 6 numeric, 4 categorical), the UCI Adult stream (30,162 rows, 10 QI) and the
transaction stream of Fig. 5.8 (Adult joined with Quest-style transactions).
The 1M-tuple case runs only with ANONCORE_BENCH_LARGE=1.
"""

from __future__ import annotations

import os

import numpy as np

try:
    from .common import require_large
except ImportError:  # pragma: no cover - common.py arrives with main's asv setup
    def require_large(n_rows: int, threshold: int = 500_000) -> None:
        if n_rows >= threshold and os.environ.get("ANONCORE_BENCH_LARGE", "") != "1":
            raise NotImplementedError("large case: set ANONCORE_BENCH_LARGE=1")


def _run(castle, df, batch: int):  # type: ignore[no-untyped-def]
    out = [castle.push(df.iloc[s:s + batch]) for s in range(0, len(df), batch)]
    out.append(castle.flush())
    return out


def _ail(releases) -> float:  # type: ignore[no-untyped-def]
    import pandas as pd

    cl = pd.concat([r.clusters for r in releases])
    il = dict(zip(cl["gen_id"].tolist(), cl["il"].tolist()))
    gen = np.concatenate([r.gen_id[~r.suppressed] for r in releases])
    return float(np.mean([il[g] for g in gen.tolist()])) if gen.size else 1.0


class CastleSynthetic:
    """10-QI power-law stream; k=100, delta=10,000, eta=50, mu=100 (the thesis's defaults)."""

    params = ([100_000, 1_000_000], [100], [10_000], [50])
    param_names = ["n_rows", "k", "delta", "eta"]  # noqa: RUF012
    timeout = 600

    def setup(self, n_rows: int, k: int, delta: int, eta: int) -> None:
        require_large(n_rows)
        from anoncore.stream.datasets import power_law_stream

        self.schema, self.df = power_law_stream(n_rows, rng=0)

    def _castle(self, k: int, delta: int, eta: int, n_threads: int = 1):  # type: ignore[no-untyped-def]
        from anoncore.stream import Castle

        return Castle(self.schema, k=k, delta=delta, eta=eta, mu=100, rng=0, n_threads=n_threads)

    def time_castle(self, n_rows: int, k: int, delta: int, eta: int) -> None:
        _run(self._castle(k, delta, eta), self.df, 50_000)

    def time_castle_2threads(self, n_rows: int, k: int, delta: int, eta: int) -> None:
        """The same run with split^k's block scans on two threads (same output)."""
        _run(self._castle(k, delta, eta, n_threads=2), self.df, 50_000)

    def peakmem_castle(self, n_rows: int, k: int, delta: int, eta: int) -> None:
        _run(self._castle(k, delta, eta), self.df, 50_000)

    def track_ail(self, n_rows: int, k: int, delta: int, eta: int) -> float:
        return _ail(_run(self._castle(k, delta, eta), self.df, 50_000))

    track_ail.unit = "GLM IL"  # type: ignore[attr-defined]

    def track_suppressed(self, n_rows: int, k: int, delta: int, eta: int) -> float:
        out = _run(self._castle(k, delta, eta), self.df, 50_000)
        return float(sum(r.n_suppressed for r in out)) / n_rows

    track_suppressed.unit = "fraction"  # type: ignore[attr-defined]

    def time_kernel_castle(self, n_rows: int, k: int, delta: int, eta: int) -> None:
        """The C++ kernel alone on pre-encoded batches (no validation or encoding)."""
        c = self._castle(k, delta, eta)
        for e in self.encoded(c):
            c._core.push(e["position"], e["pid"], e["sa"], e["num"], e["cat"])

    def encoded(self, c):  # type: ignore[no-untyped-def]
        if not hasattr(self, "_enc"):
            last = None
            self._enc = []
            for s in range(0, len(self.df), 50_000):
                e = c._spec.encode(self.df.iloc[s:s + 50_000], c._py, last)
                last = int(e["position"][-1])
                self._enc.append(e)
        return self._enc


class CastleAdult:
    """UCI Adult stream (30,162 rows), 10 QI; k and delta as in Fig. 5.6(b)."""

    params = ([10, 100], [10_000])
    param_names = ["k", "delta"]  # noqa: RUF012
    timeout = 300

    def setup(self, k: int, delta: int) -> None:
        from anoncore.stream.datasets import adult_stream_schema, load_uci_adult_stream

        try:
            self.df = load_uci_adult_stream("train")
        except FileNotFoundError as exc:
            raise NotImplementedError(str(exc)) from exc
        self.schema = adult_stream_schema(10)

    def _castle(self, k: int, delta: int):  # type: ignore[no-untyped-def]
        from anoncore.stream import Castle

        return Castle(self.schema, k=k, delta=delta, eta=50, mu=100, rng=0)

    def time_castle(self, k: int, delta: int) -> None:
        _run(self._castle(k, delta), self.df, 10_000)

    def peakmem_castle(self, k: int, delta: int) -> None:
        _run(self._castle(k, delta), self.df, 10_000)

    def track_ail(self, k: int, delta: int) -> float:
        return _ail(_run(self._castle(k, delta), self.df, 10_000))

    track_ail.unit = "GLM IL"  # type: ignore[attr-defined]


class CastleTransactions:
    """Transaction stream (Fig. 5.8): Quest-style transactions joined with UCI Adult, one tuple per item (persons
    repeat, so split^k takes its multi-tuple-bucket path); k=100, delta=10,000, eta=50, 4 QI."""

    params = ([5, 15],)
    param_names = ["dup"]  # noqa: RUF012
    timeout = 300

    def setup(self, dup: int) -> None:
        from anoncore.stream.datasets import (
            adult_stream_schema,
            expand_transactions,
            load_uci_adult_stream,
            transaction_stream,
        )

        try:
            adult = load_uci_adult_stream("train")
        except FileNotFoundError as exc:
            raise NotImplementedError(str(exc)) from exc
        self.df = expand_transactions(transaction_stream(10_000, avg_len=dup, rng=dup), adult, rng=0)
        self.schema = adult_stream_schema(4)

    def _castle(self):  # type: ignore[no-untyped-def]
        from anoncore.stream import Castle

        return Castle(self.schema, k=100, delta=10_000, eta=50, mu=100, rng=0)

    def time_castle(self, dup: int) -> None:
        _run(self._castle(), self.df, 50_000)

    def track_ail(self, dup: int) -> float:
        return _ail(_run(self._castle(), self.df, 50_000))

    track_ail.unit = "GLM IL"  # type: ignore[attr-defined]


class CastleCheckpoint:
    """Checkpoint size/time with a full delay window pending (delta = 10,000 tuples)."""

    def setup(self) -> None:
        from anoncore.stream import Castle
        from anoncore.stream.datasets import power_law_stream

        schema, df = power_law_stream(20_000, rng=1)
        self.castle = Castle(schema, k=100, delta=10_000, eta=50, mu=100, rng=0)
        self.castle.push(df)
        self.state = self.castle.checkpoint()

    def time_checkpoint(self) -> None:
        self.castle.checkpoint()

    def time_restore(self) -> None:
        from anoncore.stream import Castle

        Castle.restore(self.state)

    def track_checkpoint_bytes(self) -> int:
        return len(self.state)

    track_checkpoint_bytes.unit = "bytes"  # type: ignore[attr-defined]


_CLI_FILES: dict[int, tuple[str, list[str]]] = {}


def _cli_files(n_rows: int) -> tuple[str, list[str]]:
    """A power-law CSV stream (6 numeric + 2 categorical QI, one person per tuple, string person ids as a CSV
    gives them) and the `anoncore stream` arguments for it; written once per size into a temporary folder."""
    if n_rows not in _CLI_FILES:
        import tempfile

        from anoncore.stream.datasets import power_law_stream

        d = tempfile.mkdtemp(prefix="anoncore_bench_")
        schema, df = power_law_stream(n_rows, n_numeric=6, n_categorical=2, rng=0)
        src = os.path.join(d, "in.csv")
        df.to_csv(src, index=False)
        args = [src, "--algorithm", "castle", "--pid", "pid", "--sensitive", "sa", "--k", "100", "--delta",
                "10000", "--batch-size", "10000"]
        for j in range(6):
            args += ["--numeric", f"x{j}=1:100"]
        for j in range(2):
            path = os.path.join(d, f"c{j}.csv")
            with open(path, "w") as fh:
                fh.write("\n".join(";".join(r) for r in schema[f"c{j}"].hierarchy.to_rows()) + "\n")
            args += ["--categorical", f"c{j}={path}"]
        _CLI_FILES[n_rows] = (d, args)
    return _CLI_FILES[n_rows]


class CastleCLICheckpoint:
    """`anoncore stream` with and without ``--checkpoint`` (a checkpoint after every batch of 10,000 rows): the
    checkpoint must cost little and must not grow with the stream (issue 18 item 9). 1M rows with
    ANONCORE_BENCH_LARGE=1."""

    params = ([50_000, 1_000_000], [False, True])
    param_names = ["n_rows", "checkpoint"]  # noqa: RUF012
    timeout = 900

    def setup(self, n_rows: int, checkpoint: bool) -> None:
        require_large(n_rows)
        self.dir, self.args = _cli_files(n_rows)

    def _run(self, checkpoint: bool) -> int:
        import contextlib
        import io

        try:
            from anoncore.stream._cli import cli_main
        except ImportError:  # pragma: no cover - the CLI package layout
            from anoncore.cli.stream import cli_main  # type: ignore[no-redef]
        ck = os.path.join(self.dir, "state.ck")
        for f in (ck, ck + ".keys"):
            if os.path.exists(f):
                os.remove(f)
        extra = ["-o", os.path.join(self.dir, "out.jsonl")] + (["--checkpoint", ck] if checkpoint else [])
        with contextlib.redirect_stderr(io.StringIO()):
            code = cli_main([*self.args, *extra])
        if code != 0:
            raise RuntimeError(f"anoncore stream exited with {code}")
        return sum(os.path.getsize(f) for f in (ck, ck + ".keys") if os.path.exists(f))

    def time_stream_cli(self, n_rows: int, checkpoint: bool) -> None:
        self._run(checkpoint)

    def track_checkpoint_bytes(self, n_rows: int, checkpoint: bool) -> int:
        """Bytes of FILE and FILE.keys after the run."""
        return self._run(checkpoint)

    track_checkpoint_bytes.unit = "bytes"  # type: ignore[attr-defined]
