// Rigid bodies and water (PBF, DFSPH, WCSPH) coupled two ways (core/rigid/coupling.h),
// against physical facts: Archimedes (a box of relative density 0.5 floats
// with half its height under the waterline; one of density 2 sinks to the
// floor), and momentum accounted for (what the liquid gains at its walls and
// at a body, the walls and the body lose).
//
// Scene: a 0.5 x 0.6 x 0.5 m tank with 0.2 m of water (r = 1 cm, 6,250
// particles) and a flat box 0.24 x 0.16 x 0.24 m (flat enough to float
// upright at relative density 0.5: its metacentric height b^2 / (12 d) +
// d / 2 - h / 2 = 0.033 m is positive).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "eddy/core/mpm/mpm.h"
#include "eddy/core/pbf/pbf.h"
#include "eddy/core/rigid/coupling.h"
#include "eddy/core/sph/sph.h"
#include "../unit/core/scenes.h"

namespace eddy {
namespace {

constexpr float kR = 0.01f;
constexpr double kFps = 24.0;

// The liquid of a coupled scene.
struct Liquid {
  virtual ~Liquid() = default;
  virtual SolverBase& solver() = 0;
  virtual void load(const Points& water) = 0;
  virtual void store(Points& out) const = 0;
  virtual std::size_t size() const = 0;
  virtual double particle_mass() const = 0;
  // One frame from t; after_step(dt) after each step.
  virtual void advance(double t, int frame, const std::function<void(double)>& after_step) = 0;
};

// What every method's liquid does through its solver S; each adds advance.
template <class S>
struct SolverLiquid : Liquid {
  std::unique_ptr<S> s;
  explicit SolverLiquid(std::unique_ptr<S> solver) : s(std::move(solver)) {}
  SolverBase& solver() override { return *s; }
  void load(const Points& water) override { s->load(water); }
  void store(Points& out) const override { s->store(out); }
  std::size_t size() const override { return s->size(); }
  double particle_mass() const override { return s->particle_mass(); }
};

struct PbfLiquid final : SolverLiquid<PbfSolver> {
  explicit PbfLiquid(const PbfParams& p = PbfParams{}) : SolverLiquid(make_pbf_solver_cpu(p)) {}
  void advance(double t, int frame, const std::function<void(double)>& after_step) override {
    pbf_advance_frame(*s, t, 1.0 / kFps, SubstepPolicy{8, 16, 0.5f}, frame, kR,
                      [&](int, int, const PbfStepStats& st) { after_step(double(st.dt)); });
  }
};

SphParams sph_water(SphMethod method, float xsph) {
  SphParams p;
  p.method = method;
  p.xsph = xsph;
  return p;
}

struct SphLiquid final : SolverLiquid<SphSolver> {
  // xsph 0.05 as the hydrostatic column: damps the lattice start's sloshing.
  explicit SphLiquid(SphMethod method, float xsph = 0.05f)
      : SolverLiquid(make_sph_solver_cpu(sph_water(method, xsph))) {}
  void advance(double t, int frame, const std::function<void(double)>& after_step) override {
    sph_advance_frame(*s, t, 1.0 / kFps, 0.0f, frame,
                      [&](int, double, const SphStepStats& st) { after_step(double(st.dt)); });
  }
};

// MLS-MPM water, or another of its materials (the defaults: 8 particles a
// cell, dx = 4 cm at r = 1 cm).
struct MpmLiquid final : Liquid {
  std::unique_ptr<MpmSolver> s = make_mpm_solver_cpu(MpmParams{});
  MpmMaterial material;
  explicit MpmLiquid(MpmMaterial m = MpmMaterial::Water) : material(m) {}
  SolverBase& solver() override { return *s; }
  void load(const Points& matter) override { s->load(matter, material); }
  void store(Points& out) const override { s->store(out, false); }
  std::size_t size() const override { return s->size(); }
  double particle_mass() const override {
    return double(s->particle_volume()) * s->params().materials[int(material)].density;
  }
  void advance(double t, int frame, const std::function<void(double)>& after_step) override {
    mpm_advance_frame(*s, t, 1.0 / kFps, 0.0f, frame,
                      [&](int, double, const MpmStepStats& st) { after_step(double(st.dt)); });
  }
};

struct Tank {
  std::unique_ptr<Liquid> liquid;
  std::unique_ptr<BodyCoupling> coupling;
  Collider walls = test::tank(vec3(0, 0, 0), vec3(0.5f, 0.6f, 0.5f));
  double t = 0;
  int frame = 0;

