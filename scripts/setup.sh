#!/usr/bin/env bash
# Installs the Debian packages Eddy builds with, and only those that are missing
# (Chromium is for the editor's browser tests, clang and its runtimes for the fuzz
# targets; pybind11, numpy and pytest for the Python module, Blender and Xvfb
# for its add-on's tests; Slurm and munge for the farm's test on a private
# one-node cluster; MuJoCo and Bullet for the rigid-body benchmark's side-by-side
# figures; Node.js and npm come with the machine).
# Quiet and quick when everything is already there: one dpkg-query, no apt-get.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtbb-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libcpp-httplib-dev
  libopenvdb-dev libboost-dev libimath-dev
  clang libclang-rt-14-dev
  chromium
  pybind11-dev python3-dev python3-numpy python3-pytest
  blender xvfb xauth
  slurm-wlm munge
  libmujoco-dev libbullet-dev
)

installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null | awk '$4 == "installed" {print $1}' || true)
missing=()
for p in "${packages[@]}"; do
  grep -qx "$p" <<<"$installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "eddy setup: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "eddy setup: done"
