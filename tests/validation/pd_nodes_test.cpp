// The soft-body nodes cooked through the engine as `eddy run` would: a cloth
// drapes over a sphere and stays out of it and the floor; a jelly cube read
// from a mesh file lands on a floor and comes to rest on it with its volume
// kept; a pin box that holds nothing is an error naming the parameter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eddy/core/mesh.h"
#include "eddy/core/pd/soft.h"
#include "eddy/graph/bodies_value.h"
#include "eddy/graph/soft_value.h"
#include "../temp_dir.h"
#include "validation.h"

namespace eddy::validation {
namespace {

std::string drape_scene(const std::string& cloth_params) {
  return R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 36], "fps": 24,
    "nodes": [
      {"id": "sheet", "type": "Grid", "params": {"size": [1, 1, 1], "center": [0, 0.9, 0], "rows": 20, "columns": 20}},
      {"id": "cloth", "type": "Cloth", "params": )" + cloth_params + R"(},
      {"id": "ball", "type": "ColliderSphere", "params": {"center": [0, 0.4, 0], "radius": 0.3}},
      {"id": "floor", "type": "ColliderPlane"},
      {"id": "sim", "type": "PDSolver", "params": {"collision_margin": 0.003}}
    ],
    "links": [
      {"from": "sheet.mesh", "to": "cloth.mesh"},
      {"from": "cloth.soft", "to": "sim.soft"},
      {"from": "ball.colliders", "to": "sim.colliders"},
      {"from": "floor.colliders", "to": "sim.colliders"}
    ]})";
}

TEST(PdNodes, AClothDrapesOverASphereAndStaysOutOfIt) {
  const Graph g = parse_graph(drape_scene(R"({"density": 300, "thickness": 0.0005})"), builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  Reports reports;
  e.set_observer(&reports);
  const auto out = e.cook("sim", 36);  // 1.5 s
  const auto soft = out->at("soft").as<SoftBodies>();
  const auto mesh = out->at("mesh").as<Mesh>();
  EXPECT_NEAR(soft->total_mass(), 300 * 0.0005 * 1.0, 1e-9);
  ASSERT_EQ(mesh->points.size(), 21u * 21u);  // the Grid's own points and quads
  EXPECT_EQ(mesh->quads.size(), 400u);
  EXPECT_EQ(mesh->normals.size(), mesh->points.size());
  // Every point outside the sphere and above the floor (the margin, less
  // the contacts' compliance of a fraction of a millimetre).
  float nearest = 1e30f, lowest = 1e30f;
  for (const Vec3f& p : mesh->points) {
    nearest = std::min(nearest, length(p - vec3(0.0f, 0.4f, 0.0f)) - 0.3f);
    lowest = std::min(lowest, p.y);
  }
  EXPECT_GT(nearest, 0.002f);
  EXPECT_GT(lowest, 0.002f);
  // The middle rests on the sphere's top; the corners hang well below it.
  const Vec3f middle = mesh->points[10 * 21 + 10];
  EXPECT_NEAR(middle.y, 0.703, 0.005);
  EXPECT_LT(mesh->points[0].y, 0.45f);
  // The frame's report says how many nodes touch.
  ASSERT_FALSE(reports.lines.empty());
  EXPECT_NE(reports.lines.back().find("nodes in contact"), std::string::npos) << reports.lines.back();
}

TEST(PdNodes, AJellyCubeFromAFileRestsOnTheFloorWithItsVolume) {
  const auto dir = test::fresh_test_dir("eddy_pd_");
  write_mesh((dir / "cube.obj").string(), box_mesh(vec3(0.0f, 0.3f, 0.0f), vec3(0.1f)));  // 0.2 m, 0.2 m up
  const std::string scene = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 48], "fps": 24,
    "nodes": [
      {"id": "read", "type": "ReadMesh", "params": {"path": ")" + (dir / "cube.obj").string() + R"("}},
      {"id": "jelly", "type": "SoftBody", "params": {"cell_size": 0.04, "young_modulus": 2e4, "poisson_ratio": 0.45,
        "velocity": [0.5, 0, 0]}},
      {"id": "floor", "type": "ColliderPlane", "params": {"friction": 0.5}},
      {"id": "sim", "type": "PDSolver", "params": {"collision_margin": 0, "iterations": 15, "damping": 1}}
    ],
    "links": [
      {"from": "read.mesh", "to": "jelly.mesh"},
      {"from": "jelly.soft", "to": "sim.soft"},
      {"from": "floor.colliders", "to": "sim.colliders"}
    ]})";
  const Graph g = parse_graph(scene, builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  const auto start = e.cook("sim", 1)->at("mesh").as<Mesh>();
  const auto out = e.cook("sim", 48);  // 2 s
  const auto mesh = out->at("mesh").as<Mesh>();
  const auto soft = out->at("soft").as<SoftBodies>();
  EXPECT_NEAR(soft->total_mass(), 1000 * 0.008, 1e-5);
  EXPECT_LT(soft->momentum().norm() / soft->total_mass(), 0.02);  // at rest
  float lowest = 1e30f, highest = -1e30f;
  for (const Vec3f& p : mesh->points) lowest = std::min(lowest, p.y), highest = std::max(highest, p.y);
  EXPECT_NEAR(lowest, 0.0f, 1e-3f);
  EXPECT_GT(highest, 0.18f);  // sagged by a few millimetres, not collapsed
  // Nearly incompressible (nu = 0.45): the surface's volume within 2 %.
  const double v0 = measure_mesh(*start).volume, v1 = measure_mesh(*mesh).volume;
  EXPECT_NEAR(v1 / v0, 1.0, 0.02);
  // It drifts at 0.5 m/s while it falls the 0.2 m (0.202 s). A rigid block
  // would stop at the landing (the impact's normal impulse, 2 m/s, times
  // the friction 0.5 is more than the sideways 0.5 m/s); a jelly's bottom
  // stops while its top shears on, so it goes further, but not as far as
  // friction under its weight alone would let it slide, v^2 / (2 mu g).
  double cx = 0;
  for (const Vec3d& x : soft->x) cx += x.x();
  const double fall = 0.5 * std::sqrt(2 * 0.2 / 9.81);
  EXPECT_GT(cx / double(soft->size()), fall - 0.003);
  EXPECT_LT(cx / double(soft->size()), fall + 0.25 / (2 * 0.5 * 9.81));
}

