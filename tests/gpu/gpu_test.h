#pragma once
// What the tests of the CUDA backend against the CPU share: the splashing
// block they step, the check that a build without CUDA refuses to make a
// device solver, and the matching of the two backends' particles by id.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "eddy/core/error.h"
#include "eddy/core/points.h"
#include "../unit/core/scenes.h"

namespace eddy::test {

// A block thrown into a corner of the tank: every stage of a step works.
inline Points splash_block() { return moving_block(12, 10, 8, 0.02f, vec3(0.1f, 0.0f, 0.0f), vec3(1.5f, 0, -0.5f)); }

// `make` (a device solver's factory) throws eddy::Error naming the missing CUDA.
template <class Make>
void expect_built_without_cuda(Make&& make) {
  try {
    make();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without CUDA"), std::string::npos) << e.what();
  }
}

// For each particle of `a`, the index of the particle of `b` with the same
// `id` (the backends reorder particles differently); throws when one is missing.
inline std::vector<std::size_t> match_by_id(const Points& a, const Points& b) {
  std::map<int32_t, std::size_t> at;
  for (std::size_t i = 0; i < b.size(); ++i) at[b.get_int("id")[i]] = i;
  std::vector<std::size_t> j(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) j[i] = at.at(a.get_int("id")[i]);
  return j;
}

// The largest difference between a's and b's values of the attribute `name`
// (a vec3 one: the length of the difference; a float one: its magnitude),
// particle a[i] against b[at[i]] (at from match_by_id).
inline float max_difference(const Points& a, const Points& b, const std::vector<std::size_t>& at,
                            const std::string& name) {
  float worst = 0;
  const bool vector = a.find(name) && a.find(name)->type == AttribType::Vec3;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float d = vector ? length(a.get_vec3(name)[i] - b.get_vec3(name)[at[i]])
                           : std::fabs(a.get_float(name)[i] - b.get_float(name)[at[i]]);
    worst = std::max(worst, d);
  }
  return worst;
}

// Both backends' states after the same steps, stored, and for each particle
// of `cpu` the index of the same particle (by id) in `device`.
struct StoredPair {
  Points cpu, device;
  std::vector<std::size_t> at;
  float max_difference(const std::string& name) const { return test::max_difference(cpu, device, at, name); }
};
template <class Solver, class... StoreArgs>
StoredPair store_both(const Solver& cpu, const Solver& device, StoreArgs... args) {
  StoredPair s;
  cpu.store(s.cpu, args...);
  device.store(s.device, args...);
  EXPECT_EQ(s.cpu.size(), s.device.size());
  s.at = match_by_id(s.cpu, s.device);
  return s;
}

// Directed neighbour pairs counted by the CPU and the device in one step.
// A pair whose distance lies within float round-off of the kernel radius h
// can fall inside on one backend and outside on the other (the device fuses
// multiply-adds): positions agree to about 1e-6 m, and with the pair count
// growing as r^3 near r = h, the pairs within 2e-6 m of h are about
// 3 * 2e-6 / h of them, 1.5e-4 at h = 4 cm. This allows four times that
// fraction plus 2 pairs; a wrong cell or a missed neighbour block is off by
// far more.
inline void expect_pair_counts_close(uint64_t cpu, uint64_t device, int step) {
  const double allowed = 2.0 + 6e-4 * double(cpu);
  EXPECT_LE(std::fabs(double(cpu) - double(device)), allowed) << "step " << step << ": " << cpu << " pairs on the CPU, "
                                                              << device << " on the device";
}

}  // namespace eddy::test
