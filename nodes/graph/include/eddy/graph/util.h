#pragma once
// Small helpers shared by the graph layer and the node library.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eddy/core/io.h"

namespace eddy {

// Levenshtein distance.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` when it is plausibly a misspelling, else "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// A CamelCase name in snake_case: LiquidSurface -> liquid_surface (asset
// node ids and file names from their type's name).
std::string snake_case(std::string_view name);

// Whether the pattern contains a frame token ($F, $F2..$F9, ${F}).
bool has_frame_token(std::string_view pattern);
// The entries of a ':'-separated search path (EDDY_PLUGIN_PATH,
// EDDY_ASSET_PATH) held by environment variable `name`; none when unset.
std::vector<std::string> env_path_list(const char* name);
// Expands $F / $Fn (zero-padded to n digits) and $OS (node id).
std::string expand_path_tokens(std::string_view pattern, int frame, std::string_view node_id);

// 64-bit FNV-1a, for cook signatures.
struct Hasher {
  uint64_t h = 1469598103934665603ull;
  Hasher& bytes(const void* p, std::size_t n);
  Hasher& str(std::string_view s) { uint64_t n = s.size(); bytes(&n, 8); return bytes(s.data(), s.size()); }
  template <class T>
  Hasher& pod(const T& v) { return bytes(&v, sizeof(T)); }
};

}  // namespace eddy