// Water poured on a jelly cube meets its surface (ColliderSoft, one way):
// the collider sits on the jelly's surface at the frame's time, and no
// particle ends up inside it.
TEST(PdNodes, WaterPouredOnAJellyStaysOutOfIt) {
  const auto dir = test::fresh_test_dir("eddy_pd_water_");
  write_mesh((dir / "cube.obj").string(), box_mesh(vec3(0.0f, 0.08f, 0.0f), vec3(0.08f)));  // on the floor
  const std::string scene = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 24], "fps": 24,
    "nodes": [
      {"id": "read", "type": "ReadMesh", "params": {"path": ")" + (dir / "cube.obj").string() + R"("}},
      {"id": "jelly", "type": "SoftBody", "params": {"cell_size": 0.04, "young_modulus": 5000}},
      {"id": "tank", "type": "ColliderBox", "params": {"mode": "container", "center": [0, 0.3, 0], "size": [0.5, 0.6, 0.5]}},
      {"id": "soft_sim", "type": "PDSolver"},
      {"id": "surface", "type": "ColliderSoft", "params": {"voxel_size": 0.008}},
      {"id": "all", "type": "MergeColliders"},
      {"id": "tap", "type": "FluidSource", "params": {"shape": "box", "center": [0, 0.4, 0], "size": [0.08, 0.08, 0.08],
        "flow_rate": 0.004, "velocity": [0, -1, 0], "particle_radius": 0.008}},
      {"id": "water", "type": "PBFSolver", "params": {"substeps": 4}}
    ],
    "links": [
      {"from": "read.mesh", "to": "jelly.mesh"}, {"from": "jelly.soft", "to": "soft_sim.soft"},
      {"from": "tank.colliders", "to": "soft_sim.colliders"}, {"from": "soft_sim.soft", "to": "surface.soft"},
      {"from": "tank.colliders", "to": "all.colliders"}, {"from": "surface.colliders", "to": "all.colliders"},
      {"from": "all.colliders", "to": "water.colliders"}, {"from": "tap.sources", "to": "water.sources"}
    ]})";
  const Graph g = parse_graph(scene, builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  const auto water = e.cook("water", 24)->at("particles").as<Points>();
  const auto shapes = e.cook("surface", 24)->at("colliders").as<Colliders>();
  const auto mesh = e.cook("soft_sim", 24)->at("mesh").as<Mesh>();
  ASSERT_EQ(shapes->shapes.size(), 1u);
  const Collider& c = shapes->shapes[0];
  const float t = 23.0f / 24.0f;
  // On the jelly's surface (to a voxel) at the frame's time.
  for (const Vec3f& p : mesh->points) EXPECT_NEAR(collider_sdf(c, p, t).distance, 0.0f, 0.008f);
  // The water reached the jelly and none of it is inside.
  ASSERT_GT(water->size(), 200u);
  int on_top = 0;
  float deepest = 0;
  for (std::size_t i = 0; i < water->size(); ++i) {
    const float d = collider_sdf(c, water->P()[i], t).distance;
    deepest = std::min(deepest, d);
    on_top += d < 0.02f ? 1 : 0;
  }
  EXPECT_GT(on_top, 20);
  EXPECT_GT(deepest, -0.5f * water->radius);
  // Each surface point meets the water at its own velocity: the jelly's mean
  // motion plus its deformation's, sampled beside the distance (the mean
  // motion alone misses the wobble of a jelly the water is landing on).
  const auto soft = e.cook("soft_sim", 24)->at("soft").as<SoftBodies>();
  const std::vector<Vec3d> sv = soft->surface_velocity();
  ASSERT_EQ(sv.size(), mesh->points.size());
  double worst = 0, rigid_worst = 0, fastest = 0;
  Collider rigid = c;
  rigid.grid_velocity = nullptr;
  for (std::size_t k = 0; k < sv.size(); ++k) {
    const Vec3f want = vec3(float(sv[k].x()), float(sv[k].y()), float(sv[k].z()));
    worst = std::max(worst, double(length(collider_velocity(c, mesh->points[k], t) - want)));
    rigid_worst = std::max(rigid_worst, double(length(collider_velocity(rigid, mesh->points[k], t) - want)));
    fastest = std::max(fastest, double(length(want)));
  }
  std::printf("  jelly surface: fastest point %.4f m/s; collider velocity off by %.5f m/s (%.5f with the mean "
              "motion alone)\n", fastest, worst, rigid_worst);
  EXPECT_LT(worst, 0.1 * rigid_worst);
  EXPECT_LT(worst, 0.05 * fastest + 1e-4);
}

