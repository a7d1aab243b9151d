// Sources and sinks (core/sources.h): a rate source emits its flow rate's
// particles, never overlapping what is there; a fill source refills its
// shape; sinks remove exactly what lies inside them; ids stay unique.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "eddy/core/error.h"
#include "eddy/core/sources.h"

namespace eddy {
namespace {

constexpr float kR = 0.01f;
constexpr double kFps = 24.0;

Points empty_liquid() {
  Points p;
  p.radius = kR;
  p.add("v", AttribType::Vec3);
  p.add("id", AttribType::Int);
  return p;
}

FluidSource box_source(float flow) {
  FluidSource s;
  s.shape.type = ShapeType::Box;
  s.shape.center = vec3(0.0f, 1.0f, 0.0f);
  s.shape.size = vec3(0.1f, 0.05f, 0.1f);  // 0.2 x 0.1 x 0.2 m
  s.flow_rate = flow;
  s.velocity = vec3(0.0f, -1.0f, 0.0f);
  return s;
}

double min_distance(const Points& p) {
  double d = 1e9;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j) d = std::min(d, double(length(p.P()[i] - p.P()[j])));
  return d;
}

// The particles fall out of the source at its velocity between frames.
void advect(Points& p, double dt) {
  for (std::size_t i = 0; i < p.size(); ++i) p.P()[i] += p.v()[i] * float(dt);
}

// Frames 1..24 of source s into p, the particles carried out at their
// velocity after each when `carry`; the frames' counts summed.
EmitStats one_second(Points& p, const FluidSource& s, bool carry) {
  int32_t next = 0;
  EmitStats sum;
  for (int f = 1; f <= 24; ++f) {
    const EmitStats st = emit(p, s, f, 1, kFps, next);
    sum.emitted += st.emitted;
    sum.short_of += st.short_of;
    if (carry) advect(p, 1.0 / kFps);
  }
  return sum;
}

TEST(Sources, ARateSourceEmitsItsFlowRate) {
  // 0.02 m^3/s of particles of r = 1 cm: 2,500 a second.
  Points p = empty_liquid();
  const FluidSource s = box_source(0.02f);
  const EmitStats st = one_second(p, s, true);
  EXPECT_EQ(st.short_of, 0u);
  EXPECT_EQ(st.emitted, 2500u);
  EXPECT_EQ(p.size(), 2500u);
  EXPECT_EQ(rate_total(s, 24, kFps, kR), 2500u);
  EXPECT_NEAR(double(p.size()) * std::pow(2.0 * kR, 3), 0.02, 1e-7);  // the volume is the flow rate's (r in float)
  std::set<int32_t> ids(p.get_int("id"), p.get_int("id") + p.size());
  EXPECT_EQ(ids.size(), p.size());
  EXPECT_EQ(*ids.rbegin(), 2499);
  // Never on top of each other: the jitter (5 %) keeps new neighbours 0.9 spacings apart.
  EXPECT_GE(min_distance(p), 0.9 * 2 * kR - 1e-6);
}

// An animated rate's totals come from its volume table (the node fills it
// with the rate's integral over each frame): counts follow the table, and
// past its end the rate in flow_rate goes on.
TEST(Sources, AnAnimatedRateEmitsWhatItsVolumeTableSays) {
  FluidSource s = box_source(0.02f);
  s.animated_rate = true;
  s.volume_first = 3;
  s.start = 1;
  const double cell = std::pow(2.0 * kR, 3);
  s.volume = {10.5 * cell, 10.5 * cell, 40 * cell};  // by the end of frames 3, 4, 5
  EXPECT_EQ(rate_total(s, 2, kFps, kR), 0u);  // before the table: nothing
  EXPECT_EQ(rate_total(s, 3, kFps, kR), 10u);
  EXPECT_EQ(rate_total(s, 4, kFps, kR), 10u);
  EXPECT_EQ(rate_total(s, 5, kFps, kR), 40u);
  EXPECT_EQ(rate_total(s, 6, kFps, kR), std::size_t(std::floor(40 + 0.02 / kFps / cell + 1e-9)));
  s.end = 4;
  EXPECT_EQ(rate_total(s, 5, kFps, kR), 10u);  // nothing after the end
  Points p = empty_liquid();
  int32_t next = 0;
  s.end = 1000;
  for (int f = 1; f <= 5; ++f) emit(p, s, f, 1, kFps, next);
  EXPECT_EQ(p.size(), 40u);
}

TEST(Sources, ARateSourceThatCannotEmptyReportsWhatDidNotFit) {
  Points p = empty_liquid();
  // Nothing carries the particles out: the region a rate source fills, its
  // box swept a frame's travel downstream (0.2 x (0.1 + 1/24) x 0.2 m:
  // 10 x 7 x 10 sites), fills up.
  const EmitStats st = one_second(p, box_source(0.02f), false);
  EXPECT_EQ(st.emitted, 700u);
  EXPECT_EQ(st.emitted + st.short_of, 2500u);
}

// A source one particle thick (0.2 x 0.02 x 0.2 m) at 1 m/s: a frame's
// travel (4.2 cm) is more than the shape holds, yet it emits its flow rate
// (0.03 m^3/s: 156 particles a frame, of the 208 a frame's travel would
// hold) as one unbroken stream: no gap along it wider than a spacing and
// the jitter.
TEST(Sources, AThinSourceEmitsAnUnbrokenStream) {
  Points p = empty_liquid();
  FluidSource s = box_source(0.03f);
  s.shape.size = vec3(0.1f, 0.01f, 0.1f);
  const EmitStats st = one_second(p, s, true);
  EXPECT_EQ(st.short_of, 0u);
  EXPECT_EQ(st.emitted, rate_total(s, 24, kFps, kR));
  std::vector<float> y(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) y[i] = p.P()[i].y;
  std::sort(y.begin(), y.end());
  float gap = 0;
  for (std::size_t i = 1; i < y.size(); ++i) gap = std::max(gap, y[i] - y[i - 1]);
  std::printf("thin source: %zu particles over %.3f m of stream, the widest gap along it %.4f m\n", p.size(),
              double(y.back() - y.front()), double(gap));
  EXPECT_LE(gap, 2 * kR * (1 + 2 * 0.05f) + 1e-5f);
  EXPECT_GE(min_distance(p), 0.9 * 2 * kR - 1e-6);
}

TEST(Sources, AFillSourceKeepsItsShapeFull) {
  Points p = empty_liquid();
  FluidSource s = box_source(0.0f);
  s.fill = true;
  int32_t next = 0;
  EXPECT_EQ(emit(p, s, 1, 1, kFps, next).emitted, 500u);  // 10 x 5 x 10 sites
  EXPECT_EQ(emit(p, s, 2, 1, kFps, next).emitted, 0u);    // full
  // Half of it drains away; the next frame refills that half.
  std::vector<uint8_t> keep(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) keep[i] = p.P()[i].x < 0.0f;
  p.filter(keep);
  EXPECT_EQ(emit(p, s, 3, 1, kFps, next).emitted, 250u);
  EXPECT_GE(min_distance(p), 0.9 * 2 * kR - 1e-6);
}

// A source's attributes: set on the particles it makes, 0 on those already
// there; a whole number fits an int attribute the particles have, an int a
// float one; anything else is refused, naming the attribute, before
// anything is added.
TEST(Sources, TheParticlesMadeCarryTheSourcesAttributes) {
  Points p = empty_liquid();
  p.add("temperature", AttribType::Float);
  FluidSource s = box_source(0.0f);
  s.fill = true;
  int32_t next = 0;
  ASSERT_EQ(emit(p, s, 1, 1, kFps, next).emitted, 500u);  // the first 500, without attributes
  s.attributes = {{"material", AttribType::Int, vec3(2.0f, 0, 0)},
                  {"temperature", AttribType::Int, vec3(300.0f, 0, 0)},  // an int into the float attribute
                  {"Cd", AttribType::Vec3, vec3(1.0f, 0.5f, 0.0f)}};
  std::vector<uint8_t> keep(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) keep[i] = p.P()[i].x < 0.0f;
  p.filter(keep);  // 250 stay
  ASSERT_EQ(emit(p, s, 2, 1, kFps, next).emitted, 250u);
  ASSERT_EQ(p.size(), 500u);
  ASSERT_EQ(p.find("temperature")->type, AttribType::Float);
  ASSERT_EQ(p.find("material")->type, AttribType::Int);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const bool made = i >= 250;  // appended after the ones kept
    EXPECT_EQ(p.get_int("material")[i], made ? 2 : 0) << i;
    EXPECT_EQ(p.get_float("temperature")[i], made ? 300.0f : 0.0f) << i;
    EXPECT_EQ(p.get_vec3("Cd")[i], made ? vec3(1.0f, 0.5f, 0.0f) : vec3(0.0f)) << i;
  }
  auto refused = [&](SourceAttribute a, const char* message) {
    Points q = p;
    FluidSource t = s;
    t.attributes = {a};
    try {
      emit(q, t, 3, 1, kFps, next);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), message);
    }
    EXPECT_EQ(q.size(), p.size());  // nothing added
  };
  refused({"material", AttribType::Float, vec3(1.5f, 0, 0)},
          "source: attribute 'material' is int on the particles, the source gives a float that is not whole "
          "(1.500000)");
  refused({"Cd", AttribType::Float, vec3(1.0f, 0, 0)},
          "source: attribute 'Cd' is vec3 on the particles, the source gives a float");
  refused({"id", AttribType::Int, vec3(7.0f, 0, 0)}, "source: attribute 'id' is the solver's own; a source cannot set it");
}

