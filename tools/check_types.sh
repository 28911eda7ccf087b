#!/usr/bin/env bash
# Static typing checks: `mypy --strict` on src/anoncore (config in pyproject.toml) and mypy.stubtest of the
# compiled module's stubs (src/anoncore/_core/*.pyi) against the anoncore._core that Python imports.
#
# Usage: tools/check_types.sh            checks the installed anoncore (CI: after `pip install .`)
#        PYTHONPATH=src tools/check_types.sh   checks the dev build (tools/devbuild.sh)
# The allowlist holds only pybind11 artefacts; each entry says why.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
echo "check_types: mypy (strict) on src/anoncore"
"$PY" -m mypy
echo "check_types: stubtest anoncore._core ($("$PY" -c 'import anoncore._core as c; print(c.__file__)'))"
"$PY" -m mypy.stubtest anoncore._core --allowlist tools/stubtest_allowlist.txt
