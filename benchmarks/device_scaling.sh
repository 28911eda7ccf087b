#!/usr/bin/env bash
# Thread scaling 1, 2, 4, 8, 16 of every data-parallel phase on the device machine (16 cores): the generator,
# encoding, Partition.from_levels, publishing, the audit and BUREL at 10M synthetic rows, the cheap ones again at
# 40M, SABRE-KNN at 1M, and the lattice search on census-income rows a, c, e. Builds anoncore from a copy of the
# tree into bench_out/device/site (ignored), then runs benchmarks/device_scaling.py with it and prints a table.
# Budget: build ~2-3 min, runs ~3 min on 16 cores (under 6 min in all). Arguments go to device_scaling.py
# (e.g. --rows 10000000 --threads 1,2,4,8,16 --phases generate,audit).
#
# The census-income rows need the data: before the call, here,
#   mkdir -p bench_out/shared_data && cp -r /work/shared/data/census-income bench_out/shared_data/
# and pass carry=["bench_out/shared_data"] to the device run (without it those rows print "skipped").
# Call: run(command="bash benchmarks/device_scaling.sh", carry=["bench_out/shared_data"], timeout_s=480)
set -euo pipefail
source "$(dirname "$0")/device_build.sh" device
PYTHONPATH="$WORK/site" timeout 400 python "$ROOT/benchmarks/device_scaling.py" \
  --out "$ROOT/bench_out/device_scaling.json" "$@"
if [ -n "${OUT:-}" ]; then cp "$ROOT/bench_out/device_scaling.json" "$OUT/"; fi
