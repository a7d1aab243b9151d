// The methods' parameter tables (param_table.h): every default lies inside
// its field's range, validate() refuses a value just outside either end of
// any range and names the field, and the tables list every field once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "eddy/core/mpm/mpm.h"
#include "eddy/core/pbf/pbf.h"
#include "eddy/core/sph/sph.h"

namespace eddy {
namespace {

template <class P>
void set_number(const ParamField<P>& f, P& p, double v) {
  if (f.kind == ParamKind::Real) f.real(p) = float(v);
  else f.integer(p) = int(v);
}

template <class P>
void expect_ranges_enforced(const ParamTable<P>& t) {
  P d;
  EXPECT_NO_THROW(validate(d)) << t.method();
  std::set<std::string> names;
  int checked = 0;
  for (const ParamField<P>& f : t.fields()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name << " listed twice";
    EXPECT_FALSE(f.doc.empty()) << f.name;
    if (f.kind == ParamKind::Choice) {
      EXPECT_NE(std::find(f.items.begin(), f.items.end(), f.get_choice(d)), f.items.end()) << f.name;
      P p;
      EXPECT_FALSE(f.set_choice(p, "no_such_item")) << f.name;
      continue;
    }
    if (f.kind != ParamKind::Real && f.kind != ParamKind::Integer) continue;
    const double v = f.kind == ParamKind::Real ? double(f.real(d)) : double(f.integer(d));
    EXPECT_GE(v, f.lo) << t.method() << " " << f.name << ": default below its range";
    EXPECT_LE(v, f.hi) << t.method() << " " << f.name << ": default above its range";
    // One step outside each end: 1 for an integer, 0.1 % (at least 1e-6) for a float.
    const double step_lo = f.kind == ParamKind::Integer ? 1.0 : std::max(1e-3 * std::fabs(f.lo), 1e-6);
    const double step_hi = f.kind == ParamKind::Integer ? 1.0 : std::max(1e-3 * std::fabs(f.hi), 1e-6);
    for (const double bad : {f.lo - step_lo, f.hi + step_hi}) {
      P p;
      set_number(f, p, bad);
      try {
        validate(p);
        ADD_FAILURE() << t.method() << " " << f.name << " = " << bad << " was accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'" + f.name + "'"), std::string::npos) << e.what();
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 5) << t.method();
}

TEST(ParamTable, PbfRangesAreEnforcedByName) { expect_ranges_enforced(pbf_param_table()); }
TEST(ParamTable, SphRangesAreEnforcedByName) { expect_ranges_enforced(sph_param_table()); }
TEST(ParamTable, MpmRangesAreEnforcedByName) { expect_ranges_enforced(mpm_param_table()); }

TEST(ParamTable, NestedFieldsReachTheirMaterial) {
  // MPM's per-material fields go through accessors: each must reach its own material.
  MpmParams p;
  const auto* f = mpm_param_table().find("snow_youngs_modulus");
  ASSERT_NE(f, nullptr);
  f->real(p) = 123.0f;
  EXPECT_EQ(p.materials[int(MpmMaterial::Snow)].youngs_modulus, 123.0f);
  EXPECT_EQ(p.materials[int(MpmMaterial::Jelly)].youngs_modulus, MpmParams{}.materials[1].youngs_modulus);
}

TEST(ParamTable, TheMessageNamesTheRangeAndTheValue) {
  PbfParams p;
  p.epsilon = 12.0f;
  try {
    validate(p);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "PBF parameter 'epsilon': must be in [0, 10], got 12");
  }
}

}  // namespace
}  // namespace eddy
