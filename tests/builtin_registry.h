#pragma once
// The built-in node library as the tests load it: the plug-in built beside
// them, loaded once per test process.
#include <string>

#include "eddy/graph/registry.h"

namespace eddy::test {

inline Registry& builtin_registry() {
  static Registry r;
  static bool loaded = false;
  if (!loaded) {
    r.load_plugin(std::string(EDDY_BINARY_DIR) + "/plugins/eddy_builtin_nodes.so");
    loaded = true;
  }
  return r;
}

}  // namespace eddy::test
