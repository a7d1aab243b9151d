// The CPU executor's process-wide state: the switch for its AVX2 dispatch
// and the CPU's answer, asked once.
#include "eddy/core/cpu_executor.h"

namespace eddy {

bool& cpu_simd_flag() {
  static bool on = true;
  return on;
}

bool cpu_supports_avx2() {
#if EDDY_CPU_DISPATCH
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
#else
  return false;
#endif
}

}  // namespace eddy
