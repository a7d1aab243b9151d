#pragma once
// Rigid bodies as a graph value (the "bodies" socket type). Its own header,
// so that only what handles bodies pulls in Eigen through core/rigid.
#include "eddy/core/rigid/bodies.h"
#include "eddy/graph/value.h"

namespace eddy {

template <>
struct ValueTraits<Bodies> {
  static const char* name() { return "bodies"; }
  static std::size_t bytes(const Bodies& b) {
    std::size_t names = 0, meshes = 0;
    for (const auto& n : b.name) names += n.size();
    // A mesh shared by consecutive bodies (one RigidBody node's) is counted once.
    const BodyMesh* last = nullptr;
    for (const auto& g : b.geometry)
      if (g.mesh && g.mesh.get() != last) {
        last = g.mesh.get();
        meshes += last->mesh.memory_bytes() + last->sdf.values.size() * sizeof(float) + last->samples.size() * sizeof(Vec3d);
      }
    return names + meshes + b.size() * (sizeof(BodyGeometry) + 2 * sizeof(double) + 5 * sizeof(Vec3d) + sizeof(Quatd));
  }
};

}  // namespace eddy
