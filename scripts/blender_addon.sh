#!/usr/bin/env bash
# Zips the Blender add-on with Eddy's Python module inside it (the add-on
# finds it "beside" itself): scripts/blender_addon.sh BUILD_DIR ZIP
# Inside: eddy_blender/python/eddy (the module), lib/ (Eddy's libraries)
# and plugins/ (the node libraries), laid out as in the build tree. The
# system libraries (TBB, OpenVDB) come from the machine's packages.
set -euo pipefail
build=$(cd "$1" && pwd)
zip=$(realpath -m "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ ! -f "$build/python/eddy/__init__.py" ]]; then
  echo "blender-addon: no Python module in $build/python (needs pybind11-dev; run make build)" >&2
  exit 2
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -r "$root/dcc/blender/eddy_blender" "$stage/eddy_blender"
mkdir -p "$stage/eddy_blender/python"
cp -r "$build/python/eddy" "$stage/eddy_blender/python/eddy"
mkdir -p "$stage/eddy_blender/lib" "$stage/eddy_blender/plugins"
cp "$build"/lib/*.so* "$stage/eddy_blender/lib/"
cp "$build"/plugins/*.so "$stage/eddy_blender/plugins/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
rm -f "$zip.tmp"
(cd "$stage" && python3 -m zipfile -c "$zip.tmp" eddy_blender)
mv "$zip.tmp" "$zip"
echo "blender-addon: $zip (Blender: Edit > Preferences > Add-ons > Install...)"
