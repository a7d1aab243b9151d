#!/usr/bin/env bash
# Packs the GPU test and benchmark programs of a build, with the shared
# libraries they load that a bare CUDA machine may lack (Eddy's own, TBB,
# the CUDA runtime), into one folder, so the GPU checks can run on a
# machine that has a GPU and a driver but no build of Eddy:
#   scripts/gpu_bundle.sh [BUILD_DIR] [DEST]      (defaults: build, gpu-bundle)
# then, there: scripts/gpu_check.sh DEST LOG_DIR
set -euo pipefail
build=${1:-build}
dest=${2:-gpu-bundle}
programs=(eddy_cuda_executor_tests eddy_gpu_tests eddy_bench_gpu eddy_bench_gpu_neighbors eddy_bench_pd)
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib"
for p in "${programs[@]}"; do
  [ -x "$build/bin/$p" ] || { echo "gpu_bundle: $build/bin/$p is missing (build with CUDA first)" >&2; exit 2; }
  cp "$build/bin/$p" "$dest/bin/"
  # Every library outside the C/C++ runtime that the program resolves here.
  ldd "$build/bin/$p" | awk '/=> \// {print $3}' |
    grep -v -E '/(libc|libm|libgcc_s|libstdc\+\+|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$dest/lib/"; done
done
strip --strip-unneeded "$dest"/bin/* "$dest"/lib/* 2>/dev/null || true
du -sh "$dest"
