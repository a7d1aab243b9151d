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
mkdir -p "$scripts/addons"
ln -s "$here/../eddy_blender" "$scripts/addons/eddy_blender"
BLENDER_USER_SCRIPTS="$scripts" EDDY_PYTHONPATH="$build/python" EDDY_PLUGIN_PATH= \
  blender -b --factory-startup --python-exit-code 1 --python "$here/test_addon.py" 2>&1 |
  grep -v "^Read prefs\|^Blender quit\|^Color management"
exit "${PIPESTATUS[0]}"
