// Round trips (points <-> VDB points, .vdb files), bad files, the mesher's
// quads and triangles, and mesh-derived SDFs against analytic distances.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include "eddy/core/error.h"
#include "eddy/core/mesh.h"
#include "eddy/core/mesh_sdf.h"
#include "eddy/surfacing/surfacing.h"
#include "../../temp_dir.h"
#include "../core/scenes.h"

namespace eddy {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const char* name) { return test::fresh_temp_dir("eddy_surf_", name); }


Points random_points(std::size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  Points p(n);
  p.radius = 0.01f;
  p.add("density", AttribType::Float);
  p.add("id", AttribType::Int);
  p.add("Cd", AttribType::Vec3);
  for (std::size_t i = 0; i < n; ++i) {
    p.P()[i] = vec3(u(rng), u(rng) + 1.0f, u(rng));
    p.v()[i] = vec3(u(rng), u(rng), u(rng));
    p.get_float("density")[i] = 1000 + u(rng);
    p.get_int("id")[i] = int32_t(i);
    p.get_vec3("Cd")[i] = vec3(u(rng), 0.5f, 1.0f);
  }
  return p;
}

TEST(VdbPoints, RoundTripKeepsEveryPointAndAttribute) {
  const Points p = random_points(5000);
  const Volume v = points_to_vdb(p, 0.02, {"*"});
  EXPECT_EQ(v.grid_class(), GridClass::Points);
  EXPECT_EQ(v.name(), "points");
  EXPECT_EQ(v.point_count(), p.size());
  EXPECT_DOUBLE_EQ(v.voxel_size(), 0.02);
  const Points q = vdb_to_points(v);
  ASSERT_EQ(q.size(), p.size());
  EXPECT_FLOAT_EQ(q.radius, p.radius);
  // The grid orders points by voxel; match them through `id`.
  const int32_t* id = q.get_int("id");
  for (std::size_t k = 0; k < q.size(); ++k) {
    const std::size_t i = std::size_t(id[k]);
    ASSERT_LT(i, p.size());
    EXPECT_NEAR(length(q.P()[k] - p.P()[i]), 0.0f, 1e-6f);
    EXPECT_EQ(q.v()[k], p.v()[i]);
    EXPECT_EQ(q.get_float("density")[k], p.get_float("density")[i]);
    EXPECT_EQ(q.get_vec3("Cd")[k], p.get_vec3("Cd")[i]);
  }
}

TEST(VdbPoints, OnlyTheNamedAttributesAreStored) {
  const Points p = random_points(100);
  const Points q = vdb_to_points(points_to_vdb(p, 0.02, {"density"}));
  EXPECT_TRUE(q.has("density"));
  EXPECT_TRUE(q.has("v"));
  EXPECT_FALSE(q.has("id"));
  EXPECT_THROW(points_to_vdb(p, 0.02, {"temperature"}), Error);
}

TEST(VdbPoints, AVoxelSizeTooSmallForMemoryIsRefusedUpFront) {
  const Points p = random_points(20000);
  try {
    points_to_vdb(p, 1e-7, {});
    FAIL() << "accepted a voxel of 0.1 micrometre";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Dx"), std::string::npos) << e.what();
  }
}