// A ball dropped into a hammock (a cloth attached along two edges to bars):
// stepped two ways with the cloth, it bounces on it, never goes through it,
// and comes to rest in the sagging cloth.
TEST(PdNodes, ABallDroppedIntoAHammockRestsInIt) {
  const std::string scene = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 72], "fps": 24,
    "nodes": [
      {"id": "sheet", "type": "Grid", "params": {"size": [1, 1, 1], "center": [0, 0.5, 0], "rows": 20, "columns": 20}},
      {"id": "cloth", "type": "Cloth", "params": {"young_modulus": 2e6, "thickness": 0.001, "density": 300}},
      {"id": "left", "type": "ColliderCapsule", "params": {"center": [-0.5, 0.5, 0], "radius": 0.01, "length": 1.2, "rotate": [90, 0, 0]}},
      {"id": "right", "type": "ColliderCapsule", "params": {"center": [0.5, 0.5, 0], "radius": 0.01, "length": 1.2, "rotate": [90, 0, 0]}},
      {"id": "ball", "type": "RigidBody", "params": {"shape": "sphere", "radius": 0.1, "density": 500, "position": [0, 0.9, 0]}},
      {"id": "sim", "type": "PDSolver", "params": {"attach_distance": 0.012, "damping": 4}}
    ],
    "links": [
      {"from": "sheet.mesh", "to": "cloth.mesh"}, {"from": "cloth.soft", "to": "sim.soft"},
      {"from": "left.colliders", "to": "sim.attach"}, {"from": "right.colliders", "to": "sim.attach"},
      {"from": "ball.bodies", "to": "sim.bodies"}
    ]})";
  const Graph g = parse_graph(scene, builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  Reports reports;
  e.set_observer(&reports);
  float closest = 1e30f, lowest = 1e30f;  // the ball's centre above the cloth's middle; the ball's lowest
  std::shared_ptr<const Bodies> ball;
  std::shared_ptr<const Mesh> mesh;
  for (int f = 1; f <= 72; ++f) {
    const auto out = e.cook("sim", f);
    ball = out->at("bodies").as<Bodies>();
    mesh = out->at("mesh").as<Mesh>();
    ASSERT_EQ(ball->size(), 1u);
    closest = std::min(closest, float(ball->x[0].y()) - mesh->points[10 * 21 + 10].y);
    lowest = std::min(lowest, float(ball->x[0].y()));
  }
  // At rest in the cloth: the cloth's middle sagged under it, the ball a
  // radius above that middle.
  const Vec3f middle = mesh->points[10 * 21 + 10];
  EXPECT_LT(middle.y, 0.49f);
  EXPECT_NEAR(ball->x[0].y(), middle.y + 0.1, 0.01);
  EXPECT_LT(ball->v[0].norm(), 0.05);
  EXPECT_GT(closest, 0.08f);   // never through the cloth (a radius, less the contacts' give)
  EXPECT_LT(lowest, middle.y + 0.09f);  // it bounced: sank deeper at the impact than at rest
  // The attached edges stayed on the bars.
  EXPECT_NEAR(mesh->points[0].y, 0.5f, 0.002f);
  EXPECT_NE(reports.lines.back().find("1 bodies"), std::string::npos) << reports.lines.back();
}

