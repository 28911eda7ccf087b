#!/usr/bin/env bash
# Static typing checks: `mypy --strict` on src/anoncore (config in pyproject.toml) and mypy.stubtest of the
# compiled module's stubs (src/anoncore/_core/*.pyi) against the anoncore._core that Python imports.
#
# Usage: tools/check_types.sh                 checks the installed anoncore (CI: after `pip install .`)
#        PYTHONPATH=src tools/check_types.sh  checks the dev build (after tools/devbuild.sh)
# The allowlist (tools/stubtest_allowlist.txt) holds only pybind11 artefacts; each entry says why.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
echo "check_types: mypy (strict) on src/anoncore"
"$PY" -m mypy
echo "check_types: every submodule of anoncore._core has a stub"
# stubtest checks only the modules that have stubs, so a new `m.def_submodule` without one would pass unseen.
"$PY" - <<'PYEOF'
import pathlib, sys, types
import anoncore
import anoncore._core as core
runtime = {n for n in dir(core) if isinstance(getattr(core, n), types.ModuleType)}
stubdir = pathlib.Path(anoncore.__file__).parent / "_core"
stubs = {p.stem for p in stubdir.glob("*.pyi")} - {"__init__"}
print(f"  {core.__file__}")
if runtime != stubs:
    sys.exit(f"check_types: submodules without a stub: {sorted(runtime - stubs)}; "
             f"stubs without a submodule: {sorted(stubs - runtime)}")
PYEOF
echo "check_types: stubtest anoncore._core"
"$PY" -m mypy.stubtest anoncore._core --allowlist tools/stubtest_allowlist.txt
