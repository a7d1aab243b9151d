#include "eddy/core/ply.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/core/mesh.h"

namespace eddy {

namespace {

struct Column {
  const Points::Attribute* attr;
  int comp;  // component of a vec3, or 0
};

// P, v, then the attributes `names` asks for (Points::chosen).
std::vector<const Points::Attribute*> chosen(const Points& p, const std::vector<std::string>& names) {
  std::vector<const Points::Attribute*> out = {p.find("P"), p.find("v")};
  for (const Points::Attribute* a : p.chosen(names)) out.push_back(a);
  return out;
}

}  // namespace

std::string encode_ply_points(const Points& p, const std::vector<std::string>& names) {
  const auto attrs = chosen(p, names);
  std::ostringstream h;
  h << "ply\nformat binary_little_endian 1.0\ncomment written by eddy\n";
  h << "comment eddy radius " << p.radius << "\n";
  h << "element vertex " << p.size() << "\n";
  std::vector<Column> cols;
  for (const auto* a : attrs) {
    if (a->type == AttribType::Vec3) {
      const char* suffix[3] = {"_x", "_y", "_z"};
      for (int c = 0; c < 3; ++c) {
        std::string name = a->name == "P" ? std::string(1, "xyz"[c])
                           : a->name == "v" ? "v" + std::string(1, "xyz"[c])
                                            : a->name + suffix[c];
        h << "property float " << name << "\n";
        cols.push_back({a, c});
      }
    } else {
      h << "property " << (a->type == AttribType::Int ? "int " : "float ") << a->name << "\n";
      cols.push_back({a, 0});
    }
  }
  h << "end_header\n";
  std::string out = h.str();
  const std::size_t header = out.size();
  out.resize(header + p.size() * cols.size() * 4);
  char* w = out.data() + header;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (const auto& c : cols) {
      const char* base = static_cast<const char*>(p.data(*c.attr));
      std::memcpy(w, base + i * attrib_size(c.attr->type) + 4 * c.comp, 4);  // x86/ARM: little-endian
      w += 4;
    }
  return out;
}

void write_ply_points(const std::string& path, const Points& p, const std::vector<std::string>& names) {
  write_file_atomic(path, encode_ply_points(p, names));
}

namespace {

struct Prop {
  std::string name, type;
  std::size_t size;
};

std::size_t type_size(const std::string& t) {
  if (t == "char" || t == "uchar" || t == "int8" || t == "uint8") return 1;
  if (t == "short" || t == "ushort" || t == "int16" || t == "uint16") return 2;
  if (t == "int" || t == "uint" || t == "float" || t == "int32" || t == "uint32" || t == "float32") return 4;
  if (t == "double" || t == "float64") return 8;
  return 0;
}

double read_scalar(const char* p, const std::string& t) {
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return double(v);
  };
  if (t == "char" || t == "int8") return get(int8_t{});
  if (t == "uchar" || t == "uint8") return get(uint8_t{});
  if (t == "short" || t == "int16") return get(int16_t{});
  if (t == "ushort" || t == "uint16") return get(uint16_t{});
  if (t == "int" || t == "int32") return get(int32_t{});
  if (t == "uint" || t == "uint32") return get(uint32_t{});
  if (t == "float" || t == "float32") return get(float{});
  return get(double{});
}

bool is_int_type(const std::string& t) { return t != "float" && t != "float32" && t != "double" && t != "float64"; }

// Offset of the first byte after "end_header\n"; throws `what` + the reason.
std::size_t ply_body(const std::string& data, const std::string& what) {
  if (data.compare(0, 4, "ply\n") != 0 && data.compare(0, 5, "ply\r\n") != 0) throw Error(what + "missing 'ply' magic");
  const std::size_t end = data.find("end_header");
  if (end == std::string::npos) throw Error(what + "no end_header");
  const std::size_t nl = data.find('\n', end);
  if (nl == std::string::npos) throw Error(what + "truncated header");
  return nl + 1;
}

// A PLY header: its format, Eddy's "comment eddy radius R", and the elements
// in order, each with its properties (size 0: a type this reader does not
// know; list_count_type empty: not a list). Each decoder checks what it
// reads of it.
struct PlyElement {
  std::string name;
  std::size_t count = 0;
  std::vector<Prop> props;
  std::vector<std::string> list_count_type;
};
struct PlyHeader {
  std::string format;
  float radius = 0;
  std::vector<PlyElement> elements;
  bool property_before_element = false;
};

PlyHeader parse_ply_header(const std::string& data) {
  PlyHeader h;
  std::istringstream hs(data.substr(0, data.find("end_header")));
  std::string line;
  while (std::getline(hs, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream ls(line);
    std::string kw;
    ls >> kw;
    if (kw == "format") {
      ls >> h.format;
    } else if (kw == "comment") {
      std::string a, b;
      ls >> a >> b;
      if (a == "eddy" && b == "radius") ls >> h.radius;
    } else if (kw == "element") {
      PlyElement e;
      ls >> e.name >> e.count;
      h.elements.push_back(e);
    } else if (kw == "property") {
      if (h.elements.empty()) {
        h.property_before_element = true;
        continue;
      }
      std::string t, name, ct;
      ls >> t;
      if (t == "list") ls >> ct >> t;
      ls >> name;
      h.elements.back().props.push_back({name, t, type_size(t)});
      h.elements.back().list_count_type.push_back(ct);
    }
  }
  return h;
}

}  // namespace

// Whether a value read for an integer field (an int attribute, a list
// count, a vertex index) is one: a damaged or hostile file can hold NaN, a
// fraction or a value past int32 there (found by fuzz/fuzz_ply).
static bool is_int32(double v) { return v >= -2147483648.0 && v <= 2147483647.0 && v == std::floor(v); }

Points decode_ply_points(const std::string& data, const std::string& src) {
  auto fail = [&](const std::string& m) -> Points { throw Error(src + ": not a readable PLY point cloud: " + m); };
  const std::size_t body = ply_body(data, src + ": not a readable PLY point cloud: ");
  const PlyHeader header = parse_ply_header(data);
  const std::string& format = header.format;
  const float radius = header.radius;
  std::size_t count = 0;
  bool seen_vertex = false;
  std::vector<Prop> props;
  for (const PlyElement& e : header.elements) {
    if (e.name != "vertex") {
      if (!seen_vertex && e.count > 0) return fail("elements before 'vertex' are not supported");
      continue;
    }
    if (seen_vertex) return fail("two vertex elements");
    seen_vertex = true;
    count = e.count;
    for (std::size_t k = 0; k < e.props.size(); ++k) {
      if (!e.list_count_type[k].empty()) return fail("list properties on vertices are not supported");
      if (!e.props[k].size) return fail("unknown property type '" + e.props[k].type + "'");
    }
    props = e.props;
  }
  if (!seen_vertex) return fail("no vertex element");
  if (format != "binary_little_endian" && format != "ascii")
    return fail("format '" + format + "' (binary_little_endian and ascii are read)");
  auto index_of = [&](const std::string& n) -> int {
    for (std::size_t i = 0; i < props.size(); ++i)
      if (props[i].name == n) return int(i);
    return -1;
  };
  if (index_of("x") < 0 || index_of("y") < 0 || index_of("z") < 0) return fail("vertices have no x, y, z");
  std::size_t stride = 0;
  std::vector<std::size_t> offset;
  for (const auto& p : props) {
    offset.push_back(stride);
    stride += p.size;
  }
  // Counts checked against the bytes that follow before anything is
  // allocated (an ASCII value takes at least two bytes, a digit and a space:
  // found by fuzz/fuzz_ply, a header declaring 4e8 vertices over a few bytes).
  const std::size_t per_vertex = format == "binary_little_endian" ? stride : 2 * props.size();
  if (count > (data.size() - body) / std::max<std::size_t>(per_vertex, 1))
    return fail("file is truncated: header declares " + std::to_string(count) + " vertices of at least " +
                std::to_string(per_vertex) + " bytes, " + std::to_string(data.size() - body) + " bytes follow");
  // Map properties to attributes: x y z -> P, vx vy vz -> v, NAME_x/_y/_z -> vec3 NAME, else scalar.
  Points pts(count);
  pts.radius = radius;
  struct Target {
    std::string attr;
    int comp;
    AttribType type;
  };
  std::vector<Target> target(props.size());
  for (std::size_t i = 0; i < props.size(); ++i) {
    const std::string& n = props[i].name;
    if (n == "x" || n == "y" || n == "z") target[i] = {"P", n[0] - 'x', AttribType::Vec3};
    else if (n == "vx" || n == "vy" || n == "vz") target[i] = {"v", n[1] - 'x', AttribType::Vec3};
    else if (n.size() > 2 && n[n.size() - 2] == '_' && (n.back() == 'x' || n.back() == 'y' || n.back() == 'z') &&
             index_of(n.substr(0, n.size() - 1) + "x") >= 0 && index_of(n.substr(0, n.size() - 1) + "y") >= 0 &&
             index_of(n.substr(0, n.size() - 1) + "z") >= 0)
      target[i] = {n.substr(0, n.size() - 2), n.back() - 'x', AttribType::Vec3};
    else target[i] = {n, 0, is_int_type(props[i].type) ? AttribType::Int : AttribType::Float};
    pts.add(target[i].attr, target[i].type);
  }
  std::vector<void*> dst(props.size());
  for (std::size_t i = 0; i < props.size(); ++i) dst[i] = pts.data(*pts.find(target[i].attr));
  auto put = [&](std::size_t v, std::size_t i, double value) {
    const Target& t = target[i];
    if (t.type == AttribType::Vec3) reinterpret_cast<float*>(static_cast<Vec3f*>(dst[i]) + v)[t.comp] = float(value);
    else if (t.type == AttribType::Int) {
      if (!is_int32(value))
        fail("vertex " + std::to_string(v) + " property '" + props[i].name + "' is not a 32-bit integer");
      static_cast<int32_t*>(dst[i])[v] = int32_t(value);
    }
    else static_cast<float*>(dst[i])[v] = float(value);
  };
  if (format == "binary_little_endian") {
    const char* b = data.data() + body;
    for (std::size_t v = 0; v < count; ++v)
      for (std::size_t i = 0; i < props.size(); ++i) put(v, i, read_scalar(b + v * stride + offset[i], props[i].type));
  } else {
    std::istringstream bs(data.substr(body));
    for (std::size_t v = 0; v < count; ++v)
      for (std::size_t i = 0; i < props.size(); ++i) {
        double value;
        if (!(bs >> value)) return fail("vertex " + std::to_string(v) + " is incomplete or not a number");
        put(v, i, value);
      }
  }
  return pts;
}

Points read_ply_points(const std::string& path) { return decode_ply_points(read_file(path, "PLY file"), path); }

// ---------------------------------------------------------------------------
// PLY meshes

std::string encode_ply_mesh(const Mesh& m) {
  const bool normals = !m.normals.empty() && m.normals.size() == m.points.size();
  const bool velocities = !m.velocities.empty() && m.velocities.size() == m.points.size();
  std::ostringstream h;
  h << "ply\nformat binary_little_endian 1.0\ncomment written by eddy\n";
  h << "element vertex " << m.points.size() << "\nproperty float x\nproperty float y\nproperty float z\n";
  if (normals) h << "property float nx\nproperty float ny\nproperty float nz\n";
  if (velocities) h << "property float vx\nproperty float vy\nproperty float vz\n";
  h << "element face " << m.face_count() << "\nproperty list uchar int vertex_indices\nend_header\n";
  std::string out = h.str();
  const std::size_t header = out.size();
  const std::size_t vertex_bytes = 12 * (1 + std::size_t(normals) + std::size_t(velocities));
  out.resize(header + m.points.size() * vertex_bytes + m.triangles.size() * 13 + m.quads.size() * 17);
  char* w = out.data() + header;
  for (std::size_t i = 0; i < m.points.size(); ++i) {
    std::memcpy(w, &m.points[i], 12);
    w += 12;
    if (normals) {
      std::memcpy(w, &m.normals[i], 12);
      w += 12;
    }
    if (velocities) {
      std::memcpy(w, &m.velocities[i], 12);
      w += 12;
    }
  }
  for (const auto& t : m.triangles) {
    *w++ = 3;
    std::memcpy(w, t.data(), 12);
    w += 12;
  }
  for (const auto& q : m.quads) {
    *w++ = 4;
    std::memcpy(w, q.data(), 16);
    w += 16;
  }
  return out;
}

Mesh decode_ply_mesh(const std::string& data, const std::string& src) {
  auto fail = [&](const std::string& msg) -> Mesh { throw Error(src + ": not a readable PLY mesh: " + msg); };
  const std::size_t body = ply_body(data, src + ": not a readable PLY mesh: ");
  const PlyHeader header = parse_ply_header(data);
  const std::string& format = header.format;
  const std::vector<PlyElement>& elems = header.elements;
  if (header.property_before_element) return fail("a property before any element");
  for (const PlyElement& e : elems)
    for (std::size_t k = 0; k < e.props.size(); ++k) {
      const std::string& ct = e.list_count_type[k];
      if (!ct.empty() && !type_size(ct)) return fail("unknown list count type '" + ct + "'");
      if (!e.props[k].size) return fail("unknown property type '" + e.props[k].type + "'");
    }
  if (format != "binary_little_endian" && format != "ascii")
    return fail("format '" + format + "' (binary_little_endian and ascii are read)");
  const bool binary = format == "binary_little_endian";
  Mesh m;
  std::size_t at = body;
  std::istringstream as(binary ? std::string() : data.substr(body));
  auto scalar = [&](const std::string& type, const std::string& where) -> double {
    if (binary) {
      const std::size_t sz = type_size(type);
      if (at + sz > data.size()) fail("file is truncated in " + where);
      const double v = read_scalar(data.data() + at, type);
      at += sz;
      return v;
    }
    double v;
    if (!(as >> v)) fail(where + " is incomplete or not a number");
    return v;
  };
  bool seen_vertex = false;
  for (const PlyElement& e : elems) {
    const bool is_vertex = e.name == "vertex", is_face = e.name == "face";
    int ix = -1, iy = -1, iz = -1, inx = -1, iny = -1, inz = -1, ivx = -1, ivy = -1, ivz = -1, iface = -1;
    for (std::size_t k = 0; k < e.props.size(); ++k) {
      const std::string& n = e.props[k].name;
      const int kk = int(k);
      if (n == "x") ix = kk;
      else if (n == "y") iy = kk;
      else if (n == "z") iz = kk;
      else if (n == "nx") inx = kk;
      else if (n == "ny") iny = kk;
      else if (n == "nz") inz = kk;
      else if (n == "vx") ivx = kk;
      else if (n == "vy") ivy = kk;
      else if (n == "vz") ivz = kk;
      else if ((n == "vertex_indices" || n == "vertex_index") && !e.list_count_type[k].empty()) iface = kk;
    }
    // Each item takes at least one byte (binary) or two (ASCII: a digit and a
    // space), checked before anything is allocated.
    if (e.count > (data.size() - body) / (binary ? 1 : 2))
      return fail("file is truncated: element '" + e.name + "' declares " + std::to_string(e.count) +
                  " items, more than the " + std::to_string(data.size() - body) + " bytes that follow hold");
    if (is_vertex) {
      if (ix < 0 || iy < 0 || iz < 0) return fail("vertices have no x, y, z");
      // A second vertex element would index the first one's arrays with its own layout.
      if (seen_vertex) return fail("more than one vertex element");
      seen_vertex = true;
      m.points.resize(e.count);
      if (inx >= 0 && iny >= 0 && inz >= 0) m.normals.resize(e.count);
      if (ivx >= 0 && ivy >= 0 && ivz >= 0) m.velocities.resize(e.count);
    }
    if (is_face && iface < 0) return fail("faces have no vertex_indices list");
    std::vector<double> vals(e.props.size());
    std::vector<int32_t> idx;
    for (std::size_t i = 0; i < e.count; ++i) {
      const std::string where = e.name + " " + std::to_string(i);
      for (std::size_t k = 0; k < e.props.size(); ++k) {
        if (e.list_count_type[k].empty()) {
          vals[k] = scalar(e.props[k].type, where);
          continue;
        }
        const double cnt = scalar(e.list_count_type[k], where);
        if (!is_int32(cnt) || cnt < 0 || cnt > 1e6) return fail(where + " has a list of " + std::to_string(cnt) + " items");
        idx.clear();
        for (int c = 0; c < int(cnt); ++c) {
          const double index = scalar(e.props[k].type, where);
          if (!is_int32(index)) return fail(where + " has an index that is not a 32-bit integer");
          idx.push_back(int32_t(index));
        }
        if (int(k) == iface && is_face) {
          if (idx.size() < 3) return fail(where + " has fewer than three vertices");
          if (idx.size() == 3) m.triangles.push_back({idx[0], idx[1], idx[2]});
          else if (idx.size() == 4) m.quads.push_back({idx[0], idx[1], idx[2], idx[3]});
          else
            for (std::size_t c = 1; c + 1 < idx.size(); ++c) m.triangles.push_back({idx[0], idx[c], idx[c + 1]});
        }
      }
      if (is_vertex) {
        m.points[i] = vec3(float(vals[std::size_t(ix)]), float(vals[std::size_t(iy)]), float(vals[std::size_t(iz)]));
        if (!m.normals.empty())
          m.normals[i] =
              vec3(float(vals[std::size_t(inx)]), float(vals[std::size_t(iny)]), float(vals[std::size_t(inz)]));
        if (!m.velocities.empty())
          m.velocities[i] =
              vec3(float(vals[std::size_t(ivx)]), float(vals[std::size_t(ivy)]), float(vals[std::size_t(ivz)]));
      }
    }
  }
  if (!seen_vertex) return fail("no vertex element");
  return m;
}

}  // namespace eddy
