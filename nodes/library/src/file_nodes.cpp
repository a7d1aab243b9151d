// File nodes: WriteVDB, WriteMesh, ReadVDB, ReadMesh, ReadParticles and
// FileCache. Writers go through a temporary name and a rename, so an
// interrupted cook never leaves a half-written file.
#include <filesystem>

#include "eddy/core/io.h"
#include "eddy/core/ply.h"
#include "eddy/graph/node.h"
#include "eddy/graph/util.h"
#include "eddy/surfacing/surfacing.h"
#include "library.h"

namespace eddy::library {

namespace {

namespace fs = std::filesystem;

void require_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(path + ": no such " + what);
  if (fs::is_directory(path, ec)) throw Error(path + ": is a folder, not a " + what);
}

// Points from .ply or from a .vdb's points grid (the first, or `grid`).
Points read_points_file(const std::string& path, const std::string& grid) {
  const std::string ext = lower_extension(path);
  if (ext == ".ply") return read_ply_points(path);
  if (ext != ".vdb") throw Error(path + ": unknown particle format '" + ext + "' (read .ply or .vdb)");
  const Volumes v = read_vdb(path);
  for (const auto& g : v.grids)
    if (g.grid_class() == GridClass::Points && (grid.empty() || g.name() == grid)) return vdb_to_points(g);
  throw Error(path + ": holds no points grid" + (grid.empty() ? std::string() : " named '" + grid + "'"));
}

void write_points_file(const std::string& path, const Points& pts) {
  const std::string ext = lower_extension(path);
  if (ext == ".ply") return write_ply_points(path, pts, {"*"});
  if (ext != ".vdb") throw Error(path + ": unknown particle format '" + ext + "' (write .ply or .vdb)");
  Volumes v;
  v.grids.push_back(points_to_vdb(pts, pts.radius > 0 ? 2.0 * pts.radius : 0.1, {"*"}));
  write_vdb(path, v);
}

class WriteVdbNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    Volumes all;
    for (std::size_t k = 0; k < ctx.input_count("vdb"); ++k) {
      const auto v = ctx.input<Volumes>("vdb", k);
      all.grids.insert(all.grids.end(), v->grids.begin(), v->grids.end());
    }
    const std::string path = ctx.output_path(ctx.param_string("path"));
    write_vdb(path, all);
    std::string names;
    for (const auto& g : all.grids) names += (names.empty() ? "" : ", ") + g.name();
    ctx.info("wrote " + path + " (" + (names.empty() ? std::string("no grids") : names) + ")");
    ctx.output("vdb", std::move(all));
  }
};

class WriteMeshNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto m = ctx.input<Mesh>("mesh");
    const std::string path = ctx.output_path(ctx.param_string("path"));
    write_mesh(path, *m);
    ctx.info("wrote " + path + " (" + std::to_string(m->face_count()) + " faces)");
    ctx.output_shared("mesh", m);
  }
};

class ReadVdbNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const std::string path = ctx.input_path(ctx.param_string("path"));
    ctx.output("vdb", read_vdb(path));
  }
};

class ReadMeshNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const std::string path = ctx.input_path(ctx.param_string("path"));
    require_file(path, "mesh file");
    Mesh m = read_mesh(path);
    if (m.normals.empty() && m.face_count() > 0) compute_point_normals(m);
    ctx.info(std::to_string(m.points.size()) + " points, " + std::to_string(m.face_count()) + " faces");
    ctx.output("mesh", std::move(m));
  }
};

class ReadParticlesNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const std::string path = ctx.input_path(ctx.param_string("path"));
    require_file(path, "particle file");
    Points p = read_points_file(path, ctx.param_string("grid"));
    if (ctx.param_float("radius") > 0) p.radius = float(ctx.param_float("radius"));
    ctx.info(std::to_string(p.size()) + " particles");
    ctx.output("particles", std::move(p));
  }
};

