#!/usr/bin/env bash
# The Python package as a user installs it: a fresh virtual environment,
# `pip install .` from the repository (CPU build), then 10 circles packed to
# the record. Exits 77 (skip) when PyPI cannot be reached.
#   pip_install.sh PYTHON SOURCE_ROOT WORK_DIR
set -euo pipefail
py=$1 src=$2 work=$3

rm -rf "$work"
mkdir -p "$work"
"$py" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check)
log=$work/pip.log
if ! "${pip[@]}" install --timeout 30 --retries 1 --config-settings=setup-args=-Dcuda=disabled "$src" >"$log" 2>&1; then
  if grep -Eqi 'NewConnectionError|Temporary failure in name resolution|Network is unreachable|No matching distribution found for meson-python' "$log"; then
    tail -5 "$log"
    echo "pip_install: PyPI unreachable; skipped"
    exit 77
  fi
  tail -40 "$log"
  echo "pip_install: pip install failed"
  exit 1
fi
tail -1 "$log"

# only the Python package: no command, library or headers in the environment
files=$("${pip[@]}" show -f jostle)
echo "$files" | sed -n '/^Files:/,$p'
if echo "$files" | grep -Eq 'bin/jostle|libjostle|include/|\.pc$'; then
  echo "pip_install: the wheel holds more than the Python package"
  exit 1
fi
echo "$files" | grep -q 'jostle/_jostle' || { echo "pip_install: no extension installed"; exit 1; }

# the done-when, run outside the source tree
cd "$work"
"$work/venv/bin/python" -c "import jostle; r = jostle.pack_circles(range(1, 11), time=30); assert abs(r.R / r.record - 1) < 1e-9, (r.R, r.record); print('R', r.R, 'record', r.record, r.device_name, r.stopped_by)"
