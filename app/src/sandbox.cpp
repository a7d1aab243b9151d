#include "sandbox.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "eddy/graph/json.h"

namespace eddy::app {

namespace fs = std::filesystem;
using json = nlohmann::json;

HttpError path_error(int status, const char* what, const std::string& rel, const std::string& why) {
  return HttpError(status, std::string(what) + ": '" + rel + "' " + why);
}

fs::path inside(const fs::path& base, const std::string& rel, const char* what) {
  if (rel.empty()) throw HttpError(400, std::string(what) + ": a path is required");
  const fs::path p(rel);
  if (p.is_absolute() || rel.find('\\') != std::string::npos)
    throw path_error(403, what, rel, "must be relative to the served folder");
  for (const auto& part : p)
    if (part == "..") throw path_error(403, what, rel, "may not contain '..'");
  std::error_code ec;
  const fs::path b = fs::weakly_canonical(base, ec);
  const fs::path full = fs::weakly_canonical(base / p, ec);
  if (ec) throw path_error(400, what, rel, "cannot be resolved");
  auto [bi, fi] = std::mismatch(b.begin(), b.end(), full.begin(), full.end());
  if (bi != b.end()) throw path_error(403, what, rel, "leads outside the served folder");
  return full;
}

bool is_graph_file(const std::string& name) {
  static const std::string kSuffix = ".eddy.json";
  return name.size() >= kSuffix.size() && name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

fs::path graph_file(const fs::path& root, const std::string& rel) {
  const fs::path p = inside(root, rel, "path");
  if (!is_graph_file(p.string())) throw path_error(400, "path", rel, "is not a graph file (*.eddy.json)");
  return p;
}

json parse_body(const std::string& body) {
  try {
    return parse_json(body, "the request body");
  } catch (const Error& e) {
    throw HttpError(400, e.what());
  }
}

std::pair<int, int> frame_pair(const json& body, const Graph& g) {
  if (!body.contains("frames")) return {g.frame_start, g.frame_end};
  const json& f = body["frames"];
  if (f.is_number_integer()) return {f.get<int>(), f.get<int>()};
  if (!f.is_array() || f.size() != 2 || !f[0].is_number_integer() || !f[1].is_number_integer())
    throw HttpError(400, "'frames' must be a frame or [first, last]");
  const int a = f[0].get<int>(), b = f[1].get<int>();
  if (a > b) throw HttpError(400, "'frames': the first frame is after the last");
  if (b - a > 100000) throw HttpError(400, "'frames': more than 100000 frames");
  return {a, b};
}

GeometryQuery geometry_query(const std::multimap<std::string, std::string>& params) {
  auto param = [&](const char* name) {
    const auto it = params.find(name);
    return it == params.end() ? std::string() : it->second;
  };
  GeometryQuery q;
  q.node = param("node");
  if (q.node.empty()) throw HttpError(400, "'node' is required");
  q.output = param("output");
  const std::string frame = param("frame");
  const char* end = frame.data() + frame.size();
  const auto [at, ec] = std::from_chars(frame.data(), end, q.frame);
  if (frame.empty() || ec != std::errc() || at != end)
    throw HttpError(400, "'frame' must be an integer, got '" + frame.substr(0, 40) + "'");
  std::stringstream list(param("attributes"));
  for (std::string a; std::getline(list, a, ',');)
    if (!a.empty()) q.attributes.push_back(a);
  return q;
}

void need_node(const Graph& g, const std::string& node) {
  if (!g.find(node)) throw HttpError(404, "no node '" + node + "' in the graph");
}

}  // namespace eddy::app
