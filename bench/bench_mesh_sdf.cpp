// Sampling a closed mesh's signed distance on a dense grid, as ColliderMesh,
// ColliderSoft, mesh-shaped sources and ParticlesFromMesh do (a deforming
// mesh every frame): Eddy's exact sampler (eddy/core/mesh_sdf.h: a triangle
// hierarchy, one closest-point query per node) against the OpenVDB path it
// replaced (meshToVolume with a band wide enough to reach every node,
// sampled at the nodes), alternated three times in one run, the best time
// of each kept. Also the largest difference between the two (OpenVDB's is
// trilinear between its own voxels, so it differs by a fraction of a voxel).
//
//   build/bin/eddy_bench_mesh_sdf [examples/assets/lemon.obj]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "eddy/core/mesh_sdf.h"
#include "eddy/surfacing/surfacing.h"

using namespace eddy;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void run(const char* name, const Mesh& mesh, double dx) {
  double exact_s = 1e30, vdb_s = 1e30;
  SampledSdf a, b;
  for (int rep = 0; rep < 3; ++rep) {
    auto t = Clock::now();
    a = mesh_to_sdf(mesh, dx, 4 * dx);
    exact_s = std::min(exact_s, seconds_since(t));
    t = Clock::now();
    b = mesh_to_sdf_openvdb(mesh, dx, 4 * dx);
    vdb_s = std::min(vdb_s, seconds_since(t));
  }
  float worst = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i) worst = std::max(worst, std::fabs(a.values[i] - b.values[i]));
  std::printf("%-28s %5zu faces, %4d x %4d x %4d nodes: eddy %7.3f s, OpenVDB %7.3f s, %6.1fx; largest difference "
              "%.2f voxels\n",
              name, mesh.face_count(), a.dims[0], a.dims[1], a.dims[2], exact_s, vdb_s, vdb_s / exact_s,
              worst / dx);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string lemon = argc > 1 ? argv[1] : "examples/assets/lemon.obj";
  std::printf("mesh signed distance on a dense grid, margin 4 voxels (best of 3, alternated)\n");
  run("slab 1.2 x 0.1 x 0.6 m, 1 cm", box_mesh(vec3(0.0f), vec3(0.6f, 0.05f, 0.3f)), 0.01);
  run("sphere r 0.2 m, 5 mm", sphere_mesh(0.2f, 48, 96), 0.005);
  try {
    run("lemon (example), 2 mm", read_mesh(lemon), 0.002);
  } catch (const std::exception& e) {
    std::printf("lemon: %s (pass the path of examples/assets/lemon.obj)\n", e.what());
  }
  return 0;
}
