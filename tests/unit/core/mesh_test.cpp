// Mesh files: .obj and .ply round trips keep points, normals and faces;
// bad files are named with the line (or what is missing).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "eddy/core/error.h"
#include "eddy/core/mesh.h"
#include "../../temp_dir.h"
#include "scenes.h"

namespace eddy {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const char* name) { return test::fresh_temp_dir("eddy_mesh_", name); }


TEST(MeshFile, ObjAndPlyRoundTripsGiveTheSameMesh) {
  const fs::path d = temp_dir("mesh");
  Mesh m = sphere_mesh(0.25f, 12, 20);
  compute_point_normals(m);
  for (const char* name : {"m.obj", "m.ply"}) {
    const std::string file = (d / name).string();
    write_mesh(file, m);
    const Mesh r = read_mesh(file);
    ASSERT_EQ(r.points.size(), m.points.size()) << name;
    for (std::size_t i = 0; i < m.points.size(); ++i) {
      EXPECT_EQ(r.points[i], m.points[i]) << name;  // %.9g and binary floats are exact
      EXPECT_NEAR(length(r.normals[i] - m.normals[i]), 0.0f, 1e-5f) << name;
    }
    EXPECT_EQ(r.triangles, m.triangles) << name;
    EXPECT_EQ(r.quads, m.quads) << name;
  }
  fs::remove_all(d);
}

TEST(MeshFile, BadFilesAreNamedWithTheLine) {
  const fs::path d = temp_dir("badmesh");
  std::ofstream(d / "a.obj") << "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n";
  std::ofstream(d / "b.obj") << "v 0 0 zero\n";
  std::ofstream(d / "c.ply") << "ply\nformat binary_little_endian 1.0\nelement vertex 100\nproperty float x\n"
                                "property float y\nproperty float z\nend_header\nabc";
  // Found by fuzz/fuzz_ply: a second vertex element without the first's
  // normals used to read the normals at index -1.
  std::ofstream(d / "d.ply") << "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
                                "property float z\nproperty float nx\nproperty float ny\nproperty float nz\n"
                                "element vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
                                "0 0 0 0 0 1\n1 1 1\n";
  for (const auto& [file, what] : std::vector<std::pair<std::string, std::string>>{
           {"a.obj", ":4: "}, {"b.obj", ":1: "}, {"c.ply", "truncated"}, {"missing.obj", "mesh file"},
           {"d.ply", "d.ply: not a readable PLY mesh: more than one vertex element"}}) {
    try {
      read_mesh((d / file).string());
      FAIL() << file;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
  fs::remove_all(d);
}

}  // namespace
}  // namespace eddy
