// The Projective Dynamics iterations of core/pd/iteration.h on the CUDA
// executor: the system's arrays live on the device, copied again only where
// PdSolver says they changed; each step uploads y, runs the Chebyshev
// iterations there and brings x back.
#include "cuda_executor.cuh"
#include "eddy/core/pd/iteration.h"
#include "eddy/gpu/gpu.h"

namespace eddy::gpu {

std::unique_ptr<PdDeviceIterations> make_pd_iterations_cuda() {
  if (device_count() == 0) throw Error("the CUDA backend found no CUDA device");
  return std::make_unique<PdIterationsOn<CudaExecutor>>();
}

}  // namespace eddy::gpu