// Houdini's File Cache: the input is cooked and written only when its file
// for the frame is missing (mode auto) or always (write); read never cooks
// upstream. Inputs are lazy, so a frame found on disk costs only the read.
class FileCacheNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const std::string path = ctx.output_path(ctx.param_string("path"));
    const std::string mode = ctx.param_string("mode");
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (mode == "read" || (mode == "auto" && exists)) {
      if (!exists) throw Error(path + ": not cached yet (mode read never cooks upstream; use auto)");
      Points p = read_points_file(path, "");
      ctx.info("read " + path);
      ctx.output("particles", std::move(p));
      return;
    }
    const auto pts = ctx.input<Points>("particles");
    write_points_file(path, *pts);
    ctx.info("wrote " + path);
    ctx.output_shared("particles", pts);
  }
};

}  // namespace

void register_files(Registry& r) {
  {
    NodeSpec s("WriteVDB", "Output",
               "Writes every grid of its inputs (level sets, VDB points, fog) into one .vdb file per frame, "
               "which Houdini and Blender open as it is. Passes the grids through.");
    s.input("vdb", "volumes", "Grids to write (any number of links, in link order).", false, true)
        .output("vdb", "volumes", "All input grids.");
    output_path_param(s, "$OS/fluid.$F4.vdb", "File path (.vdb)",
                      {".vdb"});
    r.add(std::move(s.make<WriteVdbNode>()));
  }
  {
    NodeSpec s("WriteMesh", "Output",
               "Writes the mesh of each frame as .obj (text, with normals) or binary .ply.");
    s.input("mesh", "mesh", "Mesh to write.")
        .output("mesh", "mesh", "The input, unchanged.");
    output_path_param(s, "$OS/surface.$F4.obj", "File path (.obj or .ply)",
                      {".obj", ".ply"});
    r.add(std::move(s.make<WriteMeshNode>()));
  }
  const std::string relative = "File path; relative paths resolve against the graph file's folder.";
  {
    NodeSpec s("ReadVDB", "Input",
               "Reads every grid of a .vdb file (a $F4 token reads a sequence).");
    s.output("vdb", "volumes", "The file's grids.");
    input_path_param(s, relative, {});
    r.add(std::move(s.make<ReadVdbNode>()));
  }
  {
    NodeSpec s("ReadMesh", "Input",
               "Reads a mesh from .obj or .ply (a $F4 token reads a sequence).");
    s.output("mesh", "mesh", "The mesh, with point normals (computed when the file has none).");
    input_path_param(s, relative, {".obj", ".ply"});
    r.add(std::move(s.make<ReadMeshNode>()));
  }
  {
    NodeSpec s("ReadParticles", "Input",
               "Reads particles with their attributes from a .ply point cloud or a .vdb's VDB points.");
    s.output("particles", "points", "The particles.");
    input_path_param(s, relative, {".ply", ".vdb"})
        .param_string("grid", "", "For .vdb: the points grid to read (empty: the first).")
        .param_float("radius", 0.0, 0.0, {}, "m", "Particle radius to set (0: the one stored in the file).");
    r.add(std::move(s.make<ReadParticlesNode>()));
  }
  {
    NodeSpec s("FileCache", "Output",
               "Houdini's File Cache for particles: each frame is written to disk (.ply or .vdb) and read back "
               "when its file exists, so a long simulation is cooked once. mode auto: read when cached, else cook "
               "and write; write: always cook and overwrite; read: only read.");
    s.lazy_inputs = true;
    s.input("particles", "points", "Particles to cache.", true)
        .output("particles", "points", "The particles, cooked or read.");
    output_path_param(s, "$OS/cache.$F4.ply", "File path (.ply or .vdb) with a frame token", {".ply", ".vdb"})
        .param_enum("mode", {"auto", "write", "read"}, "auto", "When to cook upstream (see above).");
    r.add(std::move(s.make<FileCacheNode>()));
  }
}

}  // namespace eddy::library
