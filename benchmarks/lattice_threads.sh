#!/usr/bin/env bash
# Thread scaling of the optimal lattice search on the device machine (16 cores): every ARX row (Adult 1-8 with
# 6b, census-income a-e) at 1, 2, 4, 8, 16 threads (best of 3 first and repeat calls) and the 20M-row
# synthetic census case of issue 16 (k=5 + distinct-3 + equal t=0.3, 2 %, Loss) at 1, 4, 16 threads. Builds
# anoncore from a copy of the tree into bench_out/device_lt/site (ignored), then runs
# benchmarks/lattice_threads.py with it. Budget: build ~2-3 min, ARX rows ~1 min, synthetic ~2-3 min.
#
# The ARX rows need the data: before the call, here,
#   mkdir -p bench_out/shared_data/census-income && cp -r /work/shared/data/adult bench_out/shared_data/ &&
#   cp -r /work/shared/data/census-income/arx bench_out/shared_data/census-income/   (5 MB)
# Call: run(command="bash benchmarks/lattice_threads.sh", carry=["bench_out/shared_data"], timeout_s=560)
# Extra arguments go to lattice_threads.py (e.g. --synthetic 0 to leave the synthetic case out).
set -euo pipefail
source "$(dirname "$0")/device_build.sh" device_lt
status=0
ANONCORE_INSTALLED=1 PYTHONPATH="$WORK/site" timeout 420 python "$ROOT/benchmarks/lattice_threads.py" \
  --threads 1,2,4,8,16 --repeat 3 --synthetic 2e7 --synthetic-threads 1,4,16 \
  --out "$ROOT/bench_out/lattice_threads_device.json" "$@" || status=$?
if [ -n "${OUT:-}" ] && [ -f "$ROOT/bench_out/lattice_threads_device.json" ]; then
  cp "$ROOT/bench_out/lattice_threads_device.json" "$OUT/"
fi
exit $status
