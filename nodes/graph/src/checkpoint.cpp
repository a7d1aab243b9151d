// Checkpoints of stateful nodes (checkpoint.h): the format and its types.
#include "eddy/graph/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <type_traits>

#include "eddy/core/io.h"
#include "eddy/graph/bodies_value.h"
#include "eddy/graph/soft_value.h"

namespace eddy {
namespace {

constexpr char kMagic[] = "EDDYSTATE\n";
constexpr uint32_t kVersion = 3;  // 2: points carry their detail values; 3: bodies their contact stiffness

// Appends plain values, strings and arrays to a byte string.
struct Writer {
  std::string out;
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void str(const std::string& s) {
    pod(uint64_t(s.size()));
    out += s;
  }
  template <class T>
  void array(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    pod(uint64_t(v.size()));
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void vec3d(const std::vector<Vec3d>& v) {
    pod(uint64_t(v.size()));
    for (const Vec3d& x : v) pod(std::array<double, 3>{x.x(), x.y(), x.z()});
  }
};

// Reads them back; a short or inconsistent file is an eddy::Error naming it.
struct Reader {
  const std::string& in;
  const std::string& path;
  std::size_t at = 0;
  [[noreturn]] void damaged(const std::string& what) const {
    throw Error(path + ": damaged checkpoint (" + what + " at byte " + std::to_string(at) + ")");
  }
  void take(void* p, std::size_t n) {
    if (n > in.size() - at) damaged("ends early");
    std::memcpy(p, in.data() + at, n);
    at += n;
  }
  template <class T>
  T pod() {
    T v;
    take(&v, sizeof(T));
    return v;
  }
  uint64_t count(std::size_t element) {
    const auto n = pod<uint64_t>();
    if (element && n > (in.size() - at) / element) damaged("a count larger than the file");
    return n;
  }
  std::string str() {
    std::string s(count(1), '\0');
    take(s.data(), s.size());
    return s;
  }
  template <class T>
  std::vector<T> array() {
    std::vector<T> v(count(sizeof(T)));
    take(v.data(), v.size() * sizeof(T));
    return v;
  }
  std::vector<Vec3d> vec3d() {
    std::vector<Vec3d> v(count(24));
    for (Vec3d& x : v) {
      const auto a = pod<std::array<double, 3>>();
      x = Vec3d(a[0], a[1], a[2]);
    }
    return v;
  }
};

// One list of a struct's arrays serves both directions: `put` and `get`
// are overloaded alike for each kind of array, so a struct's save and load
// walk the same list (arrays_of_mesh, arrays_of_bodies, arrays_of_soft) in
// the same order.
template <class T>
void put(Writer& w, const std::vector<T>& v) {
  w.array(v);
}
void put(Writer& w, const std::vector<Vec3d>& v) { w.vec3d(v); }
void put(Writer& w, const std::vector<Quatd>& v) {
  w.pod(uint64_t(v.size()));
  for (const Quatd& q : v) w.pod(std::array<double, 4>{q.w(), q.x(), q.y(), q.z()});
}
template <class T>
void get(Reader& r, std::vector<T>& v) {
  v = r.array<T>();
}
void get(Reader& r, std::vector<Vec3d>& v) { v = r.vec3d(); }
void get(Reader& r, std::vector<Quatd>& v) {
  v.resize(r.count(32));
  for (Quatd& q : v) {
    const auto a = r.pod<std::array<double, 4>>();
    q = Quatd(a[0], a[1], a[2], a[3]);
  }
}

// A new field in one of these structs must be saved and loaded below (an
// array goes in its struct's arrays_of_ list): the sizes stand guard (on the platform they were counted on).
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(Mesh) == 5 * 24, "Mesh changed: save the new field in its checkpoint");
static_assert(sizeof(Bodies) == 11 * 24, "Bodies changed: save the new field in its checkpoint");
static_assert(sizeof(BodyGeometry) == 8 + 5 * 8 + 16, "BodyGeometry changed: save the new field in its checkpoint");
static_assert(sizeof(SampledSdf) == 12 + 12 + 4 + 4 + 24, "SampledSdf changed: save the new field in its checkpoint");
static_assert(sizeof(SoftBodies) == 16 * 24 + sizeof(Mesh), "SoftBodies changed: save the new field in its checkpoint");
static_assert(sizeof(SoftObject) == 32 + sizeof(SoftMaterial) + 8 + 32, "SoftObject changed: save it in its checkpoint");
static_assert(sizeof(SoftMaterial) == 8 * 8, "SoftMaterial changed: save the new field in its checkpoint");
#endif

void save(Writer& w, const Points& p) {
  w.pod(p.radius);
  w.pod(uint64_t(p.size()));
  w.pod(uint32_t(p.attributes().size()));
  for (const auto& a : p.attributes()) {
    w.str(a.name);
    w.pod(uint8_t(a.type));
    w.out.append(static_cast<const char*>(p.data(a)), p.size() * attrib_size(a.type));
  }
  w.pod(uint32_t(p.detail.size()));
  for (const auto& [name, values] : p.detail) {
    w.str(name);
    w.array(values);
  }
}

Points load_points(Reader& r) {
  const auto radius = r.pod<float>();
  Points p(r.count(12));  // at least P per point
  p.radius = radius;
  const auto n = r.pod<uint32_t>();
  for (uint32_t k = 0; k < n; ++k) {
    const std::string name = r.str();
    const auto type = r.pod<uint8_t>();
    if (type > uint8_t(AttribType::Vec3)) r.damaged("an attribute of unknown type");
    p.add(name, AttribType(type));
    r.take(p.data(*p.find(name)), p.size() * attrib_size(AttribType(type)));
  }
  const auto details = r.pod<uint32_t>();
  for (uint32_t k = 0; k < details; ++k) {
    const std::string name = r.str();
    p.detail[name] = r.array<double>();
  }
  return p;
}

template <class M, class F>
void arrays_of_mesh(M& m, F&& f) {
  f(m.points), f(m.triangles), f(m.quads), f(m.normals), f(m.velocities);
}

void save(Writer& w, const Mesh& m) {
  arrays_of_mesh(m, [&](const auto& a) { put(w, a); });
}

Mesh load_mesh(Reader& r) {
  Mesh m;
  arrays_of_mesh(m, [&](auto& a) { get(r, a); });
  const std::size_t n = m.points.size();
  for (const auto& t : m.triangles)
    for (int32_t i : t)
      if (i < 0 || std::size_t(i) >= n) r.damaged("a face naming point " + std::to_string(i) + " of " + std::to_string(n));
  for (const auto& q : m.quads)
    for (int32_t i : q)
      if (i < 0 || std::size_t(i) >= n) r.damaged("a face naming point " + std::to_string(i) + " of " + std::to_string(n));
  if ((!m.normals.empty() && m.normals.size() != n) || (!m.velocities.empty() && m.velocities.size() != n))
    r.damaged("normals or velocities not one per point");
  return m;
}

void put(Writer& w, const Mesh& m) { save(w, m); }
void get(Reader& r, Mesh& m) { m = load_mesh(r); }

// The bodies' per-body arrays, after their names and shapes.
template <class B, class F>
void arrays_of_bodies(B& b, F&& f) {
  f(b.mass), f(b.inertia), f(b.friction), f(b.stiffness), f(b.dissipation), f(b.x), f(b.q), f(b.v), f(b.w);
}

// A mesh body's shape is saved where it first appears and named by its
// index after that: the bodies made from one mesh share it.
void save(Writer& w, const Bodies& b) {
  w.pod(uint64_t(b.size()));
  std::vector<const BodyMesh*> meshes;
  for (std::size_t i = 0; i < b.size(); ++i) {
    w.str(b.name[i]);
    const BodyGeometry& g = b.geometry[i];
    w.pod(int32_t(g.shape));
    w.pod(std::array<double, 5>{g.half.x(), g.half.y(), g.half.z(), g.radius, g.half_height});
    if (g.shape != BodyShape::Mesh) continue;
    const auto seen = std::find(meshes.begin(), meshes.end(), g.mesh.get());
    w.pod(uint32_t(seen - meshes.begin()));
    if (seen != meshes.end()) continue;
    meshes.push_back(g.mesh.get());
    save(w, g.mesh->mesh);
    const SampledSdf& sdf = g.mesh->sdf;
    w.pod(std::array<int32_t, 3>{sdf.dims[0], sdf.dims[1], sdf.dims[2]});
    w.pod(std::array<float, 4>{sdf.origin[0], sdf.origin[1], sdf.origin[2], sdf.dx});
    w.array(sdf.values);
    w.pod(g.mesh->spacing);
  }
  arrays_of_bodies(b, [&](const auto& a) { put(w, a); });
}

std::shared_ptr<const BodyMesh> load_body_mesh(Reader& r, std::vector<std::shared_ptr<const BodyMesh>>& meshes) {
  const auto k = r.pod<uint32_t>();
  if (k < meshes.size()) return meshes[k];
  if (k > meshes.size()) r.damaged("a body naming mesh " + std::to_string(k) + " before it was saved");
  auto m = std::make_shared<BodyMesh>();
  m->mesh = load_mesh(r);
  SampledSdf& sdf = m->sdf;
  const auto dims = r.pod<std::array<int32_t, 3>>();
  const auto at = r.pod<std::array<float, 4>>();
  sdf.values = r.array<float>();
  for (int a = 0; a < 3; ++a) {
    sdf.dims[a] = dims[std::size_t(a)];
    sdf.origin[a] = at[std::size_t(a)];
  }
  sdf.dx = at[3];
  const auto spacing = r.pod<double>();
  if (m->mesh.points.empty() || dims[0] < 2 || dims[1] < 2 || dims[2] < 2 || !(sdf.dx > 0) || !(spacing > 0) ||
      sdf.values.size() != std::size_t(dims[0]) * std::size_t(dims[1]) * std::size_t(dims[2]))
    r.damaged("a mesh body's samples that do not fit its grid");
  m->finish(spacing);
  meshes.push_back(m);
  return m;
}

Bodies load_bodies(Reader& r) {
  Bodies b;
  std::vector<std::shared_ptr<const BodyMesh>> meshes;
  const uint64_t n = r.count(8 + 4 + 40);
  for (uint64_t i = 0; i < n; ++i) {
    b.name.push_back(r.str());
    BodyGeometry g;
    const auto shape = r.pod<int32_t>();
    if (shape < 0 || shape > int32_t(BodyShape::Mesh)) r.damaged("a body of unknown shape");
    g.shape = BodyShape(shape);
    const auto d = r.pod<std::array<double, 5>>();
    g.half = Vec3d(d[0], d[1], d[2]);
    g.radius = d[3];
    g.half_height = d[4];
    if (g.shape == BodyShape::Mesh) g.mesh = load_body_mesh(r, meshes);
    b.geometry.push_back(g);
  }
  arrays_of_bodies(b, [&](auto& a) {
    get(r, a);
    if (a.size() != n) r.damaged("bodies' arrays of different lengths");
  });
  return b;
}

// The soft bodies' arrays, after their objects; the surface mesh in the middle.
template <class S, class F>
void arrays_of_soft(S& s, F&& f) {
  f(s.x), f(s.v), f(s.rest), f(s.mass), f(s.pinned), f(s.touches), f(s.pin_target), f(s.attach), f(s.attach_local);
  f(s.tets), f(s.tris), f(s.surface), f(s.embed_node), f(s.embed_weight), f(s.contact_slots);
  f(s.contact_slot_weights);
}

void save(Writer& w, const SoftBodies& s) {
  w.pod(uint64_t(s.objects.size()));
  for (const SoftObject& o : s.objects) {
    w.str(o.name);
    w.pod(o.material);
    w.pod(uint8_t(o.cloth));
    w.pod(std::array<uint32_t, 8>{o.node_begin, o.node_end, o.tet_begin, o.tet_end, o.tri_begin, o.tri_end,
                                  o.surface_point_begin, o.surface_point_end});
  }
  arrays_of_soft(s, [&](const auto& a) { put(w, a); });
}

SoftBodies load_soft(Reader& r) {
  SoftBodies s;
  s.objects.resize(r.count(8 + sizeof(SoftMaterial) + 1 + 32));
  for (SoftObject& o : s.objects) {
    o.name = r.str();
    o.material = r.pod<SoftMaterial>();
    o.cloth = r.pod<uint8_t>() != 0;
    const auto k = r.pod<std::array<uint32_t, 8>>();
    o.node_begin = k[0], o.node_end = k[1], o.tet_begin = k[2], o.tet_end = k[3];
    o.tri_begin = k[4], o.tri_end = k[5], o.surface_point_begin = k[6], o.surface_point_end = k[7];
  }
  arrays_of_soft(s, [&](auto& a) { get(r, a); });
  // Every index in range: the solver reads through them unchecked.
  const std::size_t n = s.x.size();
  for (std::size_t k : {s.v.size(), s.rest.size(), s.mass.size(), s.pinned.size(), s.touches.size(), s.pin_target.size()})
    if (k != n) r.damaged("soft bodies' node arrays of different lengths");
  if ((!s.attach.empty() && s.attach.size() != n) || (!s.attach_local.empty() && s.attach_local.size() != n))
    r.damaged("soft bodies' attachments not one per node");
  auto node = [&](int32_t i) {
    if (i < 0 || std::size_t(i) >= n) r.damaged("an element naming node " + std::to_string(i) + " of " + std::to_string(n));
  };
  for (const auto& t : s.tets)
    for (int32_t i : t) node(i);
  for (const auto& t : s.tris)
    for (int32_t i : t) node(i);
  const std::size_t sp = s.surface.points.size();
  if (s.embed_node.size() != sp || s.embed_weight.size() != sp) r.damaged("surface embedding not one per surface point");
  for (std::size_t k = 0; k < sp; ++k)
    for (std::size_t j = 0; j < 4; ++j)
      if (s.embed_weight[k][j] != 0) node(s.embed_node[k][j]);
  for (const SoftObject& o : s.objects)
    if (o.node_begin > o.node_end || o.node_end > n || o.tet_begin > o.tet_end || o.tet_end > s.tets.size() ||
        o.tri_begin > o.tri_end || o.tri_end > s.tris.size() || o.surface_point_begin > o.surface_point_end ||
        o.surface_point_end > sp)
      r.damaged("object '" + o.name + "' ranging outside the arrays");
  if (s.contact_slot_weights.size() != s.contact_slots.size()) r.damaged("contact slots without their weights");
  return s;
}

// The file's header up to its outputs; checks the magic and the version.
struct Header {
  uint64_t signature = 0;
  int32_t frame = 0;
  std::string node;
};

Header read_header(Reader& r) {
  char magic[sizeof kMagic - 1];
  if (r.in.size() < sizeof magic) r.damaged("too short for a checkpoint");
  r.take(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof magic) != 0) r.damaged("not a checkpoint");
  const auto version = r.pod<uint32_t>();
  if (version != kVersion)
    throw Error(r.path + ": checkpoint of format version " + std::to_string(version) + "; this eddy reads version " +
                std::to_string(kVersion));
  Header h;
  h.signature = r.pod<uint64_t>();
  h.frame = r.pod<int32_t>();
  h.node = r.str();
  return h;
}

}  // namespace

