// The PBF step of core/pbf/solver.h instantiated on the CUDA executor.
#include "cuda_executor.cuh"
#include "eddy/core/pbf/solver.h"
#include "eddy/gpu/gpu.h"

namespace eddy::gpu {

bool built_with_cuda() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

std::string device_description() {
  if (device_count() == 0) return "no CUDA device";
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.totalGlobalMem >> 20) + " MiB)";
}

std::unique_ptr<PbfSolver> make_pbf_solver_cuda(const PbfParams& p) {
  if (device_count() == 0) throw Error("the CUDA backend found no CUDA device");
  return std::make_unique<PbfSolverT<CudaExecutor>>(p, CudaExecutor());
}

}  // namespace eddy::gpu
