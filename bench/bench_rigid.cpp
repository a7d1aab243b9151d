// Rigid bodies side by side: Eddy's SAP solver, MuJoCo 2.2 and Bullet 3.24
// (Debian's libmujoco-dev and libbullet-dev, compiled in when found) on the
// same scenes at the same time step, in one run:
//   stack  ten 0.2 m boxes on a floor for 5 s: how far the top box drifts
//   pile   1,000 0.1 m boxes dropped into a bin for 3 s
//   pebbles  100 mesh bodies (an ellipsoid of 10 x 7 x 5 cm as a mesh of
//          168 triangles) dropped into the bin for 3 s: Eddy's mesh bodies
//          (sampled signed distance, surface samples), MuJoCo's mesh geoms
//          and Bullet's convex hulls (both take the mesh's convex hull,
//          which for this convex mesh is the mesh itself; Bullet's hull
//          margin set to 4 mm, as its manual advises for small objects,
//          instead of its default 4 cm, which would inflate each pebble)
// For each: ms per step, the deepest penetration over the run and at its
// end, measured for all three by the same function (Eddy's signed-distance
// contact query on the poses each engine reports), and how fast the
// fastest box still moves at the end. Each engine with its own defaults
// apart from the time step, friction 0.5 and gravity.
// On the pile and the pebbles, Eddy also with Castro et al.'s near-rigid
// bound (near_rigid 1; Eddy's is 0.4), which sets how deep an impact sinks
// into a contact. Then SAP's Newton system alone, Eddy's factorisations
// side by side on a pile's pattern (bench_factorisation).
// The scalar-LDLT reference runs on piles of 100 to 500 bodies (beyond,
// it would take hours).
//   eddy_bench_rigid [pile_boxes [pebbles [pile_seconds]]]
// (1,000 boxes, 100 pebbles and 3 s by default; `make bench` runs 300).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/SparseCholesky>
#include <tbb/global_control.h>

#include "eddy/core/cpu_executor.h"
#include "eddy/core/rigid/block_cholesky.h"
#include "eddy/core/rigid/rigid.h"

#ifdef EDDY_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif
#ifdef EDDY_HAVE_BULLET
#include <btBulletDynamicsCommon.h>
#endif

