// The neighbour grid instantiated on the TBB executor (used by tests and
// benchmarks directly; the solvers instantiate their own).
#include "eddy/core/cpu_executor.h"
#include "eddy/core/neighbor_grid.h"

namespace eddy {
template class NeighborGrid<CpuExecutor>;
}  // namespace eddy
