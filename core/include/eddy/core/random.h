#pragma once
// Counter-based random numbers: the same value for the same (seed, index)
// on every machine, thread count and run, so emission and jitter are
// reproducible and a cached frame resumes exactly.
#include <cstdint>

namespace eddy {

// SplitMix64's finaliser (Steele, Lea & Flood 2014): a bijective mix of 64 bits.
inline uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A uniform number in [-0.5, 0.5) for component `axis` of item `i` under `seed`.
inline double hash_uniform(uint64_t seed, uint64_t i, int axis) {
  return double(splitmix(seed * 0x632be59bd9b4e019ull + i * 3 + uint64_t(axis)) >> 11) * 0x1.0p-53 - 0.5;
}

}  // namespace eddy