namespace {

using namespace eddy;

constexpr double kDensity = 500.0, kFriction = 0.5, kG = 9.81;

struct BoxSpec {
  Vec3d half, x;
  Quatd q;
};

// A scene's bodies are boxes (BoxSpec::half) or, with `mesh`, that mesh
// (centred on its centre of mass, on its principal axes) at each spec's pose.
struct Scene {
  const char* name;
  std::vector<BoxSpec> boxes;
  double bin = 0;  // half width of a bin (walls 1 m high) around the origin; 0: a floor only
  double seconds = 1;
  std::shared_ptr<const Mesh> mesh;
  BodyMeshPlacement shape;  // Eddy's shape of the mesh
};

Scene stack_scene() {
  Scene s{"stack of 10", {}, 0, 5.0, nullptr, {}};
  for (int k = 0; k < 10; ++k) s.boxes.push_back({Vec3d::Constant(0.1), Vec3d(0, 0.1 + 0.2 * k, 0), Quatd::Identity()});
  return s;
}

Scene pile_scene(int n, double seconds) {
  Scene s{"pile", {}, 0.6, seconds, nullptr, {}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const int side = 10;  // 10 x 10 boxes a layer, 0.11 m apart, layers 0.15 m apart
  for (int k = 0; k < n; ++k) {
    const int i = k % side, j = (k / side) % side, l = k / (side * side);
    const Vec3d x(-0.495 + 0.11 * i, 0.2 + 0.15 * l, -0.495 + 0.11 * j);
    const Quatd q = Quatd(Eigen::AngleAxisd(0.3 * u(rng), Vec3d(u(rng), u(rng), u(rng)).normalized()));
    s.boxes.push_back({Vec3d::Constant(0.05), x, q});
  }
  return s;
}

Scene pebble_scene(int n) {
  Scene s{"pebbles", {}, 0.3, 3.0, nullptr, {}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int k = 0; k < n; ++k) {  // 5 x 5 a layer, 0.11 m apart (more than a pebble is long), layers too
    const int i = k % 5, j = (k / 5) % 5, l = k / 25;
    const Quatd q = Quatd(Eigen::AngleAxisd(3.0 * u(rng), Vec3d(u(rng), u(rng), u(rng)).normalized()));
    s.boxes.push_back({Vec3d::Zero(), Vec3d(-0.22 + 0.11 * i, 0.1 + 0.11 * l, -0.22 + 0.11 * j), q});
  }
  auto m = std::make_shared<Mesh>(sphere_mesh(1.0f, 8, 12));
  for (Vec3f& p : m->points) p = vec3(0.05f * p.x, 0.035f * p.y, 0.025f * p.z);
  s.mesh = m;
  s.shape = body_mesh(*m, 0.004);
  return s;
}

// A floor, or a bin: a container from y = 0 up to 1 + bin, `bin` either
// side of the origin in x and z.
std::vector<Collider> colliders(const Scene& s) {
  Collider c;
  c.friction = float(kFriction);
  if (s.bin > 0) {
    c.type = ShapeType::Box;
    c.inside = 1;
    c.center = vec3(0, 0.5f + 0.5f * float(s.bin), 0);
    c.size = vec3(float(s.bin), 0.5f + 0.5f * float(s.bin), float(s.bin));
  }
  return {c};
}

// From a peer's body frame (the mesh's own) to Eddy's body frame.
Quatd to_body(const Scene& s) { return s.mesh ? s.shape.axes : Quatd::Identity(); }

// The scene's bodies in Eddy. A mesh body's frame lies on the mesh's
// principal axes: turned from the mesh's own by shape.axes.
Bodies bodies(const Scene& s) {
  Bodies b;
  BodyGeometry g;
  if (s.mesh) {
    g.shape = BodyShape::Mesh;
    g.mesh = s.shape.shape;
  }
  for (std::size_t k = 0; k < s.boxes.size(); ++k) {
    g.half = s.boxes[k].half;
    b.add("body" + std::to_string(k), g, kDensity, s.boxes[k].x, s.boxes[k].q * to_body(s), Vec3d::Zero(),
          Vec3d::Zero(), kFriction);
  }
  return b;
}

// What every engine reports: timing and the poses at checkpoints.
struct Result {
  bool ran = false;
  double ms_per_step = 0;
  std::string detail;                   // engine-specific: Eddy's stage split, iterations, contacts
  double deepest = 0, deepest_end = 0;  // m, over the checkpoints and at the end
  double top_drift = 0;                 // m, the last box's distance from its start
  double max_speed_end = 0;             // m/s
};

// Deepest penetration of the bodies in `poses` (same shapes as the scene),
// by Eddy's contact query with no margin.
double deepest_penetration(const Scene& s, const Bodies& poses) {
  std::vector<BodyContact> c;
  find_contacts(poses, colliders(s), 0.0, 0.0, c);
  double d = 0;
  for (const auto& k : c) d = std::max(d, -k.phi);
  return d;
}

// Runs `step` for the scene's duration, reading poses through `read` every
// 50 steps (outside the timing).
Result drive(const Scene& s, double h, const std::function<void()>& step, const std::function<void(Bodies&)>& read) {
  const int steps = int(s.seconds / h + 0.5);
  Bodies poses = bodies(s);
  const Vec3d top0 = poses.x.back();
  Result r;
  double seconds = 0;
  for (int k = 0; k < steps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if ((k + 1) % 50 == 0 || k + 1 == steps) {
      read(poses);
      r.deepest = std::max(r.deepest, deepest_penetration(s, poses));
    }
  }
  r.ran = true;
  r.ms_per_step = 1e3 * seconds / steps;
  r.deepest_end = deepest_penetration(s, poses);
  r.top_drift = (poses.x.back() - top0).norm();
  for (std::size_t i = 0; i < poses.size(); ++i) r.max_speed_end = std::max(r.max_speed_end, poses.v[i].norm());
  return r;
}

// `block`: SAP's systems by the 6x6-block Cholesky (the default), else by
// Eigen's scalar LDLT (the reference), to measure the one against the other.
// `beta`: SAP's near-rigid bound (RigidParams::near_rigid; Eddy's default unless given).
Result run_eddy(const Scene& s, double h, bool block = true, float beta = RigidParams{}.near_rigid) {
  RigidParams p;
  p.time_step = float(h);
  p.near_rigid = beta;
  RigidSolver solver(p);
  solver.set_block_factorisation(block);
  solver.load(bodies(s));
  solver.set_colliders(colliders(s));
  int k = 0;
  double detect = 0, solve = 0, iterations = 0, contacts = 0, searches = 0, islands = 0, largest = 0;
  Result r = drive(
      s, h,
      [&] {
        const RigidStepStats st = solver.step(float(h), float(h * k++));
        const RigidStageTimes t = solver.stage_times();
        detect += t.detect;
        solve += t.solve;
        iterations += st.iterations;
        contacts += st.contacts;
        searches += solver.sap_stats().line_search_steps;
        islands += solver.sap_stats().islands;
        largest += solver.sap_stats().largest_island;
      },
      [&](Bodies& b) { b = solver.bodies(); });
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "detect %.3f ms, solve %.3f ms a step; %.1f SAP iterations, %.1f line-search evaluations, %.0f contacts, "
                "%.1f islands (largest %.0f bodies)",
                1e3 * detect / k, 1e3 * solve / k, iterations / k, searches / k, contacts / k, islands / k, largest / k);
  r.detail = buf;
  return r;
}

#ifdef EDDY_HAVE_MUJOCO
// MuJoCo is z-up by convention only: gravity along -y and planes turned so
// that the scene is Eddy's own.
// The scene as MuJoCo XML, its contact and constraint buffers sized for
// `rows` constraint rows a box (a quarter of that many contacts).
std::string mujoco_xml(const Scene& s, double h, int rows) {
  std::ostringstream x;
  x << "<mujoco><option timestep=\"" << h << "\" gravity=\"0 " << -kG << " 0\"/><size nconmax=\""
    << rows / 4 * s.boxes.size() + 100 << "\" njmax=\"" << rows * s.boxes.size() + 400 << "\"/>";
  if (s.mesh) {
    x << "<asset><mesh name=\"shape\" vertex=\"";
    for (const Vec3f& p : s.mesh->points) x << p.x << " " << p.y << " " << p.z << " ";
    x << "\"/></asset>";
  }
  x << "<worldbody>";
  const char* up = "0.70710678 -0.70710678 0 0";  // z to y
  x << "<geom type=\"plane\" size=\"0 0 1\" quat=\"" << up << "\" friction=\"" << kFriction << " 0.005 0.0001\"/>";
  if (s.bin > 0) {
    const double w = s.bin, t = 0.05, hh = 0.5 + 0.5 * w;
    for (int k = 0; k < 4; ++k) {
      const double sx = k < 2 ? (k == 0 ? -1 : 1) * (w + t) : 0, sz = k >= 2 ? (k == 2 ? -1 : 1) * (w + t) : 0;
      x << "<geom type=\"box\" pos=\"" << sx << " " << hh << " " << sz << "\" size=\"" << (k < 2 ? t : w + 2 * t)
        << " " << hh << " " << (k < 2 ? w + 2 * t : t) << "\" friction=\"" << kFriction << " 0.005 0.0001\"/>";
    }
  }
  for (const auto& b : s.boxes)
    x << "<body pos=\"" << b.x.x() << " " << b.x.y() << " " << b.x.z() << "\" quat=\"" << b.q.w() << " " << b.q.x()
      << " " << b.q.y() << " " << b.q.z() << "\"><freejoint/><geom "
      << (s.mesh ? std::string("type=\"mesh\" mesh=\"shape\"")
                 : "type=\"box\" size=\"" + std::to_string(b.half.x()) + " " + std::to_string(b.half.y()) + " " +
                       std::to_string(b.half.z()) + "\"")
      << " density=\"" << kDensity << "\" friction=\"" << kFriction << " 0.005 0.0001\"/></body>";
  x << "</worldbody></mujoco>";
  return x.str();
}

// MuJoCo 2.2 sizes its buffers up front, some of them njmax^2, and counts
// its stack in an int: 64 rows a box asks 3 GB at 300 boxes, and at 1,000
// boxes anything above 8 rows a box fails to allocate. The bench asks 32
// rows a box (8 contacts) and halves that until MuJoCo can allocate it,
// and says how many rows it got and whether its buffers overflowed (MuJoCo
// then drops the contacts beyond them: boxes sink into each other).
Result run_mujoco(const Scene& s, double h) {
  // MuJoCo's warnings (a full buffer) are counted in mjData and reported
  // below; its default handler would also write MUJOCO_LOG.TXT into the
  // working folder.
  mju_user_warning = [](const char*) {};
  mjModel* m = nullptr;
  mjData* d = nullptr;
  int rows = 32;
  char err[1000] = "";
  for (; rows >= 4 && !d; rows /= 2) {
    const std::string path = "/tmp/eddy_bench_rigid_" + std::to_string(::getpid()) + ".xml";
    std::ofstream(path) << mujoco_xml(s, h, rows);
    m = mj_loadXML(path.c_str(), nullptr, err, sizeof err);
    std::remove(path.c_str());
    d = m ? mj_makeData(m) : nullptr;
    if (!d && m) mj_deleteModel(m);
  }
  rows *= 2;
  if (!d) {
    std::fprintf(stderr, "MuJoCo: %s\n", err);
    return {};
  }
  Result r = drive(
      s, h, [&] { mj_step(m, d); },
      [&](Bodies& b) {
        for (std::size_t i = 0; i < b.size(); ++i) {
          const mjtNum* q = d->qpos + 7 * i;
          const mjtNum* v = d->qvel + 6 * i;
          b.x[i] = Vec3d(q[0], q[1], q[2]);
          b.q[i] = Quatd(q[3], q[4], q[5], q[6]).normalized() * to_body(s);
          b.v[i] = Vec3d(v[0], v[1], v[2]);
        }
      });
  // MuJoCo counts a warning each time it meets a full buffer.
  const int contacts_full = d->warning[mjWARN_CONTACTFULL].number, rows_full = d->warning[mjWARN_CNSTRFULL].number;
  r.detail = "buffers of " + std::to_string(rows) + " constraint rows a box" +
             (contacts_full + rows_full ? ": overflowed (" + std::to_string(contacts_full) + " contact and " +
                                              std::to_string(rows_full) + " constraint warnings), contacts dropped"
                                        : ", never full");
  mj_deleteData(d);
  mj_deleteModel(m);
  return r;
}
#endif

#ifdef EDDY_HAVE_BULLET
Result run_bullet(const Scene& s, double h) {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher(&config);
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
  world.setGravity(btVector3(0, btScalar(-kG), 0));
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btDefaultMotionState>> states;
  std::vector<std::unique_ptr<btRigidBody>> rigid;
  auto add = [&](btCollisionShape* shape, double mass, const btTransform& t) {
    shapes.emplace_back(shape);
    btVector3 inertia(0, 0, 0);
    if (mass > 0) shape->calculateLocalInertia(btScalar(mass), inertia);
    states.emplace_back(new btDefaultMotionState(t));
    btRigidBody::btRigidBodyConstructionInfo info(btScalar(mass), states.back().get(), shape, inertia);
    info.m_friction = btScalar(kFriction);
    rigid.emplace_back(new btRigidBody(info));
    world.addRigidBody(rigid.back().get());
  };
  btTransform t;
  t.setIdentity();
  add(new btStaticPlaneShape(btVector3(0, 1, 0), 0), 0, t);
  if (s.bin > 0) {
    const double w = s.bin, th = 0.05, hh = 0.5 + 0.5 * w;
    for (int k = 0; k < 4; ++k) {
      const double sx = k < 2 ? (k == 0 ? -1 : 1) * (w + th) : 0, sz = k >= 2 ? (k == 2 ? -1 : 1) * (w + th) : 0;
      t.setOrigin(btVector3(btScalar(sx), btScalar(hh), btScalar(sz)));
      add(new btBoxShape(btVector3(btScalar(k < 2 ? th : w + 2 * th), btScalar(hh), btScalar(k < 2 ? w + 2 * th : th))), 0, t);
    }
  }
  const std::size_t first = rigid.size();
  for (const auto& b : s.boxes) {
    t.setOrigin(btVector3(btScalar(b.x.x()), btScalar(b.x.y()), btScalar(b.x.z())));
    t.setRotation(btQuaternion(btScalar(b.q.x()), btScalar(b.q.y()), btScalar(b.q.z()), btScalar(b.q.w())));
    if (s.mesh) {
      auto* hull = new btConvexHullShape();
      for (const Vec3f& p : s.mesh->points) hull->addPoint(btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z)), false);
      // A convex hull's collision margin inflates it (by 4 cm by default,
      // more than the pebble's half thickness): 4 mm keeps the shape the same.
      hull->setMargin(btScalar(0.004));
      hull->recalcLocalAabb();
      add(hull, kDensity * measure_mesh(*s.mesh).volume, t);
    } else {
      add(new btBoxShape(btVector3(btScalar(b.half.x()), btScalar(b.half.y()), btScalar(b.half.z()))),
          kDensity * 8 * b.half.x() * b.half.y() * b.half.z(), t);
    }
  }
  return drive(
      s, h, [&] { world.stepSimulation(btScalar(h), 0); },
      [&](Bodies& b) {
        for (std::size_t i = 0; i < b.size(); ++i) {
          const btRigidBody& r = *rigid[first + i];
          const btTransform& w = r.getWorldTransform();
          const btQuaternion q = w.getRotation();
          b.x[i] = Vec3d(w.getOrigin().x(), w.getOrigin().y(), w.getOrigin().z());
          b.q[i] = Quatd(q.w(), q.x(), q.y(), q.z()).normalized() * to_body(s);
          b.v[i] = Vec3d(r.getLinearVelocity().x(), r.getLinearVelocity().y(), r.getLinearVelocity().z());
        }
      });
}
#endif

