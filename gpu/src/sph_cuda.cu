// The SPH step of core/sph/solver.h instantiated on the CUDA executor.
#include "cuda_executor.cuh"
#include "eddy/core/sph/solver.h"
#include "eddy/gpu/gpu.h"

namespace eddy::gpu {

std::unique_ptr<SphSolver> make_sph_solver_cuda(const SphParams& p) {
  if (device_count() == 0) throw Error("the CUDA backend found no CUDA device");
  return std::make_unique<SphSolverT<CudaExecutor>>(p, CudaExecutor());
}

}  // namespace eddy::gpu
