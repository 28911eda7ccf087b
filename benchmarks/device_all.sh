#!/usr/bin/env bash
# Both device measurements after one build (device_build.sh): benchmarks/device_scaling.py (data-parallel phases,
# arguments in $DS_ARGS) then benchmarks/lattice_threads.py (the lattice search, arguments in $LT_ARGS); either is
# skipped when its variable is "skip". JSON and the printed logs go to $OUT when set.
# Data for the census-income and ARX rows: see device_scaling.sh / lattice_threads.sh (carry bench_out/shared_data).
# Call: run(command="DS_ARGS='--rows 10000000' LT_ARGS='--threads 1,16' bash benchmarks/device_all.sh",
#           carry=["bench_out/shared_data"], timeout_s=560)
set -uo pipefail
source "$(dirname "$0")/device_build.sh" device_all || exit 1
export PYTHONUNBUFFERED=1
dest=${OUT:-$ROOT/bench_out}
status=0
if [ "${DS_ARGS:-}" != "skip" ]; then
  # shellcheck disable=SC2086
  PYTHONPATH="$WORK/site" timeout 400 python "$ROOT/benchmarks/device_scaling.py" --out "$dest/device_scaling.json" \
    ${DS_ARGS:-} 2>&1 | tee "$dest/device_scaling.log" || status=$?
fi
if [ "${LT_ARGS:-}" != "skip" ]; then
  # shellcheck disable=SC2086
  ANONCORE_INSTALLED=1 PYTHONPATH="$WORK/site" timeout 400 python "$ROOT/benchmarks/lattice_threads.py" \
    --out "$dest/lattice_threads.json" ${LT_ARGS:-} 2>&1 | tee "$dest/lattice_threads.log" || status=$?
fi
exit $status