  // The body frame's turn from the box's axes (a mesh body's lie on its principal axes).
  Quatd body_axes = Quatd::Identity();

  // `as_mesh`: the box as a mesh body (its signed distance sampled at 5 mm).
  Tank(double density, const Vec3d& body_at, std::unique_ptr<Liquid> l = std::make_unique<PbfLiquid>(),
       double tilt = 0.0, bool as_mesh = false)
      : liquid(std::move(l)) {
    Bodies b;
    BodyGeometry g;
    g.half = Vec3d(0.12, 0.08, 0.12);
    if (as_mesh) {
      const BodyMeshPlacement m = body_mesh(box_mesh(vec3(0.0f), to_vec3f(g.half)), 0.005);
      g.shape = BodyShape::Mesh;
      g.mesh = m.shape;
      body_axes = m.axes;
    }
    b.add("box", g, density, body_at, Quatd(Eigen::AngleAxisd(tilt, Vec3d::UnitZ())) * body_axes);
    coupling = std::make_unique<BodyCoupling>(liquid->solver(), RigidParams{}, b, std::vector<Collider>{walls});
    coupling->place(0.0);
    liquid->load(test::block(25, 10, 25, kR));
  }
  // One frame; after_step(dt) after each step.
  void frame_step(const std::function<void(double)>& after_step = [](double) {}) {
    ++frame;
    coupling->begin_frame(frame);
    liquid->advance(t, frame, after_step);
    t += 1.0 / kFps;
  }
  const Bodies& bodies() const { return coupling->rigid().bodies(); }
  // The box's draft with the waterline taken from the liquid's volume (its
  // particles' lattice volume, (2r)^3 each at rest density) and the box's
  // immersed part: level = (V_liquid + b^2 d) / A_tank, d = level - bottom.
  // (The top particle layer is no measure: a free surface's particles sit
  // 2.7 mm below the level of the same water at rest in this tank.)
  double draft(double bottom) const {
    const double area = 0.5 * 0.5, b2 = 0.24 * 0.24, v_liquid = double(liquid->size()) * std::pow(2.0 * kR, 3);
    return (v_liquid / area - bottom) / (1.0 - b2 / area);
  }
};

// How far the liquid stands off a solid: from the floor to the mean height
// of the bottom particle layer, and from the box's bottom (at height
// `bottom`) down to the layer beneath it (the particles under the box's
// footprint, less a margin, within half a radius of the highest).
struct Standoff {
  double floor = 0, body = 0, floor_density = 0;
};

Standoff standoff(const Tank& s, double bottom) {
  Points q;
  s.liquid->store(q);
  const Vec3d c = s.bodies().x[0];
  double lowest = 1e9, highest = -1e9;
  auto under = [&](const Vec3f& p) {
    return std::abs(p.x - c.x()) < 0.1 && std::abs(p.z - c.z()) < 0.1 && p.y < bottom;
  };
  for (std::size_t i = 0; i < q.size(); ++i) {
    const Vec3f p = q.P()[i];
    lowest = std::min(lowest, double(p.y));
    if (under(p)) highest = std::max(highest, double(p.y));
  }
  const float* rho = q.get_float("density");
  double f = 0, b = 0, fr = 0;
  int nf = 0, nb = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    const Vec3f p = q.P()[i];
    if (p.y < lowest + 0.5 * kR) f += p.y, fr += rho ? rho[i] : 0.0, ++nf;
    if (under(p) && p.y > highest - 0.5 * kR) b += p.y, ++nb;
  }
  return {f / nf, bottom - b / nb, fr / nf};
}

// Heights of the box's bottom over the third second: mean and spread.
struct Rest {
  double mean = 0, spread = 0, tilt = 0;
};

Rest settle(Tank& s) {
  double lo = 1e9, hi = -1e9, sum = 0;
  Rest r;
  int n = 0;
  for (int f = 1; f <= 72; ++f) {
    s.frame_step();
    EXPECT_EQ(s.coupling->frame_stats().lost, 0u) << "frame " << f;
    if (f <= 48) continue;
    const Bodies& b = s.bodies();
    const double y = b.x[0].y() - 0.08;
    lo = std::min(lo, y), hi = std::max(hi, y), sum += y, ++n;
    // The angle of the box's up axis from the vertical (upside down is the
    // same box).
    r.tilt = std::max(r.tilt, std::acos(std::min(1.0, std::abs((b.q[0] * s.body_axes.conjugate() * Vec3d::UnitY()).y()))));
  }
  r.mean = sum / n;
  r.spread = hi - lo;
  return r;
}

// Dropped from rest at the still surface, tilted by 0.15 rad: the liquid's
// pressure must right it (the torque of the coupling) and hold it up. It
// settles in about a second (the heave's period is 0.6 s), measured over
// the third. The draft is within `tolerance` of half the height, and the
// liquid stands off the box's bottom as far as off the tank's floor: the
// box is a wall like the others to it.
void floats_half_immersed(std::unique_ptr<Liquid> liquid, double tolerance, bool as_mesh = false) {
  Tank s(500.0, Vec3d(0.25, 0.2 + 0.08, 0.25), std::move(liquid), 0.15, as_mesh);
  const Rest r = settle(s);
  const double draft = s.draft(r.mean);
  const Standoff st = standoff(s, r.mean);
  std::printf("draft %.4f m (half the height: 0.08), bottom within %.3g mm, tilt %.3g rad; standoff %.2f mm at the "
              "floor (density %.1f), %.2f mm under the box\n",
              draft, 1e3 * r.spread, r.tilt, 1e3 * st.floor, st.floor_density, 1e3 * st.body);
  EXPECT_NEAR(draft, 0.08, tolerance * 0.08);
  EXPECT_NEAR(st.body, st.floor, 0.1 * kR);
  EXPECT_LT(r.spread, 0.002);  // afloat and still, not bobbing
  EXPECT_LT(r.tilt, 0.05);     // righted: rocking (little damped) at under a third of the start
}

// PBF holds the liquid one radius off every solid, as the draft's estimate
// assumes: 0.0775 m measured, standoffs 10.0 and 10.1 mm.
TEST(Coupling, BoxOfHalfTheWatersDensityFloatsHalfImmersed) {
  floats_half_immersed(std::make_unique<PbfLiquid>(), 0.05);
}
// The same box as a mesh body: the liquid meets its sampled signed distance
// (a Grid collider in the body's frame) and pushes it back as it does the box.
TEST(Coupling, AMeshBoxOfHalfTheWatersDensityFloatsHalfImmersed) {
  floats_half_immersed(std::make_unique<PbfLiquid>(), 0.05, true);
}
// DFSPH's boundary particles (Akinci et al. 2012) let the loaded liquid
// nearer: the bottom layer stands 7.1 mm off the floor and 7.0 mm off the
// box (r = 10 mm), at 0.1 % over rest density. The box the liquid sees is
// smaller by the difference on each face, so it floats deeper than the
// estimate: 0.0913 m measured, within 15 %. A box held under DFSPH water
// gets 0.955-0.986 of its displaced weight (below), which explains a part
// of the 14 %; for the rest, the estimate's waterline (from the particle
// count, one lattice cell each) is itself in question: read from the
// particles' positions as the level's rise over the same liquid without
// the box, the draft is 0.080-0.098 m by how the level is read (the top
// particle of 2 or 4 cm columns, or the mean height away from the box).
// (WCSPH, the same walls, takes seven times as long; run by hand, it turned
// the box over while its lattice start settled and then floated it 0.0868 m
// deep, still rocking by 0.21 rad, the liquid 7.5 mm off the floor and
// 4.6 mm off the box.)
TEST(Coupling, BoxFloatsHalfImmersedInDfsphWater) {
  floats_half_immersed(std::make_unique<SphLiquid>(SphMethod::Dfsph), 0.15);
}

// Twice the water's density: it sinks and comes to rest on the floor, on the
// last layer of particles (PBF's density constraint holds one layer in a gap
// of one diameter between two walls: nothing squeezes it out).
TEST(Coupling, BoxTwiceAsDenseSinksToTheFloor) {
  Tank s(2000.0, Vec3d(0.25, 0.2 + 0.08, 0.25));
  const Rest r = settle(s);
  std::printf("bottom %.4f m, within %.3g mm\n", r.mean, 1e3 * r.spread);
  EXPECT_NEAR(r.mean, 2 * kR, 0.001);
  EXPECT_LT(r.spread, 0.001);
  EXPECT_LT(r.tilt, 0.05);  // level within 3 degrees: the trapped layer is not quite even (1.6 degrees measured)
}

// A box thrown into the water: over half a second, the liquid's momentum
// changes by its weight's impulse plus the impulses its colliders (the tank
// and the box) gave it, and the box's by its weight's impulse less what it
// gave the liquid; the box does not touch the tank, so that is all.
// `tolerance`: the liquid's error as a fraction of the exchange.
void momentum_accounted_for(std::unique_ptr<Liquid> liquid, double tolerance) {
  Tank s(800.0, Vec3d(0.25, 0.35, 0.25), std::move(liquid));
  Bodies start = s.bodies();
  start.v[0] = Vec3d(0.3, -1.5, 0.0);
  s.coupling->rigid().load(start);
  auto momentum = [&]() -> Vec3d {
    Points q;
    s.liquid->store(q);
    Vec3d P = Vec3d::Zero();
    for (std::size_t i = 0; i < q.size(); ++i) P += Vec3d(q.v()[i].x, q.v()[i].y, q.v()[i].z);
    return P * double(s.liquid->particle_mass());
  };
  const Vec3d P0 = momentum(), B0 = s.bodies().mass[0] * s.bodies().v[0];
  Vec3d J_tank = Vec3d::Zero(), J_box = Vec3d::Zero();
  double T = 0;
  int contacts = 0;
  for (int f = 1; f <= 12; ++f) {
    s.frame_step([&](double dt) {
      const auto& r = s.coupling->last_reactions();
      J_tank += Vec3d(r[0].linear[0], r[0].linear[1], r[0].linear[2]);
      J_box += Vec3d(r[1].linear[0], r[1].linear[1], r[1].linear[2]);
      T += dt;
    });
    contacts = std::max(contacts, s.coupling->frame_stats().rigid.max_contacts);
    EXPECT_EQ(s.coupling->frame_stats().lost, 0u) << "frame " << f;
  }
  ASSERT_EQ(contacts, 0);
  const Vec3d g(0, -9.81, 0);
  const double M = s.bodies().mass[0], m_liquid = double(s.liquid->particle_mass()) * double(s.liquid->size());
  const Vec3d dP = momentum() - P0, dB = s.bodies().mass[0] * s.bodies().v[0] - B0;
  const Vec3d liquid_err = dP - (m_liquid * g * T + J_tank + J_box);
  const Vec3d body_err = dB - (M * g * T - J_box);
  std::printf("box gave the liquid %.4g %.4g %.4g N s; liquid error %.3g %.3g %.3g, body error %.3g %.3g %.3g N s\n",
              J_box.x(), J_box.y(), J_box.z(), liquid_err.x(), liquid_err.y(), liquid_err.z(), body_err.x(),
              body_err.y(), body_err.z());
  EXPECT_GT(J_box.norm(), 0.5 * B0.norm());  // the box gave up most of its momentum
  EXPECT_LT(liquid_err.norm(), tolerance * J_box.norm());
  EXPECT_LT(body_err.norm(), 1e-3 * J_box.norm());
}

// XSPH's pair weights (m / rho_j) are not symmetric: the liquid's own
// momentum drifts by a little (PBF: 0.02 % of the exchange here; DFSPH with
// XSPH 0.05: 0.13 %, without: 2e-7). SPH runs without it, and its
// particle-particle forces cancel pair by pair, so what is left is round-off.
TEST(Coupling, MomentumIsAccountedForBetweenLiquidAndBody) {
  momentum_accounted_for(std::make_unique<PbfLiquid>(), 0.01);
}
TEST(Coupling, MomentumIsAccountedForBetweenDfsphWaterAndBody) {
  momentum_accounted_for(std::make_unique<SphLiquid>(SphMethod::Dfsph, 0.0f), 1e-4);
}
TEST(Coupling, MomentumIsAccountedForBetweenWcsphWaterAndBody) {
  momentum_accounted_for(std::make_unique<SphLiquid>(SphMethod::Wcsph, 0.0f), 1e-4);
}

// MPM measures a collider's impulse where its boundary rule acts, at the
// grid nodes, and APIC's transfers carry momentum exactly: what is left is
// round-off.
TEST(Coupling, MomentumIsAccountedForBetweenMpmWaterAndBody) {
  momentum_accounted_for(std::make_unique<MpmLiquid>(), 1e-4);
}

// A stone-like box (2,000 kg/m^3, 24 x 16 x 24 cm) dropped from 5 cm onto a
// 10 cm bed of MPM sand comes to rest on it: it presses 3.1 kPa on the sand,
// far below the bed's bearing capacity (Terzaghi's 0.5 gamma B N_gamma,
// about 100 kPa for B = 0.24 m, the sand's 2,200 kg/m^3 and its 35 degree
// friction angle, N_gamma about 37), so it sinks in by little (measured
// 7.9 mm at 4 cm cells, r = 1 cm, and still at 0.4 mm/s). A liquid of the
// sand's density would let it sink its 14.5 cm draft, to the floor; water
// does (its bottom 2.8 cm above the floor at 1.5 s).
// Both through the bodies' coupling with MPM, which gives each body the
// momentum the grid nodes its surface holds lose.
TEST(Coupling, ABoxDroppedOnMpmSandRestsOnItAndSinksInWater) {
  for (const MpmMaterial m : {MpmMaterial::Sand, MpmMaterial::Water}) {
    Tank s(2000.0, Vec3d(0.25, 0.15 + 0.08, 0.25), std::make_unique<MpmLiquid>(m));
    s.liquid->load(test::block(25, 5, 25, kR));  // the bed's surface at 0.1 m
    for (int f = 1; f <= 36; ++f) {
      s.frame_step();
      ASSERT_EQ(s.coupling->frame_stats().lost, 0u) << "frame " << f;
    }
    const double bottom = s.bodies().x[0].y() - 0.08, speed = s.bodies().v[0].norm();
    std::printf("%s: the box's bottom at %.4f m, %.4f m/s at 1.5 s\n", m == MpmMaterial::Sand ? "sand" : "water",
                bottom, speed);
    if (m == MpmMaterial::Sand) {
      EXPECT_NEAR(bottom, 0.1, 0.02);  // within half a cell of the bed's surface
      EXPECT_LT(speed, 0.01);          // at rest
    } else {
      EXPECT_LT(bottom, 0.1 - 0.04);  // a cell and more under the surface
    }
  }
}

// MPM keeps its material in its domain box by itself, and the bodies
// stepped with it meet the box's faces as walls too (SolverBase::own_walls):
// with no collider in the scene, a box dropped beside a block of sand lands
// on the domain's floor and rests there.
TEST(Coupling, BodiesMeetTheMpmDomainsWalls) {
  MpmParams p;
  p.domain_min = vec3(0.0f);
  p.domain_max = vec3(0.5f);
  p.domain_friction = 0.5f;
  const std::unique_ptr<MpmSolver> s = make_mpm_solver_cpu(p);
  Bodies b;
  BodyGeometry g;
  g.half = Vec3d(0.05, 0.04, 0.05);
  b.add("box", g, 2000.0, Vec3d(0.35, 0.2, 0.25), Quatd::Identity());
  BodyCoupling c(*s, RigidParams{}, b, {});
  c.place(0.0);
  s->load(test::block(10, 5, 10, kR), MpmMaterial::Sand);  // 0.2 m a side, 0.1 m high, in a corner
  double t = 0;
  for (int f = 1; f <= 24; ++f, t += 1.0 / kFps) {
    c.begin_frame(f);
    mpm_advance_frame(*s, t, 1.0 / kFps, 0.0f, f, {});
  }
  const Bodies& B = c.rigid().bodies();
  std::printf("box at %.5f m (its half height 0.04), %.4f m/s\n", B.x[0].y(), B.v[0].norm());
  EXPECT_NEAR(B.x[0].y(), 0.04, 0.001);
  EXPECT_LT(B.v[0].norm(), 0.01);
}

// A box held under water at three heights a third of `step` apart (the
// liquid's lattice start, or the grid, meets its faces at three offsets):
// Archimedes' principle with no waterline to read. The liquid pushes it up
// with the weight of the water it displaces, rho g V = 90.4 N, measured by
// the impulses the box's walls give the liquid after the first second
// (while the lattice start's sloshing settles), until `frames`. `tolerance`:
// of that force. `after` checks the liquid at the end.
void held_box_is_buoyed_up(const std::function<std::unique_ptr<Liquid>()>& make_liquid, double tolerance, float step,
                           int frames, const std::function<void(const Liquid&)>& after = [](const Liquid&) {}) {
  const Collider walls = test::tank(vec3(0, 0, 0), vec3(0.5f, 0.6f, 0.5f));
  const double V = 0.24 * 0.16 * 0.24, weight = 1000.0 * 9.81 * V;
  for (int third = 0; third < 3; ++third) {
    const std::unique_ptr<Liquid> l = make_liquid();
    Collider box;
    box.type = ShapeType::Box;
    box.center = vec3(0.25f, 0.18f + float(third) * step / 3.0f, 0.25f);
    box.size = vec3(0.12f, 0.08f, 0.12f);
    l->solver().set_colliders({walls, box});
    l->solver().track_reactions(true);
    Points w = test::block(25, 17, 25, kR);
    std::vector<uint8_t> keep(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) keep[i] = collider_sdf(box, w.P()[i], 0.0f).distance > 0.0f;
    w.filter(keep);
    l->load(w);
    double t = 0, J = 0, T = 0;
    for (int f = 1; f <= frames; ++f, t += 1.0 / kFps)
      l->advance(t, f, [&](double dt) {
        if (f <= 24) return;
        std::vector<ColliderImpulse> r;
        l->solver().reactions(r);
        J += r[1].linear[1];
        T += dt;
      });
    const double force = -J / T;
    std::printf("box at %.4f m: buoyed up by %.2f N (rho g V %.2f N, ratio %.3f)\n", double(box.center.y), force,
                weight, force / weight);
    EXPECT_NEAR(force / weight, 1.0, tolerance);
    after(*l);
  }
}

// 8 cm under PBF water, over the second second: 1.008, 1.038 and 1.035.
TEST(Coupling, ABoxHeldUnderPbfWaterIsBuoyedUpByTheWaterItDisplaces) {
  held_box_is_buoyed_up([] { return std::make_unique<PbfLiquid>(); }, 0.05, 2 * kR, 48);
}
// DFSPH: 0.955, 0.964 and 0.986. Its boundary particles push a solid a few
// per cent short of its displaced weight, which accounts for part of the
// floating box's excess draft (BoxFloatsHalfImmersedInDfsphWater).
TEST(Coupling, ABoxHeldUnderDfsphWaterIsBuoyedUpByTheWaterItDisplaces) {
  held_box_is_buoyed_up([] { return std::make_unique<SphLiquid>(SphMethod::Dfsph); }, 0.05, 2 * kR, 48);
}

// MPM water meets solids where its volume fraction and theirs overfill the
// grid nodes between them (mpm::in_contact), so it rests on a surface, not
// a cell into it, wherever the surface lies in the grid. The box 8 cm under
// 0.34 m of water is 6 x 4 x 6 cells of dx = 4 cm, its heights a third of a
// cell apart, measured over the half second after the first: the water
// pushes it up with rho g V to within a fifth (measured 1.03, 0.94 and
// 0.83, deepest first), and its bottom layer rests a radius off the floor
// (9.7 mm). (Before the tank's faces each held the water at its edges and
// corners, and particles were put back out of solids, 1.05, 0.95 and 0.85
// and 9.3 mm, with water seeping out of the tank.) The rule before,
// holding the nodes inside a solid, let the water into solids by most of a
// cell: the box got 0.06 to 0.37 of rho g V, and the bottom layer sat 0.3 to
// 1.1 mm off the floor. Bodies in MPM water do not float to the draft yet
// (docs/architecture.md, "Coupling").
TEST(Coupling, ABoxHeldInMpmWaterIsBuoyedUp) {
  held_box_is_buoyed_up([] { return std::make_unique<MpmLiquid>(); }, 0.2, 0.04f, 36, [](const Liquid& l) {
    Points q;
    l.store(q);
    double floor = 0;
    int n = 0;
    for (std::size_t i = 0; i < q.size(); ++i) {
      const Vec3f p = q.P()[i];
      if (p.x > 0.05 && p.x < 0.45 && p.z > 0.05 && p.z < 0.45 && p.y < 2 * kR) floor += p.y, ++n;
    }
    floor /= n;
    std::printf("  bottom layer %.2f mm off the floor\n", 1e3 * floor);
    EXPECT_NEAR(floor, kR, 0.002);
  });
}

}  // namespace
}  // namespace eddy
