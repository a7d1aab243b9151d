// Built when nvcc is not found: the CUDA backend reports its absence.
#include "eddy/core/error.h"
#include "eddy/gpu/gpu.h"

namespace eddy::gpu {

bool built_with_cuda() { return false; }
int device_count() { return 0; }
std::string device_description() { return "built without CUDA"; }
std::unique_ptr<PbfSolver> make_pbf_solver_cuda(const PbfParams&) {
  throw Error("the CUDA backend is not available: eddy was built without CUDA");
}
std::unique_ptr<SphSolver> make_sph_solver_cuda(const SphParams&) {
  throw Error("the CUDA backend is not available: eddy was built without CUDA");
}
std::unique_ptr<MpmSolver> make_mpm_solver_cuda(const MpmParams&) {
  throw Error("the CUDA backend is not available: eddy was built without CUDA");
}
std::unique_ptr<PdDeviceIterations> make_pd_iterations_cuda() {
  throw Error("the CUDA backend is not available: eddy was built without CUDA");
}

}  // namespace eddy::gpu
