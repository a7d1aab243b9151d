// Points attributes and the PLY point-cloud round trip.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <limits>
#include <vector>

#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/core/mesh.h"
#include "eddy/core/ply.h"
#include "eddy/core/points.h"
#include "../../temp_dir.h"

namespace eddy {
namespace {

// The message of the eddy::Error that `read` throws, or "no error".
template <class Read>
std::string error_of(Read&& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

Points sample(std::size_t n) {
  Points p(n);
  p.radius = 0.0125f;
  p.add("density", AttribType::Float);
  p.add("id", AttribType::Int);
  p.add("N", AttribType::Vec3);
  for (std::size_t i = 0; i < n; ++i) {
    p.P()[i] = vec3(0.1f * i, -0.5f * i, 3.0f);
    p.v()[i] = vec3(1, 2, float(i));
    p.get_float("density")[i] = 1000.0f + i;
    p.get_int("id")[i] = int32_t(100 - i);
    p.get_vec3("N")[i] = vec3(0, 0, 1);
  }
  return p;
}

TEST(Points, AttributesByNameAndType) {
  Points p(3);
  EXPECT_TRUE(p.has("P"));
  EXPECT_TRUE(p.has("v"));
  p.add("mass", AttribType::Float);
  p.get_float("mass")[2] = 4.0f;
  EXPECT_EQ(p.get_float("mass")[2], 4.0f);
  EXPECT_THROW(p.get_int("mass"), Error);
  EXPECT_THROW(p.add("mass", AttribType::Vec3), Error);
  EXPECT_THROW(p.get_float("nope"), Error);
  p.resize(5);
  EXPECT_EQ(p.get_float("mass")[4], 0.0f);
  EXPECT_THROW(p.remove("P"), Error);
}

TEST(Points, FilterAndAppendKeepAttributesAligned) {
  Points p = sample(5);
  p.filter({1, 0, 1, 0, 1});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p.get_int("id")[1], 98);
  EXPECT_EQ(p.P()[2].x, 0.4f);
  Points q(2);
  q.add("extra", AttribType::Float);
  q.get_float("extra")[1] = 7.0f;
  p.append(q);
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p.get_float("extra")[4], 7.0f);
  EXPECT_EQ(p.get_float("extra")[0], 0.0f);
  EXPECT_EQ(p.get_int("id")[3], 0);
}

TEST(Ply, RoundTripKeepsEveryAttributeBitForBit) {
  const Points p = sample(17);
  const Points q = decode_ply_points(encode_ply_points(p, {"*"}), "test");
  ASSERT_EQ(q.size(), p.size());
  EXPECT_EQ(q.radius, p.radius);
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(q.P()[i], p.P()[i]);
    EXPECT_EQ(q.v()[i], p.v()[i]);
    EXPECT_EQ(q.get_float("density")[i], p.get_float("density")[i]);
    EXPECT_EQ(q.get_int("id")[i], p.get_int("id")[i]);
    EXPECT_EQ(q.get_vec3("N")[i], p.get_vec3("N")[i]);
  }
}

TEST(Ply, WritesOnlyTheChosenAttributes) {
  const Points q = decode_ply_points(encode_ply_points(sample(3), {"id"}), "test");
  EXPECT_TRUE(q.has("id"));
  EXPECT_FALSE(q.has("density"));
  EXPECT_THROW(encode_ply_points(sample(3), {"nope"}), Error);
}

TEST(Ply, ReadsAscii) {
  const std::string text =
      "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
      "property uchar red\nend_header\n1 2 3 255\n4 5 6 0\n";
  const Points q = decode_ply_points(text, "ascii.ply");
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q.P()[1], vec3(4, 5, 6));
  EXPECT_EQ(q.get_int("red")[0], 255);
}