TEST(VdbFile, WriteThenReadKeepsNamesClassesVoxelSizeAndPointCount) {
  const fs::path d = temp_dir("vdb");
  const Points p = random_points(3000);
  Volumes vs;
  vs.grids.push_back(smooth_liquid_sdf(p, {}));
  vs.grids.push_back(points_to_vdb(p, 0.02, {"*"}));
  vs.grids.push_back(liquid_velocity(p, vs.grids[0], 0.03, 0.015, 0.0));  // the vec3s "v"
  ASSERT_GT(vs.grids[2].active_voxels(), 0u);
  const std::string file = (d / "frame.0001.vdb").string();
  write_vdb(file, vs);
  const Volumes back = read_vdb(file);
  ASSERT_EQ(back.grids.size(), 3u);
  for (const Volume& g : vs.grids) {
    const Volume* r = back.find(g.name());  // OpenVDB lists a file's grids by name
    ASSERT_NE(r, nullptr) << g.name();
    EXPECT_EQ(r->value_type(), g.value_type());
    EXPECT_EQ(r->grid_class(), g.grid_class());
    EXPECT_DOUBLE_EQ(r->voxel_size(), g.voxel_size());
    EXPECT_EQ(r->active_voxels(), g.active_voxels());
    EXPECT_EQ(r->point_count(), g.point_count());
  }
  EXPECT_EQ(back.find("points")->point_count(), p.size());
  // Only the final file is left: no temporary beside it.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(d)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1);
  fs::remove_all(d);
}

TEST(VdbFile, MissingCorruptAndTruncatedFilesAreNamed) {
  const fs::path d = temp_dir("bad");
  auto expect_error = [](const std::string& path, const char* what) {
    try {
      read_vdb(path);
      FAIL() << "read " << path;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(path), std::string::npos) << m;
      EXPECT_NE(m.find(what), std::string::npos) << m;
    }
  };
  expect_error((d / "nope.vdb").string(), "no such");
  std::ofstream(d / "text.vdb") << "this is not a vdb file at all";
  expect_error((d / "text.vdb").string(), "not a readable VDB");
  // A real file cut in half.
  Volumes vs;
  vs.grids.push_back(smooth_liquid_sdf(random_points(2000), {}));
  write_vdb((d / "whole.vdb").string(), vs);
  const auto size = fs::file_size(d / "whole.vdb");
  fs::copy_file(d / "whole.vdb", d / "half.vdb");
  fs::resize_file(d / "half.vdb", size / 2);
  expect_error((d / "half.vdb").string(), "not a readable VDB");
  fs::remove_all(d);
}

