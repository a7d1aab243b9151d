#include "eddy/core/error.h"

namespace eddy {

void demand_failed(const char* condition, const char* file, int line) {
  throw std::logic_error(std::string("internal error: ") + condition + " failed at " + file + ":" +
                         std::to_string(line));
}

}  // namespace eddy
