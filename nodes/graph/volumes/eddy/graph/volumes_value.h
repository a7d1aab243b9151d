#pragma once
// Volumes (OpenVDB grids, type-erased by surfacing/) as a value that flows
// between nodes: the one place that names the type, for the node library
// and the server alike.
#include "eddy/graph/value.h"
#include "eddy/surfacing/volume.h"

namespace eddy {

template <>
struct ValueTraits<Volumes> {
  static const char* name() { return "volumes"; }
  static std::size_t bytes(const Volumes& v) { return v.memory_bytes(); }
};

}  // namespace eddy
