#pragma once
// Soft bodies and cloth as a graph value (the "soft" socket type). Its own
// header, so that only what handles them pulls in Eigen through core/pd.
#include "eddy/core/pd/soft.h"
#include "eddy/graph/value.h"

namespace eddy {

template <>
struct ValueTraits<SoftBodies> {
  static const char* name() { return "soft"; }
  static std::size_t bytes(const SoftBodies& s) {
    return s.size() * (3 * sizeof(Vec3d) + sizeof(double) + 1 + sizeof(Vec3d)) + s.tets.size() * 16 +
           s.tris.size() * 12 + s.surface.memory_bytes() + s.embed_node.size() * (16 + 32) +
           s.contact_slots.size() * (4 + 8);
  }
};

}  // namespace eddy
