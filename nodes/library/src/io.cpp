// WriteParticles: a .ply point cloud per frame, written atomically.
#include <sstream>

#include "eddy/core/io.h"
#include "eddy/core/ply.h"
#include "eddy/graph/node.h"
#include "eddy/graph/util.h"
#include "library.h"

namespace eddy::library {

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == ',' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

namespace {

void check_output_pattern(const std::string& path, const CheckContext& c, const std::string& example) {
  if (path.empty()) throw Error(c.where + ".params.path: is empty; expected a file path like " + example);
  if (c.frame_end > c.frame_start && !has_frame_token(path))
    throw Error(c.where + ".params.path: \"" + path + "\" has no frame token ($F or $F4) but the graph cooks frames " +
                std::to_string(c.frame_start) + "-" + std::to_string(c.frame_end) +
                ": every frame would overwrite the last");
}

void check_extension(const std::string& path, const CheckContext& c, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return;
  const std::string ext = lower_extension(path);
  std::string list;
  for (const std::string& a : allowed) {
    if (ext == a) return;
    list += (list.empty() ? "" : ", ") + a;
  }
  throw Error(c.where + ".params.path: \"" + path + "\" has extension '" + ext + "'; expected " + list);
}

const std::string& path_of(const ParamSet& p) { return std::get<std::string>(p.at("path")); }

}  // namespace

NodeSpec& output_path_param(NodeSpec& s, std::string def, std::string doc, std::vector<std::string> extensions) {
  doc += "; $F4 is the frame padded to 4 digits ($F unpadded), $OS the node id; a relative path resolves under the "
         "output folder (eddy run --out).";
  std::string example = def.rfind("$OS/", 0) == 0 ? def.substr(4) : def;
  s.time_dependent = true;
  s.check = [example = std::move(example), extensions](const ParamSet& p, const CheckContext& c) {
    check_output_pattern(path_of(p), c, example);
    check_extension(path_of(p), c, extensions);
  };
  return s.param_path("path", std::move(def), std::move(doc));
}

NodeSpec& input_path_param(NodeSpec& s, std::string doc, std::vector<std::string> extensions) {
  s.frame_dependent = [](const ParamSet& p) { return has_frame_token(path_of(p)); };
  if (!extensions.empty())
    s.check = [extensions](const ParamSet& p, const CheckContext& c) { check_extension(path_of(p), c, extensions); };
  return s.param_path("path", "", std::move(doc));
}

namespace {

class WriteParticlesNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto pts = ctx.input<Points>("particles");
    const std::string path = ctx.output_path(ctx.param_string("path"));
    write_ply_points(path, *pts, split_names(ctx.param_string("attributes")));
    ctx.info("wrote " + path);
    ctx.output_shared("particles", pts);
  }
};

}  // namespace

void register_io(Registry& r) {
  NodeSpec s("WriteParticles", "Output",
             "Writes the particles of each frame as a binary .ply point cloud (x y z, vx vy vz, then the chosen "
             "attributes) to a temporary name and renames it into place. A relative path resolves under the "
             "output folder (eddy run --out). Passes its input through.");
  s.input("particles", "points", "Particles to write.")
      .output("particles", "points", "The input, unchanged.");
  output_path_param(s, "$OS/particles.$F4.ply", "File path (.ply)", {})
      .param_string("attributes", "*", "Attributes to write besides P and v, separated by spaces; * writes all.");
  r.add(std::move(s.make<WriteParticlesNode>()));
}

}  // namespace eddy::library
