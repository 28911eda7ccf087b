"""SABRE-KNN beside a busy process: one and two threads, with the idle-cores rule on and off.

The owners of SABRE's bucket-parallel retrieval hand each EC's seed to one another, so an owner that another
process deschedules stalls the rest; the rule (``idle_cores``, docs/threads.md) holds them to the cores other
processes leave idle. This starts ``--busy`` processes that spin, then times ``sabre(method='knn')`` on
``--rows`` synthetic census rows (t 0.35, k 6) at 1 and 2 threads with ``ANONCORE_LOAD_AWARE`` 1 (the default)
and 0. Best of ``--repeat``; one line per measurement.

    python benchmarks/competing_load.py --rows 1000000 --busy 1
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--busy", type=int, default=1, help="spinning processes started beside the run")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from device_scaling import knn_call  # the same SABRE-KNN call as the scaling table's

    run = knn_call(a.rows)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.busy)]
    try:
        time.sleep(0.5)
        for guard in ("1", "0"):
            os.environ["ANONCORE_LOAD_AWARE"] = guard
            for th in (1, 2):
                walls = []
                for _ in range(a.repeat):
                    t0 = time.perf_counter()
                    run(th)
                    walls.append(time.perf_counter() - t0)
                print(f"{a.busy} busy process(es), ANONCORE_LOAD_AWARE={guard}: sabre_knn {a.rows:,} rows "
                      f"n_threads={th}: best {min(walls):.2f} s (all {', '.join(f'{w:.2f}' for w in walls)})",
                      flush=True)
    finally:
        for p in busy:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
