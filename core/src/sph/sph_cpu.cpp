// The SPH step instantiated on the TBB executor.
#include "eddy/core/cpu_executor.h"
#include "eddy/core/sph/solver.h"

namespace eddy {

template class SphSolverT<CpuExecutor>;

std::unique_ptr<SphSolver> make_sph_solver_cpu(const SphParams& p, int threads) {
  return std::make_unique<SphSolverT<CpuExecutor>>(p, CpuExecutor(threads));
}

}  // namespace eddy