// Bad input names what is wrong: attaching to colliders no node is near; a
// cloth's open sheet given to ColliderSoft, which needs a closed surface.
TEST(PdNodes, AttachingToNothingAndAnOpenSheetAsAColliderAreErrors) {
  const std::string scene = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 4], "fps": 24,
    "nodes": [
      {"id": "sheet", "type": "Grid", "params": {"size": [1, 1, 1], "center": [0, 0.5, 0], "rows": 4, "columns": 4}},
      {"id": "cloth", "type": "Cloth"},
      {"id": "far", "type": "ColliderSphere", "params": {"center": [5, 5, 5], "radius": 0.1}},
      {"id": "sim", "type": "PDSolver"},
      {"id": "surface", "type": "ColliderSoft"}
    ],
    "links": [
      {"from": "sheet.mesh", "to": "cloth.mesh"}, {"from": "cloth.soft", "to": "sim.soft"},
      {"from": "far.colliders", "to": "sim.attach"}, {"from": "cloth.soft", "to": "surface.soft"}
    ]})";
  const Graph g = parse_graph(scene, builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  auto message = [&](const std::string& node) {
    try {
      e.cook(node, 1);
    } catch (const std::exception& ex) {
      return std::string(ex.what());
    }
    return std::string("no error");
  };
  const std::string attach = message("sim"), open = message("surface");
  EXPECT_NE(attach.find("attach_distance"), std::string::npos) << attach;
  EXPECT_NE(open.find("input 'soft' has an open surface"), std::string::npos) << open;
}

TEST(PdNodes, APinBoxHoldingNothingIsAnError) {
  const Graph g = parse_graph(drape_scene(R"({"pin": "box", "pin_center": [5, 5, 5]})"), builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  try {
    e.cook("sim", 1);
    FAIL() << "expected an error";
  } catch (const std::exception& ex) {
    EXPECT_NE(std::string(ex.what()).find("pin_center"), std::string::npos) << ex.what();
    EXPECT_NE(std::string(ex.what()).find("cloth"), std::string::npos) << ex.what();
  }
}

// PDSolver's `device` cuda: refused with Cholesky (it factors on the CPU),
// naming the parameter; where no GPU is at hand, refused naming CUDA.
TEST(PdNodes, DeviceCudaNeedsChebyshevAndAGpu) {
  auto cook_error = [](const std::string& sim_params) {
    std::string scene = drape_scene("{}");
    const std::string from = R"({"collision_margin": 0.003})";
    scene.replace(scene.find(from), from.size(), sim_params);
    const Graph g = parse_graph(scene, builtin_registry(), "test");
    CookEngine e(builtin_registry(), g);
    try {
      e.cook("sim", 2);
    } catch (const std::exception& ex) {
      return std::string(ex.what());
    }
    return std::string();
  };
  const std::string cholesky = cook_error(R"({"device": "cuda", "method": "cholesky"})");
  EXPECT_NE(cholesky.find("method"), std::string::npos) << cholesky;
  EXPECT_NE(cholesky.find("chebyshev"), std::string::npos) << cholesky;
  // With a GPU it cooks; without one (or without CUDA) the error names CUDA.
  const std::string chebyshev = cook_error(R"({"device": "cuda", "method": "chebyshev"})");
  if (!chebyshev.empty()) {
    EXPECT_NE(chebyshev.find("CUDA"), std::string::npos) << chebyshev;
  }
}

}  // namespace
}  // namespace eddy::validation