TEST(Sources, SinksRemoveWhatIsInsideThem) {
  Points p = empty_liquid();
  p.resize(100);
  for (int i = 0; i < 100; ++i) p.P()[i] = vec3(0.0f, 0.01f * float(i), 0.0f);  // y = 0 .. 0.99
  Collider floor_kill;  // below y = 0.305
  floor_kill.type = ShapeType::Plane;
  floor_kill.center = vec3(0.0f, 0.305f, 0.0f);
  Collider ball;
  ball.type = ShapeType::Sphere;
  ball.center = vec3(0.0f, 0.8f, 0.0f);
  ball.size = vec3(0.055f);  // y in (0.745, 0.855): 0.75 .. 0.85
  EXPECT_EQ(kill(p, {floor_kill, ball}, 0.0f), 31u + 11u);
  EXPECT_EQ(p.size(), 58u);
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_GT(p.P()[i].y, 0.305f);
    EXPECT_FALSE(p.P()[i].y > 0.745f && p.P()[i].y < 0.855f);
  }
}

}  // namespace
}  // namespace eddy

#include "eddy/core/force_field.h"

namespace eddy {
namespace {

TEST(ForceFields, EachKindPushesAsDocumented) {
  ForceField u;
  u.type = int32_t(FieldType::Uniform);
  u.vector = vec3(1.0f, 2.0f, 3.0f);
  EXPECT_EQ(field_accel(u, vec3(5.0f), vec3(1.0f)), vec3(1.0f, 2.0f, 3.0f));
  ForceField w;  // a swirl about +y through the origin, 2 m/s^2
  w.type = int32_t(FieldType::Vortex);
  w.strength = 2.0f;
  EXPECT_LT(length(field_accel(w, vec3(0.5f, 7.0f, 0.0f), vec3(0.0f)) - vec3(0.0f, 0.0f, -2.0f)), 1e-6f);  // y x x = -z
  EXPECT_LT(length(field_accel(w, vec3(0.0f, -1.0f, 0.3f), vec3(0.0f)) - vec3(2.0f, 0.0f, 0.0f)), 1e-6f);  // y x z = x
  EXPECT_EQ(field_accel(w, vec3(0.0f, 3.0f, 0.0f), vec3(0.0f)), vec3(0.0f));  // on the axis: none
  ForceField d;  // towards 1 m/s along x at 4 /s
  d.type = int32_t(FieldType::Drag);
  d.vector = vec3(1.0f, 0.0f, 0.0f);
  d.strength = 4.0f;
  EXPECT_EQ(field_accel(d, vec3(0.0f), vec3(0.0f, 1.0f, 0.0f)), vec3(4.0f, -4.0f, 0.0f));
  // A region of radius 1 fading over its outer 0.5: full, half, nothing.
  u.center = vec3(0.0f);
  u.radius = 1.0f;
  u.falloff = 0.5f;
  EXPECT_EQ(field_accel(u, vec3(0.4f, 0.0f, 0.0f), vec3(0.0f)), u.vector);
  EXPECT_LT(length(field_accel(u, vec3(0.0f, 0.75f, 0.0f), vec3(0.0f)) - u.vector * 0.5f), 1e-6f);
  EXPECT_EQ(field_accel(u, vec3(0.0f, 0.0f, 1.0f), vec3(0.0f)), vec3(0.0f));
  const ForceField both[2] = {d, w};
  EXPECT_LT(length(fields_accel(both, 2, vec3(0.5f, 0.0f, 0.0f), vec3(0.0f)) - vec3(4.0f, 0.0f, -2.0f)), 1e-6f);
}

}  // namespace
}  // namespace eddy
