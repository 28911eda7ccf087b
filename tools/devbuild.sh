#!/usr/bin/env bash
# Developer build: compile anoncore._core into build/dev and link it into src/anoncore, so that
# `PYTHONPATH=src python -m pytest` runs against the working tree without reinstalling.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
BUILD=${BUILD_DIR:-build/dev}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSKBUILD_PROJECT_NAME=anoncore -DSKBUILD_PROJECT_VERSION=0.1.0 \
    -Dpybind11_DIR="$($PY -c 'import pybind11; print(pybind11.get_cmake_dir())')" \
    -DPython_EXECUTABLE="$(command -v $PY)" >/dev/null
fi
cmake --build "$BUILD" -j "${JOBS:-2}"
so=$(ls "$BUILD"/_core*.so | head -1)
ln -sf "$(realpath "$so")" "src/anoncore/$(basename "$so")"
echo "built $(basename "$so")"