TEST(Ply, RejectsCorruptFilesWithTheirName) {
  const std::string good = encode_ply_points(sample(10), {"*"});
  auto message = [](const std::string& data) { return error_of([&] { decode_ply_points(data, "broken.ply"); }); };
  EXPECT_NE(message("hello").find("broken.ply: not a readable PLY point cloud: missing 'ply' magic"), std::string::npos);
  EXPECT_NE(message(good.substr(0, good.size() - 7)).find("file is truncated"), std::string::npos);
  EXPECT_NE(message(good.substr(0, 40)).find("no end_header"), std::string::npos);
  EXPECT_THROW(read_ply_points("/nonexistent/x.ply"), Error);
  // Found by fuzz/fuzz_ply: an int property holding a fraction or a value
  // past int32, undefined to convert (ASCII text, or a binary uint).
  const std::string head = "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
                           "property float z\nproperty int id\nend_header\n";
  for (const char* id : {"1.5", "3e9", "-2147483649"})
    EXPECT_NE(message(head + "0 0 0 " + id + "\n").find("vertex 0 property 'id' is not a 32-bit integer"),
              std::string::npos)
        << id;
  EXPECT_EQ(message(head + "0 0 0 -2147483648\n"), "no error");
  std::string binary = "ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
                       "property float z\nproperty uint id\nend_header\n" + std::string(12, '\0') + "\xff\xff\xff\xff";
  EXPECT_NE(message(binary).find("vertex 0 property 'id' is not a 32-bit integer"), std::string::npos) << message(binary);
  // Found by fuzz/fuzz_ply (a timeout): an ASCII header declaring 4e8
  // vertices over a few bytes was allocated before it was read.
  std::string huge = head;
  huge.replace(huge.find("vertex 1"), 8, "vertex 400000000");
  EXPECT_NE(message(huge + "0 0 0 1\n").find("file is truncated: header declares 400000000 vertices"), std::string::npos)
      << message(huge + "0 0 0 1\n");
}

TEST(PlyMesh, PointVelocitiesRoundTripAsVxVyVz) {
  Mesh m = box_mesh(vec3(0.1f, 0.2f, 0.3f), vec3(0.5f, 1.0f, 2.0f));
  compute_point_normals(m);
  for (std::size_t i = 0; i < m.points.size(); ++i) m.velocities.push_back(vec3(float(i), -0.5f * float(i), 3.25f));
  const std::string data = encode_ply_mesh(m);
  EXPECT_NE(data.find("property float vx\nproperty float vy\nproperty float vz\n"), std::string::npos);
  const Mesh back = decode_ply_mesh(data, "v.ply");
  ASSERT_EQ(back.points.size(), m.points.size());
  ASSERT_EQ(back.velocities.size(), m.points.size());
  ASSERT_EQ(back.normals.size(), m.points.size());
  for (std::size_t i = 0; i < m.points.size(); ++i) {
    EXPECT_EQ(back.points[i], m.points[i]);
    EXPECT_EQ(back.normals[i], m.normals[i]);
    EXPECT_EQ(back.velocities[i], m.velocities[i]);
  }
  // Without velocities, no v properties.
  m.velocities.clear();
  EXPECT_EQ(encode_ply_mesh(m).find("vx"), std::string::npos);
}

TEST(PlyMesh, RejectsIndicesAndCountsThatAreNotIntegers) {
  // Found by fuzz/fuzz_ply: a face index or list count of NaN (binary float
  // lists) was converted to int, which is undefined; so are fractions and
  // values past int32 (ASCII).
  const std::string head = "element vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\n"
                           "property list float float vertex_indices\nend_header\n";
  auto message = [](const std::string& data) { return error_of([&] { decode_ply_mesh(data, "m.ply"); }); };
  const std::string ascii = "ply\nformat ascii 1.0\n" + head + "0 0 0\n1 0 0\n0 1 0\n";
  for (const char* face : {"3 0 1 2.5", "3 0 1 1e12", "2.5 0 1 2"})
    EXPECT_NE(message(ascii + face + "\n").find("m.ply: not a readable PLY mesh: face 0 has"), std::string::npos)
        << face << ": " << message(ascii + face + "\n");
  EXPECT_EQ(message(ascii + "3 0 1 2\n"), "no error");
  std::string huge = ascii;
  huge.replace(huge.find("vertex 3"), 8, "vertex 400000000");
  EXPECT_NE(message(huge).find("file is truncated: element 'vertex' declares 400000000 items"),
            std::string::npos)
      << message(huge);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto& list : std::vector<std::array<float, 4>>{{3, 0, 1, nan}, {nan, 0, 1, 2}}) {
    std::string binary = "ply\nformat binary_little_endian 1.0\n" + head + std::string(36, '\0');
    binary.append(reinterpret_cast<const char*>(list.data()), sizeof list);
    EXPECT_NE(message(binary).find("m.ply: not a readable PLY mesh: face 0 has"), std::string::npos)
        << message(binary);
  }
}

TEST(Io, AtomicWriteLeavesNoTemporaryBehind) {
  const auto dir = test::fresh_test_dir("eddy_io_");
  write_file_atomic((dir / "sub" / "a.txt").string(), "hello");
  EXPECT_EQ(read_file((dir / "sub" / "a.txt").string()), "hello");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir / "sub")) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

}  // namespace
}  // namespace eddy
