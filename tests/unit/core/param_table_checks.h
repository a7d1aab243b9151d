#pragma once
// A check every parameter table (core/include/eddy/core/param_table.h) must
// pass: the defaults lie inside their ranges and validate() accepts them,
// validate() refuses a value just outside either bounded end of any range
// (and NaN) and names the field, and every field is listed once with a doc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "eddy/core/error.h"
#include "eddy/core/param_table.h"

namespace eddy {

template <class P>
void set_number(const ParamField<P>& f, P& p, double v) {
  if (f.kind == ParamKind::Real) f.set_real(p, v);
  else f.integer(p) = int(v);
}

template <class P>
void expect_ranges_enforced(const ParamTable<P>& t, int min_checked = 6) {
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
    const double v = f.kind == ParamKind::Real ? f.get_real(d) : double(f.integer(d));
    EXPECT_GE(v, f.lo) << t.method() << " " << f.name << ": default below its range";
    EXPECT_LE(v, f.hi) << t.method() << " " << f.name << ": default above its range";
    // One step outside each end: 1 for an integer, 0.1 % (at least 1e-6) for a float.
    const double step_lo = f.kind == ParamKind::Integer ? 1.0 : std::max(1e-3 * std::fabs(f.lo), 1e-6);
    const double step_hi = f.kind == ParamKind::Integer ? 1.0 : std::max(1e-3 * std::fabs(f.hi), 1e-6);
    if (f.kind == ParamKind::Real) {  // NaN lies in no range
      P p;
      set_number(f, p, std::numeric_limits<double>::quiet_NaN());
      EXPECT_THROW(validate(p), Error) << t.method() << " " << f.name << " = NaN was accepted";
    }
    for (const double bad : {f.lo - step_lo, f.hi + step_hi}) {
      if (std::isinf(bad)) continue;  // an unbounded end
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
  EXPECT_GE(checked, min_checked) << t.method();
}

}  // namespace eddy