bool checkpointable(const Outputs& outputs) {
  for (const auto& [socket, v] : outputs) {
    const std::string& t = v.type();
    if (t != "points" && t != "mesh" && t != "bodies" && t != "soft") return false;
  }
  return true;
}

std::string checkpoint_path(const std::string& dir, const std::string& node, int frame) {
  char f[16];
  std::snprintf(f, sizeof f, "%04d", frame);
  return (std::filesystem::path(dir) / node / (node + "." + f + ".eddystate")).string();
}

void write_checkpoint(const std::string& dir, const std::string& node, int frame, uint64_t signature,
                      const Outputs& outputs) {
  const std::string path = checkpoint_path(dir, node, frame);
  Writer w;
  w.out.append(kMagic, sizeof kMagic - 1);
  w.pod(kVersion);
  w.pod(signature);
  w.pod(int32_t(frame));
  w.str(node);
  w.pod(uint32_t(outputs.size()));
  for (const auto& [socket, v] : outputs) {
    w.str(socket);
    w.str(v.type());
    if (v.type() == "points") save(w, *v.as<Points>());
    else if (v.type() == "mesh") save(w, *v.as<Mesh>());
    else if (v.type() == "bodies") save(w, *v.as<Bodies>());
    else if (v.type() == "soft") save(w, *v.as<SoftBodies>());
    else throw Error(path + ": output '" + socket + "' is of type '" + v.type() + "', which no checkpoint holds");
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) throw Error(path + ": cannot make its folder: " + ec.message());
  write_file_atomic(path, w.out);
}

