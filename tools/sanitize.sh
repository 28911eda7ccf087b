#!/usr/bin/env bash
# Checking build: compile anoncore._core with AddressSanitizer + UndefinedBehaviorSanitizer into its own build
# folder (build/sanitize) and run a fast subset of the test suite against it. Any report stops the run with a
# non-zero exit (halt_on_error; UBSan findings are fatal through -fno-sanitize-recover=all).
#
#   tools/sanitize.sh                 # build + the default subset
#   tools/sanitize.sh tests/test_x.py # build + these tests instead
#
# Environment: PYTHON (default python), BUILD_DIR (default build/sanitize), JOBS (default 2),
# ANONCORE_SANITIZE (default address,undefined). The development build in src/anoncore is left untouched: the
# tests import a package tree in $BUILD_DIR/pkg whose modules link to src/anoncore and whose _core is the
# sanitized one. Takes about 4-5 minutes on 2 cores from scratch, under 2 once built.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
BUILD=${BUILD_DIR:-build/sanitize}
SAN=${ANONCORE_SANITIZE:-address,undefined}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1" \
    -DANONCORE_SANITIZE="$SAN" -DSKBUILD_PROJECT_NAME=anoncore -DSKBUILD_PROJECT_VERSION=0.1.0 \
    -Dpybind11_DIR="$($PY -c 'import pybind11; print(pybind11.get_cmake_dir())')" \
    -DPython_EXECUTABLE="$(command -v "$PY")" >/dev/null
fi
cmake --build "$BUILD" -j "${JOBS:-2}"
BUILD=$(realpath "$BUILD")
so=$(ls "$BUILD"/_core*.so | head -1)

# a package tree: every module of src/anoncore linked, plus the sanitized extension
pkg="$BUILD/pkg/anoncore"
rm -rf "$BUILD/pkg"
mkdir -p "$pkg"
for f in src/anoncore/*; do
  case "$(basename "$f")" in _core*.so | _core*.pyd | __pycache__) continue ;; esac
  ln -s "$(realpath "$f")" "$pkg/$(basename "$f")"
done
ln -s "$(realpath "$so")" "$pkg/$(basename "$so")"

# Python itself is not instrumented: preload the ASan runtime, and the C++ runtime with it (ASan's __cxa_throw
# interceptor must find libstdc++ at start-up, or the first C++ exception aborts); leaks of the interpreter are
# not ours
preload=""
case "$SAN" in *address*)
  for lib in libasan.so libstdc++.so; do
    path=$(c++ -print-file-name="$lib")
    case "$path" in /*) preload="$preload $path" ;; esac
  done ;;
esac
preload=${preload# }
if [ $# -gt 0 ]; then
  tests=("$@")
else
  # kernels reached through their public APIs: the streams (checkpoint fuzzing included), the criteria, EMD,
  # SABRE/BUREL, sequences and the temporal kernels, the multi-threaded group-by / generator / retrieval, the
  # lattice's parallel merges and risk criteria, and the distributed item sets (arrays moved between processes)
  tests=(tests/test_castle.py tests/test_stream_checkpoint.py tests/test_sabre_w.py tests/test_stream_cli.py
         tests/test_core_criteria.py tests/test_distance.py tests/test_burel.py tests/test_sequence.py
         tests/test_temporal.py tests/test_core_parallel.py tests/test_lattice_threads.py
         tests/test_risk_engine.py tests/test_distributed_scale.py tests/test_distributed_config.py -m "not slow")
fi
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:detect_odr_violation=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
export PYTHONPATH="$BUILD/pkg"
export PYTHONDONTWRITEBYTECODE=1
echo "sanitize: $SAN, $(basename "$so"), preload ${preload:-none}"
LD_PRELOAD="$preload" "$PY" -c "import anoncore, sys; assert anoncore._core.__file__.startswith('$BUILD'), anoncore._core.__file__"
LD_PRELOAD="$preload" "$PY" -m pytest -q -x -p no:cacheprovider --capture=sys "${tests[@]}"