void report(const char* engine, const Result& r, const Result& eddy) {
  if (!r.ran) {
    std::printf("  %-21s did not run (see the message above)\n", engine);
    return;
  }
  std::printf("  %-21s %8.3f ms/step (%5.2fx Eddy's)  deepest %7.3f mm (end %7.3f mm)  top drift %8.3f mm  "
              "fastest at end %.3f m/s\n",
              engine, r.ms_per_step, r.ms_per_step / eddy.ms_per_step, 1e3 * r.deepest, 1e3 * r.deepest_end,
              1e3 * r.top_drift, r.max_speed_end);
  if (!r.detail.empty()) std::printf("                        %s\n", r.detail.c_str());
}

}  // namespace

// The Newton system of a settled pile, alone: 1,000 bodies on a 10 x 10 x 10
// lattice, each touching its six neighbours and, at random, 700 of the
// diagonal ones (3,400 pairs, as many as the 1,000-box pile's), numbered at
// random, with blocks shaped as SAP's (a diagonal mass block, a random
// J^T J per pair). Factorised by the 6x6-block supernodal Cholesky with
// its AVX2 kernel and with the portable one (on all threads and on one),
// and by Eigen's scalar SimplicialLDLT (pattern analysed once, as SAP
// does), best of three each.
void bench_factorisation() {
  const int side = 10, n = side * side * side;
  std::mt19937 rng(1);
  std::vector<int> label(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) label[std::size_t(i)] = i;
  std::shuffle(label.begin(), label.end(), rng);
  auto id = [&](int x, int y, int z) { return label[std::size_t((x * side + y) * side + z)]; };
  std::vector<std::pair<int, int>> pairs;
  auto touch = [&](int a, int b) {
    const std::pair<int, int> p(std::max(a, b), std::min(a, b));
    if (std::find(pairs.begin(), pairs.end(), p) != pairs.end()) return false;
    pairs.push_back(p);
    return true;
  };
  for (int x = 0; x < side; ++x)
    for (int y = 0; y < side; ++y)
      for (int z = 0; z < side; ++z) {
        if (x + 1 < side) touch(id(x + 1, y, z), id(x, y, z));
        if (y + 1 < side) touch(id(x, y + 1, z), id(x, y, z));
        if (z + 1 < side) touch(id(x, y, z + 1), id(x, y, z));
      }
  for (int extra = 700; extra > 0;) {
    const int x = int(rng() % (side - 1)), y = int(rng() % (side - 1)), z = int(rng() % (side - 1));
    if (touch(id(x + 1, y + 1, z), id(x, y, z))) --extra;
  }
  std::normal_distribution<double> g(0.0, 1.0);
  using Mat66 = BlockCholesky::Mat66;
  std::vector<Mat66> blocks(static_cast<std::size_t>(n) + pairs.size(), Mat66::Zero());
  for (int i = 0; i < n; ++i) blocks[std::size_t(i)].diagonal() << 1, 1, 1, 0.01, 0.01, 0.01;
  for (std::size_t e = 0; e < pairs.size(); ++e) {
    Eigen::Matrix<double, 3, 12> J;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 12; ++c) J(r, c) = g(rng);
    const Eigen::Matrix<double, 12, 12> JtJ = 1e3 * J.transpose() * J;
    blocks[std::size_t(pairs[e].first)] += JtJ.topLeftCorner<6, 6>();
    blocks[std::size_t(pairs[e].second)] += JtJ.bottomRightCorner<6, 6>();
    blocks[std::size_t(n) + e] = JtJ.bottomLeftCorner<6, 6>().transpose();
  }
  auto best_ms = [](const std::function<void()>& f) {
    double best = 1e300;
    for (int k = 0; k < 3; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      best = std::min(best, 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  BlockCholesky chol;
  chol.analyze(n, pairs);
  std::printf("SAP's Newton system of a pile: %d bodies, %zu touching pairs; %zu 6x6 blocks below the diagonal in %d "
              "supernodes\n", n, pairs.size(), chol.factor_blocks(), chol.supernodes());
  const bool simd = CpuExecutor::simd_enabled();
  for (const bool avx2 : {true, false}) {
    if (avx2 && !cpu_supports_avx2()) continue;
    CpuExecutor::set_simd(avx2);
    const double all = best_ms([&] { chol.factorize(blocks); });
    const int shared = chol.shared_steps();
    double one = 0;
    {
      tbb::global_control g(tbb::global_control::max_allowed_parallelism, 1);
      one = best_ms([&] { chol.factorize(blocks); });
    }
    std::printf("  6x6-block supernodal Cholesky (%s kernel): factorise %.1f ms (%d steps shared among the threads; "
                "%.1f ms on one thread)\n",
                avx2 ? "AVX2" : "portable", all, shared, one);
  }
  CpuExecutor::set_simd(simd);
  std::vector<Eigen::Triplet<double>> t;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const int bi = k < std::size_t(n) ? int(k) : pairs[k - std::size_t(n)].first;
    const int bj = k < std::size_t(n) ? int(k) : pairs[k - std::size_t(n)].second;
    for (int c = 0; c < 6; ++c)
      for (int r = bi == bj ? c : 0; r < 6; ++r) t.emplace_back(6 * bi + r, 6 * bj + c, blocks[k](r, c));
  }
  Eigen::SparseMatrix<double> H(6 * n, 6 * n);
  H.setFromTriplets(t.begin(), t.end());
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
  ldlt.analyzePattern(H);
  std::printf("  Eigen's scalar SimplicialLDLT: factorise %.1f ms\n", best_ms([&] { ldlt.factorize(H); }));
}

int main(int argc, char** argv) {
  const int pile = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int pebbles = argc > 2 ? std::atoi(argv[2]) : 100;
  const double pile_seconds = argc > 3 ? std::atof(argv[3]) : 3.0;
  const double h = 2e-3;  // MuJoCo's default step
  std::printf("rigid bodies at h = %.0f ms, friction %.1f, density %.0f kg/m^3 (one run, side by side)\n", 1e3 * h,
              kFriction, kDensity);
#ifndef EDDY_HAVE_MUJOCO
  std::printf("  (MuJoCo not found: install libmujoco-dev to compare)\n");
#endif
#ifndef EDDY_HAVE_BULLET
  std::printf("  (Bullet not found: install libbullet-dev to compare)\n");
#endif
  for (const Scene& s : {stack_scene(), pile_scene(pile, pile_seconds), pebble_scene(pebbles)}) {
    if (s.boxes.empty()) continue;
    std::printf("%s: %zu %s, %g s\n", s.name, s.boxes.size(), s.mesh ? "mesh bodies" : "boxes", s.seconds);
    const Result e = run_eddy(s, h);
    report("Eddy", e, e);
    if (s.boxes.size() >= 100 && s.boxes.size() <= 500) report("Eddy (scalar LDLT)", run_eddy(s, h, false), e);
    // Castro et al.'s near-rigid bound, beta = 1: an impact at v sinks
    // about v h beta / (2 pi) into a near-rigid contact.
    if (s.boxes.size() >= 100) report("Eddy (near_rigid 1)", run_eddy(s, h, true, 1.0f), e);
#ifdef EDDY_HAVE_MUJOCO
    report("MuJoCo", run_mujoco(s, h), e);
#endif
#ifdef EDDY_HAVE_BULLET
    report("Bullet", run_bullet(s, h), e);
#endif
    std::fflush(stdout);
  }
  bench_factorisation();
  return 0;
}
