#include "eddy/graph/util.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "eddy/core/error.h"

namespace eddy {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string snake_case(std::string_view name) {
  // A word starts at a capital after a small letter (LiquidSurface), or at
  // the last capital of a run before a small letter (MPMSolver -> mpm_solver).
  auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  auto lower = [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (upper(c) && i > 0 && out.back() != '_' &&
        (lower(name[i - 1]) || (i + 1 < name.size() && lower(name[i + 1]))))
      out += '_';
    out += char(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Plausible: at most a third of the letters wrong (and at least 2 allowed).
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_d <= limit ? best : std::string();
}

bool has_frame_token(std::string_view p) {
  for (std::size_t i = 0; i + 1 < p.size(); ++i)
    if (p[i] == '$' && (p[i + 1] == 'F' || (p[i + 1] == '{' && i + 2 < p.size() && p[i + 2] == 'F'))) return true;
  return false;
}

std::string expand_path_tokens(std::string_view p, int frame, std::string_view node_id) {
  std::string out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '$' && i + 2 < p.size() + 1 && p.substr(i + 1, 2) == "OS") {
      out += node_id;
      i += 2;
    } else if (p[i] == '$' && i + 1 < p.size() && p[i + 1] == 'F') {
      int pad = 0;
      std::size_t j = i + 2;
      if (j < p.size() && p[j] >= '1' && p[j] <= '9') pad = p[j++] - '0';
      char buf[32];
      std::snprintf(buf, sizeof buf, "%0*d", pad, frame);
      out += buf;
      i = j - 1;
    } else {
      out += p[i];
    }
  }
  return out;
}

Hasher& Hasher::bytes(const void* p, std::size_t n) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= c[i];
    h *= 1099511628211ull;
  }
  return *this;
}

std::vector<std::string> env_path_list(const char* name) {
  std::vector<std::string> out;
  const char* env = std::getenv(name);
  if (!env) return out;
  const std::string s = env;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(':', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace eddy
