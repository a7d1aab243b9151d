#!/usr/bin/env bash
# Runs the add-on's tests in Blender, headless: dcc/blender/tests/run.sh BUILD_DIR
# Exits 77 (a skip for ctest) when Blender is not installed.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v blender >/dev/null; then
  echo "SKIP: blender is not installed (scripts/setup.sh installs Debian's); the add-on was not tested"
  exit 77
fi
scripts=$(mktemp -d)
trap 'rm -rf "$scripts"' EXIT
mkdir -p "$scripts/addons" "$scripts/tmp"
# Blender's own temporary folders (blender_XXXXXX) go there too: the
# interactive run does not always remove its own.
export TMPDIR="$scripts/tmp"
ln -s "$here/../eddy_blender" "$scripts/addons/eddy_blender"
export BLENDER_USER_SCRIPTS="$scripts" EDDY_PYTHONPATH="$build/python" EDDY_PLUGIN_PATH=
quiet() { grep -v "^Read prefs\|^Blender quit\|^Color management\|^$" || true; }
# Headless: the operators, the objects, colliders, the panel's parameters.
blender -b --factory-startup --python-exit-code 1 --python "$here/test_addon.py" 2>&1 | quiet
status=${PIPESTATUS[0]}
((status == 0)) || exit "$status"
# With a window (Xvfb, Mesa): the interactive cook in its thread, and a cancel.
if command -v xvfb-run >/dev/null; then
  timeout 600 xvfb-run -a -s "-screen 0 1280x800x24" \
    blender --factory-startup --python "$here/test_modal.py" 2>&1 | quiet
  status=${PIPESTATUS[0]}
  ((status == 0)) || { echo "the interactive test failed (status $status)"; exit 1; }
else
  echo "note: xvfb-run is not installed (scripts/setup.sh installs it): the interactive cook was not tested"
fi
