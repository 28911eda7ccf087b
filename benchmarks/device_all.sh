#!/usr/bin/env bash
# The device measurements after one build (device_build.sh): benchmarks/device_scaling.py (data-parallel phases,
# arguments in $DS_ARGS), benchmarks/lattice_threads.py (the lattice search, arguments in $LT_ARGS) and, when
# $E2E_ARGS is set, benchmarks/end_to_end.py (first calls from strings, e.g. E2E_ARGS='--repeat 5'); either of the
# first two is skipped when its variable is "skip". JSON and the printed logs go to $OUT when set, named with $TAG
# (default none), so that a second run in the same call (SKIP_BUILD=1 TAG=passive OMP_WAIT_POLICY=passive ...) keeps both.
# Data for the census-income and ARX rows: see device_scaling.sh / lattice_threads.sh (carry bench_out/shared_data).
# Call: run(command="DS_ARGS='--rows 10000000' LT_ARGS='--threads 1,16' bash benchmarks/device_all.sh",
#           carry=["bench_out/shared_data"], timeout_s=560)
# The 16-core search curve with its phases (stats["phase_seconds"], the "_par" twins included), about 2.5 min
# with the build on that machine (stop 32):
#   DS_ARGS=skip LT_ARGS='--threads 1,2,4,8,16 --synthetic 1e7 --synthetic-repeat 1 --only synthetic'
#   bash benchmarks/device_all.sh; SKIP_BUILD=1 TAG=40m DS_ARGS=skip
#   LT_ARGS='--threads 1,16 --synthetic 4e7 --synthetic-repeat 1 --only synthetic' bash benchmarks/device_all.sh
set -uo pipefail
source "$(dirname "$0")/device_build.sh" device_all || exit 1
export PYTHONUNBUFFERED=1
dest=${OUT:-$ROOT/bench_out}
status=0
if [ "${DS_ARGS:-}" != "skip" ]; then
  # shellcheck disable=SC2086
  PYTHONPATH="$WORK/site" timeout 400 python "$ROOT/benchmarks/device_scaling.py" --out "$dest/device_scaling${TAG:+_$TAG}.json" \
    ${DS_ARGS:-} 2>&1 | tee "$dest/device_scaling${TAG:+_$TAG}.log" || status=$?
fi
if [ "${LT_ARGS:-}" != "skip" ]; then
  # shellcheck disable=SC2086
  ANONCORE_INSTALLED=1 PYTHONPATH="$WORK/site" timeout 400 python "$ROOT/benchmarks/lattice_threads.py" \
    --out "$dest/lattice_threads${TAG:+_$TAG}.json" ${LT_ARGS:-} 2>&1 | tee "$dest/lattice_threads${TAG:+_$TAG}.log" || status=$?
fi
if [ -n "${E2E_ARGS:-}" ] && [ "${E2E_ARGS:-}" != "skip" ]; then
  # shellcheck disable=SC2086
  ANONCORE_INSTALLED=1 PYTHONPATH="$WORK/site" timeout 300 python "$ROOT/benchmarks/end_to_end.py" \
    --out "$dest/end_to_end${TAG:+_$TAG}.json" ${E2E_ARGS} 2>&1 | tee "$dest/end_to_end${TAG:+_$TAG}.log" || status=$?
fi
exit $status
