// The MPM step instantiated on the TBB executor.
#include "eddy/core/cpu_executor.h"
#include "eddy/core/mpm/solver.h"

namespace eddy {

template class MpmSolverT<CpuExecutor>;

std::unique_ptr<MpmSolver> make_mpm_solver_cpu(const MpmParams& p, int threads) {
  return std::make_unique<MpmSolverT<CpuExecutor>>(p, CpuExecutor(threads));
}

}  // namespace eddy
