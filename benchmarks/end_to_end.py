"""End to end from a DataFrame of strings: encode + optimal search + publish to Arrow, next to ARX 3.9.2.

A user's first call: the table is encoded anew from the parsed strings (``Table.from_pandas``; the same call
from an Arrow table of the strings, ``Table.from_arrow``, is timed too), searched
(``lattice_search``) and published (``Result.to_arrow``), each with the default ``n_threads`` (every core, as a
user's call; ``--e2e-threads 1`` for one thread: the search evaluates the same nodes at any count), for every ARX row of
``shared/data/adult/ARX-TIMINGS.md`` (Adult 1-8, census-income a-e); ARX's in-process medians are quoted from
that file. ``--scaling`` adds thread scaling (1 and 2 threads, or ``--threads``) of encoding (from a pandas
DataFrame of strings and from an Arrow table) and publishing on synthetic census rows. Best of ``--repeat``;
writes JSON to ``bench_out/``.

    PYTHONPATH=src python benchmarks/end_to_end.py --repeat 3
    PYTHONPATH=src python benchmarks/end_to_end.py --only adult_1,adult_7a,census_b --repeat 20
    PYTHONPATH=src python benchmarks/end_to_end.py --no-arx --io --repeat 5
    PYTHONPATH=src python benchmarks/end_to_end.py --no-arx --scaling --rows 1000000,10000000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "asv_benchmarks"))
if os.environ.get("ANONCORE_INSTALLED") != "1":
    sys.path.insert(0, str(ROOT / "src"))  # the dev build; ANONCORE_INSTALLED=1: the installed anoncore (device)

from benchmarks.bench_lattice import ADULT_CONFIGS, CENSUS_CONFIGS, _models  # type: ignore[import-not-found]
from benchmarks.common import strings_frame  # type: ignore[import-not-found]

from anoncore import Partition, Table
from anoncore.static import lattice as L

ARX_MS = {"1": 28.0, "2": 852, "3": 432, "4": 432, "5": 889, "6": 865, "7a": 13.6, "7b": 1637, "8": 2807,
          "a": 4360, "b": 294.5, "c": 17071, "d": 3871, "e": 18166}


def best(f: Any, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        out.append(time.perf_counter() - t0)
    return min(out)


def arx_rows(repeat: int, threads: int | None, only: set[str] | None = None) -> dict[str, Any]:
    import pyarrow as pa

    from anoncore.datasets import load_adult_arx, load_census_income_arx

    tables = {"plain": load_adult_arx(), "occ": load_adult_arx(sensitive="occupation")}
    cases = [(f"adult_{k}", tables["occ" if v[0] else "plain"], v[1:]) for k, v in ADULT_CONFIGS.items()]
    census = load_census_income_arx(sensitive="detailed_occupation_recode")
    cases += [(f"census_{k}", census, v) for k, v in CENSUS_CONFIGS.items()]
    out = {}
    for name, table, (spec, limit, metric) in cases:
        if only and name.split("_")[0] + "_" + name.split("_")[1] not in only:
            continue
        df, schema, models = strings_frame(table), table.schema, _models(spec)
        arrow = pa.Table.from_pandas(df, preserve_index=False)
        phases: dict[str, list[float]] = {"encode": [], "search": [], "publish": []}
        from_arrow: list[float] = []
        to_pandas: list[float] = []  # publishing to pandas' string columns instead of Arrow (not in the total)
        for _ in range(repeat if name.startswith("adult") else max(1, repeat // 2)):
            t0 = time.perf_counter()
            t = Table.from_pandas(df, schema, n_threads=threads)
            t1 = time.perf_counter()
            res = L.lattice_search(t, models, suppression_limit=limit, metric=metric, n_threads=threads)
            t2 = time.perf_counter()
            res.to_arrow(n_threads=threads)
            t3 = time.perf_counter()
            for v, dt in zip(phases.values(), (t1 - t0, t2 - t1, t3 - t2)):
                v.append(dt)
            t0 = time.perf_counter()
            res.to_pandas(n_threads=threads)
            to_pandas.append(time.perf_counter() - t0)
            t0 = time.perf_counter()  # the same call from an Arrow table of the same strings
            ta = Table.from_arrow(arrow, schema, n_threads=threads)
            L.lattice_search(ta, models, suppression_limit=limit, metric=metric, n_threads=threads).to_arrow(
                n_threads=threads)
            from_arrow.append(time.perf_counter() - t0)
        total = min(sum(x) for x in zip(*phases.values()))
        key = name.split("_")[1]
        row = {k: 1e3 * min(v) for k, v in phases.items()} | {"total_ms": 1e3 * total, "arx_ms": ARX_MS[key],
                                                               "arx_over_ours": ARX_MS[key] / (1e3 * total),
                                                               "from_arrow_total_ms": 1e3 * min(from_arrow),
                                                               "to_pandas_ms": 1e3 * min(to_pandas)}
        out[name] = row
        print(f"{name:28s} encode {row['encode']:8.1f}  search {row['search']:8.1f}  publish {row['publish']:7.1f}"
              f"  total {row['total_ms']:8.1f} ms (from Arrow {row['from_arrow_total_ms']:8.1f}; to pandas "
              f"{row['to_pandas_ms']:6.1f})   ARX "
              f"{row['arx_ms']:8.1f} ms  ratio {row['arx_over_ours']:5.2f}x", flush=True)
    return out


def io_rows(repeat: int, threads: int | None) -> dict[str, Any]:
    """``Table.from_csv`` (pyarrow's reader into the C++ encoder) next to its pandas reading, and the published
    table written as CSV (streamed record batches, and the pandas frame the command line wrote before) and
    Parquet, on Adult and census-income."""
    import tempfile

    from anoncore.cli import _common as cli
    from anoncore.cli.anonymize import published_frame
    from anoncore.data.table import _file_line
    from anoncore.data.writers import write_published
    from anoncore.datasets import load_adult_arx, load_census_income_arx, shared_data_dir

    data = shared_data_dir()
    cases = [("adult", data / "adult" / "adult.csv", load_adult_arx(), [0, 4, 1, 1, 3, 2, 2, 1, 0]),
             ("census", data / "census-income" / "arx" / "census.csv.gz",
              load_census_income_arx(sensitive="detailed_occupation_recode"), [4, 0, 2, 2, 0, 1, 2, 2])]
    out: dict[str, Any] = {}
    folder = Path(tempfile.mkdtemp())
    for name, path, table, levels in cases:
        p = str(path)
        pandas_s = best(lambda p=p, t=table: Table._from_csv_pandas(p, t.schema, ";", "utf-8", threads,
                                                                      _file_line(p)), repeat)
        arrow_s = best(lambda p=p, t=table: Table.from_csv(p, t.schema, sep=";", n_threads=threads), repeat)
        part = Partition.from_levels(table, levels)
        frame_s = best(lambda part=part: cli.write_csv(cli._readable(published_frame(part, True)),
                                                       str(folder / "a.csv")), repeat)
        csv_s = best(lambda part=part: write_published(part, folder / "b.csv", include_suppressed=True,
                                                       n_threads=threads), repeat)
        pq_s = best(lambda part=part: write_published(part, folder / "b.parquet", include_suppressed=True,
                                                      n_threads=threads), repeat)
        same = (folder / "a.csv").read_bytes() == (folder / "b.csv").read_bytes()
        row = {"from_csv_pandas_ms": 1e3 * pandas_s, "from_csv_arrow_ms": 1e3 * arrow_s,
               "write_csv_pandas_ms": 1e3 * frame_s, "write_csv_stream_ms": 1e3 * csv_s,
               "write_parquet_ms": 1e3 * pq_s, "csv_bytes_equal": same}
        out[name] = row
        print(f"{name:8s} from_csv: pandas reading {row['from_csv_pandas_ms']:7.1f} ms, pyarrow {row['from_csv_arrow_ms']:7.1f}"
              f" ms | write {table.n_rows:,} rows: pandas frame CSV {row['write_csv_pandas_ms']:7.1f} ms, streamed CSV "
              f"{row['write_csv_stream_ms']:7.1f} ms (same bytes: {same}), Parquet {row['write_parquet_ms']:7.1f} ms",
              flush=True)
    return out


def scaling(rows: list[int], threads: list[int], repeat: int) -> dict[str, Any]:
    import pyarrow as pa

    from anoncore.datasets import synthetic_census

    out: dict[str, Any] = {}
    for n in rows:
        t0 = time.perf_counter()
        table = synthetic_census(n, rng=1)
        df = strings_frame(table)
        arrow = pa.table({c: pa.array(df[c], type=pa.large_string()) for c in df.columns})
        cells = n * table.n_columns
        print(f"{n:,} rows x {table.n_columns} columns prepared in {time.perf_counter() - t0:.1f} s", flush=True)
        p = Partition.from_levels(table, [1] * len(table.quasi_identifiers))
        ref = Table.from_pandas(df, table.schema, n_threads=1)
        for th in threads:
            enc_pd = best(lambda th=th: Table.from_pandas(df, table.schema, n_threads=th), repeat)  # noqa: B023
            enc_ar = best(lambda th=th: Table.from_arrow(arrow, table.schema, n_threads=th), repeat)  # noqa: B023
            pub = best(lambda th=th: p.to_arrow(n_threads=th), repeat)  # noqa: B023
            assert np.array_equal(Table.from_arrow(arrow, table.schema, n_threads=th).codes, ref.codes)
            row = {"encode_pandas_s": enc_pd, "encode_arrow_s": enc_ar, "publish_arrow_s": pub,
                   "encode_pandas_Mcells_s": cells / enc_pd / 1e6, "encode_arrow_Mcells_s": cells / enc_ar / 1e6,
                   "publish_Mcells_s": cells / pub / 1e6}
            out[f"{n}_{th}"] = row
            print(f"  n_threads={th}: encode from pandas {enc_pd * 1e3:8.1f} ms ({row['encode_pandas_Mcells_s']:6.1f} "
                  f"Mcells/s), from Arrow {enc_ar * 1e3:8.1f} ms ({row['encode_arrow_Mcells_s']:6.1f} Mcells/s), "
                  f"publish {pub * 1e3:8.1f} ms ({row['publish_Mcells_s']:6.1f} Mcells/s)", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-arx", action="store_true")
    ap.add_argument("--scaling", action="store_true")
    ap.add_argument("--rows", default="1000000,10000000")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--e2e-threads", type=int, default=0,
                    help="n_threads of encoding, search and publishing in the ARX rows (default 0: None, every "
                         "core, as a user's call; the search's nodes are the same at any count)")
    ap.add_argument("--only", default="", help="comma-separated ARX rows, e.g. adult_1,adult_7a,census_b")
    ap.add_argument("--io", action="store_true", help="also from_csv and the CSV / Parquet writers")
    ap.add_argument("--out", default="bench_out/end_to_end.json")
    a = ap.parse_args()
    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs", flush=True)
    res: dict[str, Any] = {"loadavg_start": os.getloadavg()}
    if not a.no_arx:
        res["arx"] = arx_rows(a.repeat, None if a.e2e_threads == 0 else a.e2e_threads,
                              {x.strip() for x in a.only.split(",") if x.strip()} or None)
    if a.io:
        res["io"] = io_rows(a.repeat, None if a.e2e_threads == 0 else a.e2e_threads)
    if a.scaling:
        res["scaling"] = scaling([int(float(x)) for x in a.rows.split(",")], [int(x) for x in a.threads.split(",")],
                                 a.repeat)
    res["loadavg_end"] = os.getloadavg()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
