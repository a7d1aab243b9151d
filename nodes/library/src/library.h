#pragma once
// The built-in node library, registered by the plug-in entry point in plugin.cpp.
#include "eddy/graph/registry.h"

namespace eddy::library {

void register_emitters(Registry& r);
void register_colliders(Registry& r);
void register_pbf(Registry& r);
void register_io(Registry& r);

}  // namespace eddy::library
