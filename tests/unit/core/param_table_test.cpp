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
#include "param_table_checks.h"

namespace eddy {
namespace {

TEST(ParamTable, PbfRangesAreEnforcedByName) { expect_ranges_enforced(pbf_param_table()); }
TEST(ParamTable, SphRangesAreEnforcedByName) { expect_ranges_enforced(sph_param_table()); }
TEST(ParamTable, MpmRangesAreEnforcedByName) { expect_ranges_enforced(mpm_param_table()); }

TEST(ParamTable, NestedFieldsReachTheirMaterial) {
  // MPM's per-material fields go through accessors: each must reach its own material.
  MpmParams p;
  const auto* f = mpm_param_table().find("snow_youngs_modulus");
  ASSERT_NE(f, nullptr);
  f->set_real(p, 123.0);
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
