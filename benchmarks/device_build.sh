# Sourced by the device scripts (device_scaling.sh, lattice_threads.sh) with the work folder's name under
# bench_out/ as $1: builds anoncore from a copy of the tree without build outputs (so the dev build, build/ and
# src/anoncore/_core*.so, cannot leak in) into bench_out/$1/site, then changes into bench_out/$1 (not the
# repository root: Python must import the installed copy). Sets ROOT and WORK; exports ANONCORE_SHARED_DATA
# (default bench_out/shared_data, which the call carries). SKIP_BUILD=1 keeps a site already built there (a
# second measurement in the same device call).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/bench_out/$1
if [ "${SKIP_BUILD:-0}" = 1 ] && [ -d "$WORK/site/anoncore" ]; then
  echo "build: skipped (SKIP_BUILD=1, $WORK/site kept)"
else
  rm -rf "$WORK/src" "$WORK/site"
  mkdir -p "$WORK/src"
  tar --exclude=./build --exclude=./bench_out --exclude=./.git --exclude='./src/anoncore/_core*.so' -cf - . \
    | tar -xf - -C "$WORK/src"
  export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
  t0=$(date +%s)
  (cd "$WORK/src" && python -m pip install --no-build-isolation --no-deps --quiet --target "$WORK/site" .)
  echo "build: $(( $(date +%s) - t0 )) s"
fi
export ANONCORE_SHARED_DATA=${ANONCORE_SHARED_DATA:-$ROOT/bench_out/shared_data}
cd "$WORK"
