#!/usr/bin/env bash
# Runs the GPU checks from a folder packed by scripts/gpu_bundle.sh, on a
# machine with a CUDA GPU, writing one log per check into LOG_DIR:
#   tests.log     the CUDA executor tests and the backend-against-CPU tests
#   bench.log     eddy_bench_gpu (the CUDA backend against the CPU, side by side),
#                 eddy_bench_gpu_neighbors (the neighbour search's two shapes) and
#                 the Chebyshev lines of eddy_bench_pd (PD's iterations on the CPU and CUDA)
#   sanitizer.log compute-sanitizer memcheck over the tests, racecheck over
#                 the executor's kernels (where compute-sanitizer is installed)
# Exits non-zero when a test or the benchmark fails.
set -uo pipefail
bundle=${1:?usage: gpu_check.sh BUNDLE_DIR LOG_DIR}
logs=${2:?usage: gpu_check.sh BUNDLE_DIR LOG_DIR}
mkdir -p "$logs"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  for t in eddy_cuda_executor_tests eddy_gpu_tests; do
    echo "== $t"
    timeout 120 "$bundle/bin/$t" || status=1
  done
} > "$logs/tests.log" 2>&1
echo "== tests: $([ $status = 0 ] && echo passed || echo FAILED)"
{
  timeout 200 "$bundle/bin/eddy_bench_gpu" || status=1
  timeout 120 "$bundle/bin/eddy_bench_gpu_neighbors" || status=1
  timeout 120 "$bundle/bin/eddy_bench_pd" 20 chebyshev || status=1
} > "$logs/bench.log" 2>&1
cat "$logs/bench.log"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$sanitizer" ]; then
  {
    for t in eddy_cuda_executor_tests eddy_gpu_tests; do
      echo "== memcheck $t"
      timeout 150 "$sanitizer" --tool memcheck --leak-check no --error-exitcode 3 "$bundle/bin/$t" --gtest_brief=1
      echo "exit $?"
    done
    echo "== racecheck eddy_cuda_executor_tests"
    timeout 90 "$sanitizer" --tool racecheck --error-exitcode 3 "$bundle/bin/eddy_cuda_executor_tests" --gtest_brief=1
    echo "exit $?"
  } > "$logs/sanitizer.log" 2>&1
  grep -E "^== |^exit |ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer.log"
fi
exit $status
