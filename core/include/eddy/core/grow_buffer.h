#pragma once
// grow_buffer: the one way solvers size their scratch arrays inside a step.
#include <cstddef>

namespace eddy {

// Grows a host or device vector to hold at least n elements, with an eighth
// more as headroom (sizes change a little from step to step); never shrinks,
// so a step allocates only when it needs more than any step before.
template <class V>
void grow_buffer(V& v, std::size_t n) {
  if (v.size() < n) v.resize(n + n / 8);
}

}  // namespace eddy