// A damaged length in the layout around the trees (here a metadata name's)
// is refused by field and byte before OpenVDB allocates what it declares.
TEST(VdbFile, ADamagedLengthIsNamedWithItsByteOffset) {
  const fs::path d = temp_dir("len");
  Volumes vs;
  vs.grids.push_back(smooth_liquid_sdf(random_points(500), {}));
  const std::string file = (d / "surface.vdb").string();
  write_vdb(file, vs);
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const char huge[4] = {'\xff', '\xff', '\xff', '\x7f'};
  auto expect_refused = [&](std::size_t at, const std::string& what) {
    std::string damaged = bytes;
    damaged.replace(at, 4, huge, 4);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << damaged;
    try {
      read_vdb(file);
      FAIL() << "read a file with a damaged " << what;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(file + ": not a readable VDB file (damaged?): " + what), std::string::npos) << m;
      EXPECT_NE(m.find(" at byte " + std::to_string(at) + " declares "), std::string::npos) << m;
    }
  };
  // The grid's metadata holds "class" = "level set": a 32-bit length 5, then the name.
  const std::size_t name = bytes.find(std::string("\x05\x00\x00\x00" "class", 9));
  ASSERT_NE(name, std::string::npos);
  expect_refused(name, "grid 'surface' metadata name");
  // The tree's root follows the transform (type name, then five double
  // triples), the buffer count and the float background: 2^31 tiles.
  const std::size_t map = bytes.find("UniformScaleMap");
  ASSERT_NE(map, std::string::npos);
  const std::size_t tiles_at = map + 15 + 120 + 4 + 4;
  expect_refused(tiles_at, "grid 'surface' root (2147483647 tiles");
  // The first internal node's values: after the root's tiles (origin, value,
  // flag), the child's origin and two 4096-byte masks come a flag byte, the
  // inactive values and selection mask it announces, then the block's
  // size. Declared as stored raw and 1 MiB long, OpenVDB would read it into
  // the node's 128 KiB buffer.
  uint32_t tiles = 0;
  std::memcpy(&tiles, bytes.data() + tiles_at, 4);
  std::size_t at = tiles_at + 8 + tiles * (12 + 4 + 1) + 12 + 2 * 4096;
  const int flag = bytes[at++];
  if (flag == 2 || flag == 4 || flag == 5) at += 4;
  if (flag == 5) at += 4;
  if (flag >= 3 && flag <= 5) at += 4096;
  for (const int64_t raw : {-(int64_t(1) << 20), std::numeric_limits<int64_t>::min()}) {
    std::string damaged = bytes;
    std::memcpy(damaged.data() + at, &raw, 8);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << damaged;
    try {
      read_vdb(file);
      FAIL() << "read a file whose node block overflows its buffer";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("grid 'surface' internal node values block at byte " + std::to_string(at) +
                                           " is stored raw with " + std::to_string(uint64_t(0) - uint64_t(raw)) +
                                           " bytes where the node holds "),
                std::string::npos)
          << e.what();
    }
  }
  // A metadata value's type changed to a larger registered one: OpenVDB
  // reads the type's size, not the entry's, and so does the check, which
  // then finds the rest out of place instead of OpenVDB reading garbage
  // lengths (fuzz_vdb: gigabytes allocated).
  const std::size_t int64_type = bytes.find(std::string("\x05\x00\x00\x00int64", 9));
  ASSERT_NE(int64_type, std::string::npos);
  std::string retyped = bytes;
  retyped.replace(int64_type + 4, 5, "mat4d");
  std::ofstream(file, std::ios::binary | std::ios::trunc) << retyped;
  EXPECT_THROW(read_vdb(file), Error);
  // A grid's start offset moved past where its descriptor ends: OpenVDB
  // reads the grid from the offset, and so must the check (it read on from
  // the descriptor, and OpenVDB then met lengths the check had not seen).
  const std::size_t offsets = bytes.find("Tree_float_5_4_3") + 16 + 4;  // after the empty instance-parent name
  std::string moved = bytes;
  moved[offsets] = char(moved[offsets] + 5);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << moved;
  EXPECT_THROW(read_vdb(file), Error);
  fs::remove_all(d);
}

// A points grid whose positions attribute is renamed in the file (a file
// fuzz/fuzz_vdb made this way ended the process from inside OpenVDB's
// accessor): the grid reads, and turning it into particles says what is
// missing instead of throwing OpenVDB's lookup error past every handler.
TEST(VdbFile, APointsGridWithoutPositionsIsRefusedByName) {
  const fs::path d = temp_dir("nop");
  Volumes vs;
  vs.grids.push_back(points_to_vdb(random_points(500), 0.02, {"id"}));
  const std::string file = (d / "points.vdb").string();
  write_vdb(file, vs);
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // The attribute descriptor stores each name as a 32-bit length and its
  // characters: "P" is 01 00 00 00 'P', once in the file.
  const std::string name("\x01\x00\x00\x00P", 5);
  const std::size_t at = bytes.find(name);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(bytes.find(name, at + 1), std::string::npos);
  bytes[at + 4] = 'Q';
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  const Volumes back = read_vdb(file);
  ASSERT_EQ(back.grids.size(), 1u);
  try {
    vdb_to_points(back.grids[0]);
    FAIL() << "read points without positions";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("points grid 'points'"), std::string::npos) << m;
    EXPECT_NE(m.find("no positions (attribute 'P')"), std::string::npos) << m;
  }
  fs::remove_all(d);
}