std::shared_ptr<const Outputs> read_checkpoint(const std::string& dir, const std::string& node, int frame,
                                               uint64_t signature) {
  const std::string path = checkpoint_path(dir, node, frame);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return nullptr;
  // The header first: a checkpoint of other parameters is not read whole.
  if (checkpoint_signature(path) != signature) return nullptr;
  const std::string data = read_file(path, "checkpoint");
  Reader r{data, path};
  const Header h = read_header(r);
  if (h.signature != signature) return nullptr;
  if (h.frame != frame || h.node != node) r.damaged("the header names another node or frame");
  auto out = std::make_shared<Outputs>();
  const auto n = r.pod<uint32_t>();
  for (uint32_t k = 0; k < n; ++k) {
    const std::string socket = r.str(), type = r.str();
    if (type == "points") (*out)[socket] = Value::make(load_points(r));
    else if (type == "mesh") (*out)[socket] = Value::make(load_mesh(r));
    else if (type == "bodies") (*out)[socket] = Value::make(load_bodies(r));
    else if (type == "soft") (*out)[socket] = Value::make(load_soft(r));
    else r.damaged("an output of unknown type '" + type + "'");
  }
  if (r.at != data.size()) r.damaged("bytes after the last output");
  return out;
}

uint64_t checkpoint_signature(const std::string& path) {
  // Magic, version and signature: the first 22 bytes.
  std::string head(sizeof kMagic - 1 + 4 + 8, '\0');
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path + ": cannot open the checkpoint");
  head.resize(std::fread(head.data(), 1, head.size(), f));
  std::fclose(f);
  Reader r{head, path};
  char magic[sizeof kMagic - 1];
  r.take(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof magic) != 0) r.damaged("not a checkpoint");
  const auto version = r.pod<uint32_t>();
  if (version != kVersion) r.damaged("format version " + std::to_string(version) + ", not " + std::to_string(kVersion));
  return r.pod<uint64_t>();
}

}  // namespace eddy
