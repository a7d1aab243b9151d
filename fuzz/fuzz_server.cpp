// Requests from elsewhere, as `eddy serve` reads them before any endpoint
// acts: the Host / Origin / token checks, JSON bodies and the fields taken
// from them, paths confined to the served folder, the frame pair, and the
// geometry query. The input is split at newlines into the request's method,
// path, Host, Origin, token, query string (k=v&k=v, undecoded) and body.
// Each either passes or throws HttpError / eddy::Error.
#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "eddy/core/error.h"
#include "eddy/graph/graph.h"
#include "guard.h"
#include "sandbox.h"

namespace {

std::vector<std::string> fields(const std::string& text, std::size_t n) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (out.size() + 1 < n) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    out.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  out.push_back(at <= text.size() ? text.substr(at) : std::string());
  out.resize(n);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto f = fields(std::string(reinterpret_cast<const char*>(data), size), 7);
  httplib::Request req;
  req.method = f[0];
  req.path = f[1];
  if (!f[2].empty()) req.headers.emplace("Host", f[2]);
  if (!f[3].empty()) req.headers.emplace("Origin", f[3]);
  if (!f[4].empty()) req.headers.emplace("X-Eddy-Token", f[4]);
  for (std::size_t at = 0; at <= f[5].size();) {
    const std::size_t amp = std::min(f[5].find('&', at), f[5].size());
    const std::string kv = f[5].substr(at, amp - at);
    const std::size_t eq = kv.find('=');
    if (!kv.empty()) req.params.emplace(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
    at = amp + 1;
  }
  const eddy::app::RequestGuard guard(8188, "0123456789abcdef0123456789abcdef");
  (void)guard.refusal(req);
  try {
    eddy::app::geometry_query(req.params);
  } catch (const eddy::Error&) {
  }
  static const std::filesystem::path root = std::filesystem::temp_directory_path();
  static const eddy::Graph graph = [] {
    eddy::Graph g;
    g.frame_start = 1;
    g.frame_end = 10;
    return g;
  }();
  try {
    const nlohmann::json body = eddy::app::parse_body(f[6]);
    const std::string path = eddy::app::field<std::string>(body, "path", "", false);
    if (!path.empty()) eddy::app::graph_file(root, path);
    eddy::app::frame_pair(body, graph);
  } catch (const eddy::Error&) {
  }
  return 0;
}
