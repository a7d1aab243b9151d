// Checkpoints (checkpoint.h): every value type a stateful node outputs
// comes back bit for bit; a checkpoint of another signature is not taken;
// a damaged file is an error naming it; through the cook engine, a
// stateful node resumes from one instead of cooking from the start.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "eddy/core/io.h"
#include "eddy/graph/bodies_value.h"
#include "eddy/graph/checkpoint.h"
#include "eddy/graph/cook.h"
#include "eddy/graph/soft_value.h"
#include "../../temp_dir.h"
#include "test_nodes.h"

namespace eddy {
namespace {

namespace fs = std::filesystem;

Outputs sample_outputs() {
  Points p(3);
  p.radius = 0.01f;
  for (int i = 0; i < 3; ++i) p.P()[i] = vec3(float(i), 0.5f, -1.0f / float(i + 3));
  p.add("id", AttribType::Int);
  p.get_int("id")[2] = 7;
  p.add("density", AttribType::Float);
  p.get_float("density")[1] = 999.25f;
  p.detail["sph.boundary_region"] = {-1.0, 0.0, 0.5, 1.0, 2.0, 3.25};
  Mesh m = box_mesh(vec3(0.f, 0.f, 0.f), vec3(1.f, 2.f, 3.f));
  m.velocities.assign(m.points.size(), vec3(0.f, -1.f, 0.f));
  Bodies b;
  BodyGeometry g;
  g.shape = BodyShape::Capsule;
  g.radius = 0.1;
  g.half_height = 0.2;
  b.add("crate", g, 500.0, Vec3d(1, 2, 3), Quatd(Eigen::AngleAxisd(0.3, Vec3d(0, 1, 1).normalized())),
        Vec3d(0, -1, 0), Vec3d(0.1, 0.2, 0.3), 0.4);
  b.set_contact(0, 2.5e4, 0.005);
  // Two bodies of one mesh: saved once, shared again when read.
  const BodyMeshPlacement lemon = body_mesh(sphere_mesh(0.1f, 6, 8), 0.02);
  BodyGeometry mg;
  mg.shape = BodyShape::Mesh;
  mg.mesh = lemon.shape;
  b.add("lemon_0", mg, 900.0, Vec3d(0, 1, 0), lemon.axes);
  b.add("lemon_1", mg, 900.0, Vec3d(0, 2, 0), lemon.axes);
  SoftMaterial mat;
  mat.young_modulus = 2e4;
  SoftBodies s = make_cloth(grid_mesh(vec3(0.f, 1.f, 0.f), vec3(1.f, 0.f, 0.f), vec3(0.f, 0.f, 1.f), 3, 2), mat, "flag");
  s.pin_box(0, Vec3d(-1, 0, -1), Vec3d(-0.4, 2, 1));
  s.v[1] = Vec3d(0.125, -3.5, 1e-9);
  s.contact_slots = {4, 1};
  s.contact_slot_weights = {2.5, 1e3};
  Outputs out;
  out["particles"] = Value::make(std::move(p));
  out["mesh"] = Value::make(std::move(m));
  out["bodies"] = Value::make(std::move(b));
  out["soft"] = Value::make(std::move(s));
  return out;
}

TEST(Checkpoint, EveryValueComesBackBitForBit) {
  const fs::path dir = test::fresh_test_dir("eddy_checkpoint_");
  const Outputs in = sample_outputs();
  ASSERT_TRUE(checkpointable(in));
  write_checkpoint(dir.string(), "sim", 12, 0xabcdef, in);
  const std::string path = checkpoint_path(dir.string(), "sim", 12);
  EXPECT_EQ(fs::path(path).filename(), "sim.0012.eddystate");
  EXPECT_EQ(checkpoint_signature(path), 0xabcdefu);
  const auto back = read_checkpoint(dir.string(), "sim", 12, 0xabcdef);
  ASSERT_NE(back, nullptr);
  ASSERT_EQ(back->size(), in.size());
  // Written again, the outputs read back make the same file, and their
  // fields are the ones written.
  write_checkpoint(dir.string(), "again", 12, 0xabcdef, *back);
  const std::string a = read_file(path), b = read_file(checkpoint_path(dir.string(), "again", 12));
  EXPECT_EQ(a.substr(a.find("sim") + 3), b.substr(b.find("again") + 5));
  const auto& p = *back->at("particles").as<Points>();
  EXPECT_EQ(p.radius, 0.01f);
  EXPECT_EQ(p.get_int("id")[2], 7);
  EXPECT_EQ(p.get_float("density")[1], 999.25f);
  EXPECT_EQ(p.P()[1].z, -1.0f / 4.0f);
  EXPECT_EQ(p.detail, in.at("particles").as<Points>()->detail);
  const auto& bo = *back->at("bodies").as<Bodies>();
  EXPECT_EQ(bo.name[0], "crate");
  EXPECT_EQ(bo.geometry[0].shape, BodyShape::Capsule);
  EXPECT_EQ(bo.q[0].coeffs(), in.at("bodies").as<Bodies>()->q[0].coeffs());
  EXPECT_EQ(bo.friction[0], 0.4);
  EXPECT_EQ(bo.stiffness[0], 2.5e4);
  EXPECT_EQ(bo.dissipation[0], 0.005);
  EXPECT_EQ(bo.stiffness[1], 0.0);
  const BodyMesh& mi = *in.at("bodies").as<Bodies>()->geometry[1].mesh;
  ASSERT_EQ(bo.geometry[1].shape, BodyShape::Mesh);
  EXPECT_EQ(bo.geometry[1].mesh, bo.geometry[2].mesh);
  EXPECT_EQ(bo.geometry[1].mesh->mesh.points, mi.mesh.points);
  EXPECT_EQ(bo.geometry[1].mesh->sdf.values, mi.sdf.values);
  EXPECT_EQ(bo.geometry[1].mesh->samples, mi.samples);
  EXPECT_EQ(bo.geometry[1].mesh->grid.grid, bo.geometry[1].mesh->sdf.values.data());
  EXPECT_EQ(bo.mass[2], in.at("bodies").as<Bodies>()->mass[2]);
  const auto& so = *back->at("soft").as<SoftBodies>();
  const auto& si = *in.at("soft").as<SoftBodies>();
  EXPECT_EQ(so.objects[0].name, "flag");
  EXPECT_EQ(so.objects[0].material.young_modulus, 2e4);
  EXPECT_EQ(so.v[1], si.v[1]);
  EXPECT_EQ(so.pinned, si.pinned);
  EXPECT_EQ(so.tris, si.tris);
  EXPECT_EQ(so.surface.quads, si.surface.quads);
  EXPECT_EQ(so.contact_slots, si.contact_slots);
  EXPECT_EQ(so.contact_slot_weights, si.contact_slot_weights);
  EXPECT_EQ(back->at("mesh").as<Mesh>()->velocities.size(), in.at("mesh").as<Mesh>()->points.size());
}

TEST(Checkpoint, AnotherSignatureIsNotTakenAndDamageIsNamed) {
  const fs::path dir = test::fresh_test_dir("eddy_checkpoint_");
  const Outputs in = sample_outputs();
  write_checkpoint(dir.string(), "sim", 3, 42, in);
  EXPECT_EQ(read_checkpoint(dir.string(), "sim", 3, 43), nullptr);
  EXPECT_EQ(read_checkpoint(dir.string(), "sim", 4, 42), nullptr);  // none
  const std::string path = checkpoint_path(dir.string(), "sim", 3);
  const std::string whole = read_file(path);
  for (const std::size_t keep : {std::size_t(4), whole.size() / 2, whole.size() - 1}) {
    write_file_atomic(path, whole.substr(0, keep));
    try {
      read_checkpoint(dir.string(), "sim", 3, 42);
      ADD_FAILURE() << "a checkpoint cut to " << keep << " bytes was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("damaged checkpoint"), std::string::npos) << e.what();
    }
  }
  Outputs other;
  other["fields"] = Value::make(ForceFields{});
  EXPECT_FALSE(checkpointable(other));
  EXPECT_THROW(write_checkpoint(dir.string(), "x", 1, 1, other), Error);
}

// Integrator (test_nodes.h) is stateful: x(f) = x(f - 1) + step. A second
// engine with the same checkpoint folder takes frame 4 from disk and cooks
// only frames 5 and 6; told not to cook stateful nodes, it names the
// missing checkpoint.
TEST(Checkpoint, TheCookEngineResumesFromOne) {
  const fs::path dir = test::fresh_test_dir("eddy_checkpoint_");
  Registry r;
  testing::register_test_nodes(r);
  const char* text = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 10],
    "nodes": [{"id": "src", "type": "Source", "params": {"count": 4}}, {"id": "int", "type": "Integrator"}],
    "links": [{"from": "src.points", "to": "int.points"}]})";
  CookOptions o;
  o.checkpoint_dir = (dir / "ck").string();
  testing::cook_count("Integrator") = 0;
  {
    CookEngine e(r, parse_graph(text, r, ""), o);
    e.cook("int", 4);
  }
  EXPECT_EQ(testing::cook_count("Integrator"), 4);
  EXPECT_TRUE(fs::exists(checkpoint_path(o.checkpoint_dir, "int", 4)));
  CookEngine straight(r, parse_graph(text, r, ""));
  const auto want = straight.cook("int", 6)->at("points").as<Points>();
  testing::cook_count("Integrator") = 0;
  CookEngine resumed(r, parse_graph(text, r, ""), o);
  const auto got = resumed.cook("int", 6)->at("points").as<Points>();
  EXPECT_EQ(testing::cook_count("Integrator"), 2);
  ASSERT_EQ(got->size(), want->size());
  EXPECT_EQ(std::memcmp(got->P(), want->P(), got->size() * sizeof(Vec3f)), 0);
  EXPECT_EQ(resumed.output_signature("int", 6), straight.output_signature("int", 6));

  // A damaged checkpoint is as good as none: frame 4 is cooked again from frame 3's.
  write_file_atomic(checkpoint_path(o.checkpoint_dir, "int", 4), "EDDYSTATE\ncut");
  testing::cook_count("Integrator") = 0;
  CookEngine repaired(r, parse_graph(text, r, ""), o);
  const auto again = repaired.cook("int", 4)->at("points").as<Points>();
  EXPECT_EQ(testing::cook_count("Integrator"), 1);
  EXPECT_EQ(std::memcmp(again->P(), straight.cook("int", 4)->at("points").as<Points>()->P(), again->size() * sizeof(Vec3f)), 0);
  EXPECT_NE(read_checkpoint(o.checkpoint_dir, "int", 4, repaired.output_signature("int", 4)), nullptr);

  o.cook_stateful = false;
  CookEngine post(r, parse_graph(text, r, ""), o);
  EXPECT_NO_THROW(post.cook("int", 6));
  try {
    post.cook("int", 8);
    ADD_FAILURE() << "frame 8 has no checkpoint";
  } catch (const NodeError& e) {
    EXPECT_NE(std::string(e.what()).find("frame 8: no checkpoint in " + o.checkpoint_dir), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace eddy
