// The MPM step of core/mpm/solver.h instantiated on the CUDA executor.
#include "cuda_executor.cuh"
#include "eddy/core/mpm/solver.h"
#include "eddy/gpu/gpu.h"

namespace eddy::gpu {

std::unique_ptr<MpmSolver> make_mpm_solver_cuda(const MpmParams& p) {
  if (device_count() == 0) throw Error("the CUDA backend found no CUDA device");
  return std::make_unique<MpmSolverT<CudaExecutor>>(p, CudaExecutor());
}

}  // namespace eddy::gpu
