#!/usr/bin/env bash
# The whole check, as CI runs it (README's test command calls this after installing ".[test]"):
#   1. the test suite (arguments are passed to pytest: `tools/ci.sh -m "not slow"` is the fast lane),
#   2. ruff on src and tests,
#   3. the type checks: tools/check_types.sh (mypy --strict and stubtest) when present; until then mypy is run
#      for information only (not fatal),
#   4. the sanitizer build and a fast subset under it (tools/sanitize.sh; ANONCORE_CI_SANITIZE=0 skips it),
#   5. `asv check` of the asv suite against the installed anoncore (no environment is built),
#   6. tools/check_rooms.py: no C++ file over 1,000 lines, no C++ function over 150 lines under csrc/.
# Every step runs even when an earlier one fails; the script exits non-zero if any fatal step failed.
# From a source tree without installing: PYTHONPATH=src tools/ci.sh (after tools/devbuild.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
# Relative PYTHONPATH entries (PYTHONPATH=src) must survive the asv step's change of directory.
if [ -n "${PYTHONPATH:-}" ]; then
  abs=()
  IFS=: read -ra parts <<< "$PYTHONPATH"
  for p in "${parts[@]}"; do abs+=("$(realpath -m "$p")"); done
  PYTHONPATH=$(IFS=:; echo "${abs[*]}")
  export PYTHONPATH
  export ASV_PYTHONPATH=$PYTHONPATH  # asv drops PYTHONPATH's entries from the benchmarks' sys.path otherwise
fi
failed=()
step() {
  local name=$1; shift
  echo "== ci: $name"
  local t0=$SECONDS
  if "$@"; then
    echo "== ci: $name ok ($((SECONDS - t0)) s)"
  else
    echo "== ci: $name FAILED ($((SECONDS - t0)) s)"
    failed+=("$name")
  fi
}
step pytest python -m pytest "$@"
step ruff python -m ruff check src tests
if [ -f tools/check_types.sh ]; then
  step types bash tools/check_types.sh
else
  echo "== ci: types (tools/check_types.sh absent: mypy for information only, not fatal)"
  python -m mypy || echo "== ci: mypy reported errors (not fatal yet)"
fi
# AddressSanitizer + UndefinedBehaviorSanitizer build of the kernels (own build folder) and a fast subset of the
# suite against it: the streams and checkpoint fuzzing, the criteria core, EMD, the lattice (its parallel merges
# and risk criteria too), releases, graphs, the multi-threaded group-by / generator / retrieval, the
# distributed item sets (arrays moved between processes), and the encoding and publishing kernels (word loads
# and copies that read or write past a string's end).
# ANONCORE_CI_SANITIZE=0 skips it (daily work); CI always runs it.
if [ "${ANONCORE_CI_SANITIZE:-1}" != "0" ]; then
  step sanitize bash tools/sanitize.sh tests/test_castle.py tests/test_stream_checkpoint.py \
    tests/test_core_criteria.py tests/test_distance.py tests/test_lattice.py tests/test_release.py \
    tests/test_graph.py tests/test_core_parallel.py tests/test_lattice_threads.py tests/test_risk_engine.py \
    tests/test_distributed_scale.py tests/test_distributed_config.py tests/test_core_encode.py -m "not slow"
fi
step asv-check bash -c 'cd asv_benchmarks && python -m asv check --python=same'
step rooms python tools/check_rooms.py csrc
if [ ${#failed[@]} -gt 0 ]; then
  echo "== ci: failed: ${failed[*]}"
  exit 1
fi
echo "== ci: all passed"