// OpenVDB's reader of point data asserts (ends the process) on some damaged
// fields, such as an attribute page whose compressed size is 0 (found by
// fuzz/fuzz_vdb), or allocates what a damaged length declares. A 32-bit
// word zeroed at every 13th byte of a small points file's leaf buffers
// (descriptors and attribute pages, from the grid's data offset to its end): each read returns grids or throws eddy::Error, and the
// process lives on; some of the damage is the kind only the child read stops.
TEST(VdbFile, DamagedPointDataIsAnErrorNotTheEndOfTheProcess) {
  const fs::path d = temp_dir("pointdata");
  Points pts = random_points(40);
  for (std::size_t i = 0; i < pts.size(); ++i) pts.P()[i] = pts.P()[i] * 0.1f;  // in two or three leaves
  Volumes vs;
  vs.grids.push_back(points_to_vdb(pts, 0.05, {"id"}));
  const std::string file = (d / "points.vdb").string(), damaged = (d / "damaged.vdb").string();
  write_vdb(file, vs);
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // The file's one grid descriptor: after the header (magic, version,
  // library version, offsets flag, UUID), the file's metadata (count; name,
  // type, size, value each) and the grid count come the grid's name, type
  // and instance parent, then its start, data and end offsets.
  std::size_t o = 8 + 12 + 1 + 36;
  auto u32 = [&] {
    uint32_t v;
    std::memcpy(&v, &bytes[o], 4);
    o += 4;
    return v;
  };
  auto skip_string = [&] { o += u32(); };
  for (uint32_t m = u32(); m > 0; --m) skip_string(), skip_string(), o += u32();
  ASSERT_EQ(u32(), 1u);
  skip_string(), skip_string(), skip_string();
  int64_t offsets[3];
  std::memcpy(offsets, &bytes[o], sizeof offsets);
  ASSERT_EQ(uint64_t(offsets[2]), bytes.size());
  int read = 0, refused = 0, stopped_in_child = 0;
  for (std::size_t at = std::size_t(offsets[1]); at + 4 <= bytes.size(); at += 13) {
    std::string b = bytes;
    std::memset(&b[at], 0, 4);
    std::ofstream(damaged, std::ios::binary | std::ios::trunc) << b;
    try {
      const Volumes back = read_vdb(damaged);
      for (const Volume& g : back.grids) (void)vdb_to_points(g);
      ++read;
    } catch (const Error& e) {
      ++refused;
      stopped_in_child += std::string(e.what()).find("its point data is damaged") != std::string::npos;
    }
  }
  std::printf("%zu bytes: %d damaged files read, %d refused (%d stopped in the child read)\n", bytes.size(), read,
              refused, stopped_in_child);
  EXPECT_GT(refused, 0);
  EXPECT_GT(stopped_in_child, 0);
  fs::remove_all(d);
}

// Found by fuzz/fuzz_vdb: a points file whose attribute descriptor declares
// a name of about 900 MB, which OpenVDB fills and then copies into its
// exception's message (15 s and 3 GB under the fuzzer's sanitizers). The
// child read is bounded in memory and time: an Error, soon.
TEST(VdbFile, APointsFileDeclaringAHugeNameIsRefusedInBoundedTime) {
  const std::string file = std::string(EDDY_SOURCE_DIR) + "/tests/unit/surfacing/data/points_name_of_900MB.vdb";
  EXPECT_THROW(read_vdb(file), Error);
}

// Found by fuzz/fuzz_vdb: a points file that OpenVDB reads whole, whose
// attribute descriptor puts a name past its list of types; asking that
// attribute's type was an assertion in OpenVDB.
// And one whose uniform positions array declares fewer values than the leaf
// has points (OpenVDB checks a uniform array's index against its size too).
TEST(VdbFile, DamagedDescriptorsAndShortArraysAreNamed) {
  for (const char* name : {"points_descriptor_past_its_types.vdb", "points_uniform_array_too_short.vdb"}) {
    const std::string file = std::string(EDDY_SOURCE_DIR) + "/tests/unit/surfacing/data/" + name;
    try {
      for (const Volume& g : read_vdb(file).grids) (void)vdb_to_points(g);
      ADD_FAILURE() << "read " << name;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_TRUE(m.find("attribute descriptor puts") != std::string::npos ||
                  m.find("attribute arrays for") != std::string::npos || m.find(" values of its attribute ") != std::string::npos)
          << name << ": " << m;
    }
  }
}

