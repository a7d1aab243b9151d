// A node's outputs, served: GET /api/geometry streams one as binary geometry
// (geometry.h), POST /api/export writes a range of frames as files under the
// output folder.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "eddy/core/mesh.h"
#include "eddy/core/ply.h"
#include "eddy/graph/bodies_value.h"
#include "eddy/graph/soft_value.h"
#include "eddy/graph/util.h"
#include "eddy/graph/volumes_value.h"
#include "eddy/surfacing/surfacing.h"
#include "geometry.h"
#include "sandbox.h"
#include "server_impl.h"

namespace eddy::app {

namespace fs = std::filesystem;
using json = nlohmann::json;

Value Server::Impl::value_of(const std::string& node, const std::string& output, int frame) {
  std::lock_guard<std::timed_mutex> lock(graph.mu);
  CookEngine& e = graph.need();
  need_node(e.graph(), node);
  const auto outs = e.cook(node, frame);
  if (outs->empty()) throw HttpError(404, "node '" + node + "' has no outputs");
  // No output named: the first its spec lists that it produced (a liquid
  // solver's particles before its bodies).
  std::string name = output;
  if (name.empty()) {
    const NodeSpec* spec = registry.find(e.graph().find(node)->type);
    for (const auto& o : spec ? spec->outputs : std::vector<SocketSpec>{})
      if (outs->count(o.name)) {
        name = o.name;
        break;
      }
    if (name.empty()) return outs->begin()->second;
  }
  const auto it = outs->find(name);
  if (it == outs->end()) throw HttpError(404, "node '" + node + "' has no output '" + output + "'");
  return it->second;
}

namespace {

// Bodies as their shapes' mesh, soft bodies as their surface, anything else as it is.
Value as_mesh(const Value& v) {
  if (v.type() == "bodies") return Value::make(bodies_to_mesh(*v.as<Bodies>()));
  if (v.type() == "soft") return Value::make(v.as<SoftBodies>()->deformed_surface());
  return v;
}

}  // namespace

void Server::Impl::geometry(const httplib::Request& req, httplib::Response& res) {
  const GeometryQuery q = geometry_query(req.params);
  const std::string& node = q.node;
  const std::vector<std::string>& attrs = q.attributes;
  Value v = value_of(node, q.output, q.frame);
  // Bodies are drawn as their shapes' mesh, soft bodies as their surface.
  v = as_mesh(v);
  // The value's own arrays are streamed (kept alive by the provider), not copied.
  auto data = std::make_shared<Encoded>();
  if (v.type() == "points") *data = encode_points(*v.as<Points>(), attrs);
  else if (v.type() == "mesh") *data = encode_mesh(*v.as<Mesh>());
  else if (v.type() == "colliders") *data = encode_colliders(v.as<Colliders>()->shapes);
  else throw HttpError(415, "node '" + node + "' outputs " + v.type() + ", not points, a mesh, colliders, bodies or soft bodies");
  res.set_content_provider(
      data->size(), "application/octet-stream",
      [data, v](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        // Write [offset, offset + length) from the parts.
        std::size_t at = 0;
        for (const auto& [p, n] : data->parts()) {
          if (length == 0) break;
          if (offset < at + n) {
            const std::size_t from = offset - at, take = std::min(n - from, length);
            if (!sink.write(p + from, take)) return false;
            offset += take;
            length -= take;
          }
          at += n;
        }
        return true;
      });
}

void Server::Impl::export_files(const httplib::Request& req, httplib::Response& res) {
  const json body = parse_body(req.body);
  const std::string node = field<std::string>(body, "node", "", true);
  const std::string output = field<std::string>(body, "output", "");
  const std::string pattern = field<std::string>(body, "path", "", true);
  std::pair<int, int> frames;
  {
    std::lock_guard<std::timed_mutex> lock(graph.mu);
    frames = frame_pair(body, graph.need().graph());
  }
  if (frames.first != frames.second && !has_frame_token(pattern))
    throw path_error(400, "path", pattern, "has no frame token ($F4, $F) for a range of frames");
  const std::string ext = fs::path(pattern).extension().string();
  if (ext != ".obj" && ext != ".ply" && ext != ".vdb")
    throw path_error(400, "path", pattern, "must end in .obj, .ply or .vdb");
  fs::create_directories(out);
  json written = json::array();
  for (int f = frames.first; f <= frames.second; ++f) {
    const std::string rel = expand_path_tokens(pattern, f, node);
    const fs::path p = inside(out, rel, "path");
    const Value v = value_of(node, output, f);
    fs::create_directories(p.parent_path());
    if (v.type() == "points" && ext == ".ply") {
      write_ply_points(p.string(), *v.as<Points>(), {});
    } else if ((v.type() == "mesh" || v.type() == "bodies" || v.type() == "soft") && ext != ".vdb") {
      write_mesh(p.string(), *as_mesh(v).as<Mesh>());
    } else if (v.type() == "volumes" && ext == ".vdb") {
      write_vdb(p.string(), *v.as<Volumes>());
    } else {
      throw HttpError(415, "node '" + node + "' outputs " + v.type() + ", which cannot be written as " + ext +
                               " (points: .ply; meshes, bodies and soft bodies: .obj, .ply; volumes: .vdb)");
    }
    written.push_back(fs::relative(p, out).generic_string());
  }
  hub.publish({{"event", "exported"}, {"node", node}, {"files", written}});
  reply_json(res, json{{"files", written}, {"folder", out.string()}});
}

}  // namespace eddy::app
