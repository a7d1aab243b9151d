#include "eddy/core/error.h"

namespace eddy {

void require_param(bool ok, const char* method, const std::string& name, const std::string& what) {
  if (!ok) throw Error(std::string(method) + " parameter '" + name + "': " + what);
}

void demand_failed(const char* condition, const char* file, int line) {
  throw std::logic_error(std::string("internal error: ") + condition + " failed at " + file + ":" +
                         std::to_string(line));
}

}  // namespace eddy