TEST(Mesher, RefusesAGridThatIsNotALevelSet) {
  const Volume pts = points_to_vdb(random_points(100), 0.02, {});
  try {
    sdf_to_mesh(pts, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a float level set"), std::string::npos) << e.what();
  }
}

TEST(Mesher, QuadsAndTrianglesDescribeTheSameSurface) {
  const Mesh ref = sphere_mesh(0.3f, 24, 48);
  const Volume ls = mesh_to_level_set(ref, 0.01, 3, "ball");
  MeshingParams q;
  q.allow_quads = true;
  const MeshStats a = measure_mesh(sdf_to_mesh(ls, {})), b = measure_mesh(sdf_to_mesh(ls, q));
  EXPECT_GT(a.volume, 0.0);
  EXPECT_NEAR(a.volume / b.volume, 1.0, 1e-3);
  EXPECT_EQ(a.boundary_edges + b.boundary_edges, 0u);
  EXPECT_EQ(a.inconsistent_edges + b.inconsistent_edges, 0u);
  EXPECT_NEAR(a.volume / (4.0 / 3.0 * M_PI * 0.027), 1.0, 0.02);
}

// Eddy's exact sampler (core) beside the OpenVDB path it replaced, on the
// same nodes: the same signs wherever a node is more than a voxel from the
// surface, and distances within the half voxel OpenVDB's trilinear sampling
// of its own voxels can be off by.
TEST(MeshSdf, TheExactSamplerAgreesWithOpenVdbs) {
  const Mesh meshes[] = {sphere_mesh(0.2f, 24, 48), box_mesh(vec3(0.01f, 0.02f, 0.0f), vec3(0.15f, 0.05f, 0.1f))};
  for (const Mesh& m : meshes) {
    const SampledSdf a = mesh_to_sdf(m, 0.01, 0.04), b = mesh_to_sdf_openvdb(m, 0.01, 0.04);
    ASSERT_EQ(a.values.size(), b.values.size());
    for (int k = 0; k < 3; ++k) EXPECT_EQ(a.dims[k], b.dims[k]);
    float worst = 0;
    std::size_t flipped = 0;
    for (std::size_t i = 0; i < a.values.size(); ++i) {
      worst = std::max(worst, std::fabs(a.values[i] - b.values[i]));
      if (std::fabs(a.values[i]) > a.dx && (a.values[i] < 0) != (b.values[i] < 0)) ++flipped;
    }
    std::printf("  %zu faces: largest difference %.3f voxels\n", m.face_count(), worst / a.dx);
    EXPECT_LT(worst, 0.5f * a.dx);
    EXPECT_EQ(flipped, 0u);
  }
}

TEST(MeshSdf, SampledDistanceOfASphereMeshIsTheSphereDistance) {
  const Mesh m = sphere_mesh(0.2f, 48, 96);
  const SampledSdf s = mesh_to_sdf(m, 0.01, 0.05);
  double worst = 0;
  for (int k = 0; k < s.dims[2]; k += 3)
    for (int j = 0; j < s.dims[1]; j += 3)
      for (int i = 0; i < s.dims[0]; i += 3) {
        const Vec3f x = vec3(s.origin[0] + i * s.dx, s.origin[1] + j * s.dx, s.origin[2] + k * s.dx);
        const double exact = length(x) - 0.2;
        const double got = s.values[(std::size_t(k) * s.dims[1] + j) * s.dims[0] + i];
        worst = std::max(worst, std::fabs(got - exact));
      }
  // The facets cut chords at most 0.2 (1 - cos(pi / 48)) = 0.4 mm inside the sphere.
  EXPECT_LT(worst, 0.5 * s.dx);
}

}  // namespace
}  // namespace eddy
