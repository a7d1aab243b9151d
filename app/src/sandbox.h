#pragma once
// What a request may ask of `eddy serve`: paths confined to the served
// folders, and the checked fields of a JSON body. A refusal is an HttpError,
// which the routes answer with its status and message.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "eddy/core/error.h"
#include "eddy/graph/graph.h"

namespace eddy::app {

// A request the server refuses: HTTP status and message.
struct HttpError : Error {
  HttpError(int s, const std::string& m) : Error(m), status(s) {}
  int status;
};

// A refused path: "WHAT: 'REL' WHY".
HttpError path_error(int status, const char* what, const std::string& rel, const std::string& why);

// `rel` resolved under `base`, links followed; refuses absolute paths, ".."
// and anything that lands outside base.
std::filesystem::path inside(const std::filesystem::path& base, const std::string& rel, const char* what);

// Whether a name or path is that of a graph file (*.eddy.json).
bool is_graph_file(const std::string& name);
// `rel` under the root, and a graph file.
std::filesystem::path graph_file(const std::filesystem::path& root, const std::string& rel);

nlohmann::json parse_body(const std::string& body);

// The field `name` of a JSON object body, `fallback` when it is absent.
template <class T>
T field(const nlohmann::json& j, const char* name, const T& fallback, bool required = false) {
  if (!j.is_object()) throw HttpError(400, "the request body must be a JSON object");
  const auto it = j.find(name);
  if (it == j.end()) {
    if (required) throw HttpError(400, std::string("the request body lacks '") + name + "'");
    return fallback;
  }
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw HttpError(400, std::string("'") + name + "' has the wrong type");
  }
}

// The body's "frames" (a frame or [first, last]); the graph's range when absent.
std::pair<int, int> frame_pair(const nlohmann::json& body, const Graph& g);

// The query of GET /api/geometry: `node` (required), `output` (empty: the
// node's first), `frame` (an integer, the whole text of it) and
// `attributes` (comma-separated names). `params` as httplib parses them.
struct GeometryQuery {
  std::string node, output;
  int frame = 0;
  std::vector<std::string> attributes;
};
GeometryQuery geometry_query(const std::multimap<std::string, std::string>& params);

// Refuses a node id the graph does not have.
void need_node(const Graph& g, const std::string& node);

}  // namespace eddy::app
