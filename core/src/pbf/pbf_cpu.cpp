// The PBF step instantiated on the TBB executor.
#include "eddy/core/cpu_executor.h"
#include "eddy/core/pbf/solver.h"

namespace eddy {

template class PbfSolverT<CpuExecutor>;

std::unique_ptr<PbfSolver> make_pbf_solver_cpu(const PbfParams& p, int threads) {
  return std::make_unique<PbfSolverT<CpuExecutor>>(p, CpuExecutor(threads));
}

}  // namespace eddy
