// Values as Python objects. Arrays handed to Python view the cooked value's
// own memory: the array's base is a capsule holding a reference to the
// value, so the memory lives as long as any array over it, and the arrays are
// read-only because cooked values are shared and immutable (copy to change).
#include <pybind11/stl.h>

#include <cstring>
#include <set>
#include <limits>

#include "bindings.h"
#include "eddy/core/error.h"
#include "eddy/surfacing/surfacing.h"

namespace eddy::python {

static_assert(sizeof(Vec3f) == 3 * sizeof(float), "Vec3f must be three packed floats to be viewed as (N, 3)");

namespace {

// A read-only array over `data` that keeps `owner` alive.
template <class Scalar>
py::array view(std::shared_ptr<const void> owner, const Scalar* data, std::vector<py::ssize_t> shape) {
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = sizeof(Scalar);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  if (!data) {  // empty: nothing to view
    py::array a(py::dtype::of<Scalar>(), shape, strides);
    a.attr("setflags")(py::arg("write") = false);
    return a;
  }
  auto* keep = new std::shared_ptr<const void>(std::move(owner));
  py::capsule base(keep, "eddy.value", [](PyObject* c) {
    delete static_cast<std::shared_ptr<const void>*>(PyCapsule_GetPointer(c, "eddy.value"));
  });
  py::array a(py::dtype::of<Scalar>(), shape, strides, data, base);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

py::array vec3_view(std::shared_ptr<const void> owner, const std::vector<Vec3f>& v) {
  return view<float>(std::move(owner), v.empty() ? nullptr : &v[0].x, {py::ssize_t(v.size()), 3});
}
template <std::size_t K>
py::array index_view(std::shared_ptr<const void> owner, const std::vector<std::array<int32_t, K>>& v) {
  return view<int32_t>(std::move(owner), v.empty() ? nullptr : v[0].data(), {py::ssize_t(v.size()), py::ssize_t(K)});
}

const void* attribute_address(const Points& p, const Points::Attribute& a) { return p.data(a); }

std::vector<std::string> attribute_names(const PyPoints& p) {
  std::vector<std::string> names;
  for (const auto& a : p.points->attributes()) names.push_back(a.name);
  return names;
}

py::array attribute_view(const std::shared_ptr<const Points>& p, const std::string& name) {
  const Points::Attribute* a = p->find(name);
  if (!a) {
    std::string names;
    for (const auto& x : p->attributes()) names += (names.empty() ? "" : ", ") + x.name;
    throw py::key_error("no attribute '" + name + "' (the points have " + (names.empty() ? "none" : names) + ")");
  }
  const py::ssize_t n = py::ssize_t(p->size());
  const void* d = p->size() ? attribute_address(*p, *a) : nullptr;
  switch (a->type) {
    case AttribType::Float: return view<float>(p, static_cast<const float*>(d), {n});
    case AttribType::Int: return view<int32_t>(p, static_cast<const int32_t*>(d), {n});
    case AttribType::Vec3: return view<float>(p, static_cast<const float*>(d), {n, 3});
  }
  throw Error("unknown attribute type");
}

bool is_integer_dtype(const py::array& a) {
  const char k = a.dtype().kind();
  return k == 'i' || k == 'u' || k == 'b';
}

// A numpy array of `o` as Scalar with the expected number of columns
// (0: a one-dimensional array).
template <class Scalar>
py::array_t<Scalar, py::array::c_style | py::array::forcecast> as_array(const py::handle& o, int columns,
                                                                       const std::string& where) {
  py::array a = py::array::ensure(o);
  if (!a) {
    PyErr_Clear();
    throw Error(where + ": expected an array, got " + std::string(py::str(py::type::of(o).attr("__name__"))) +
                " (a ragged list, or no numbers?)");
  }
  if constexpr (std::is_integral_v<Scalar>) {
    if (!is_integer_dtype(a) && a.size() > 0)
      throw Error(where + ": expected integers, got an array of " + std::string(py::str(a.dtype())));
  }
  const bool ok = columns == 0 ? a.ndim() == 1 : (a.ndim() == 2 && a.shape(1) == columns);
  if (!ok) {
    std::string shape = "(";
    for (py::ssize_t i = 0; i < a.ndim(); ++i) shape += (i ? ", " : "") + std::to_string(a.shape(i));
    shape += a.ndim() == 1 ? ",)" : ")";
    throw Error(where + ": expected shape " + (columns == 0 ? "(N,)" : "(N, " + std::to_string(columns) + ")") +
                ", got " + shape);
  }
  return py::array_t<Scalar, py::array::c_style | py::array::forcecast>::ensure(a);
}

std::vector<Vec3f> vec3_list(const py::handle& o, const std::string& where) {
  auto a = as_array<float>(o, 3, where);
  std::vector<Vec3f> v(std::size_t(a.shape(0)));
  if (!v.empty()) std::memcpy(v.data(), a.data(), v.size() * sizeof(Vec3f));
  return v;
}

}  // namespace

// Attribute `name` of `pts` from the array `a`: (N, 3) a vector, integer or
// bool (N,) an int, other (N,) a float.
void add_attribute(Points& pts, const std::string& name, const py::array& a, const std::string& w) {
  const std::size_t n = pts.size();
  if (a.ndim() < 1 || std::size_t(a.shape(0)) != n)
    throw Error(w + ": has " + (a.ndim() ? std::to_string(a.shape(0)) : std::string("no")) + " rows, \"P\" has " +
                std::to_string(n));
  if (a.ndim() == 2) {
    const auto v = vec3_list(a, w);
    pts.add(name, AttribType::Vec3);
    std::copy(v.begin(), v.end(), pts.get_vec3(name));
  } else if (is_integer_dtype(a)) {
    auto t = as_array<int64_t>(a, 0, w);
    pts.add(name, AttribType::Int);
    int32_t* d = pts.get_int(name);
    for (std::size_t i = 0; i < n; ++i) {
      const int64_t x = t.data()[i];
      if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max())
        throw Error(w + "[" + std::to_string(i) + "]: " + std::to_string(x) + " does not fit a 32-bit int");
      d[i] = int32_t(x);
    }
  } else {
    auto t = as_array<float>(a, 0, w);
    pts.add(name, AttribType::Float);
    std::copy(t.data(), t.data() + n, pts.get_float(name));
  }
}

// A mapping of numpy arrays as particles: (N, 3) arrays are vectors, (N,)
// integer or bool arrays ints, other (N,) arrays floats. "P" is required.
Points points_from_mapping(const py::handle& mapping, float radius, const std::string& where) {
  if (!py::isinstance<py::dict>(mapping) && !py::hasattr(mapping, "items"))
    throw Error(where + ": expected eddy.Points or a mapping of attribute arrays, got " +
                std::string(py::str(py::type::of(mapping).attr("__name__"))));
  std::vector<std::pair<std::string, py::object>> items;
  for (const auto& item : mapping.attr("items")()) {
    const auto kv = item.cast<py::tuple>();
    items.emplace_back(py::str(kv[0]).cast<std::string>(), kv[1].cast<py::object>());
  }
  auto has_p = std::find_if(items.begin(), items.end(), [](const auto& kv) { return kv.first == "P"; });
  if (has_p == items.end()) throw Error(where + ": no \"P\" array (positions, (N, 3))");
  const std::size_t n = std::size_t(as_array<float>(has_p->second, 3, where + "[\"P\"]").shape(0));
  Points pts(n);
  pts.radius = radius;
  for (const auto& [name, value] : items) {
    const std::string w = where + "[\"" + name + "\"]";
    py::array a = py::array::ensure(value);
    if (!a) {
      PyErr_Clear();
      throw Error(w + ": expected an array (a ragged list, or no numbers?)");
    }
    try {
      add_attribute(pts, name, a, w);
    } catch (const Error& e) {
      const std::string m = e.what();
      throw Error(m.rfind(w, 0) == 0 ? m : w + ": " + m);  // Points::add's messages name no place
    }
  }
  return pts;
}

Mesh mesh_from_mapping(const py::handle& mapping, const std::string& where) {
  if (!py::hasattr(mapping, "items") || !py::hasattr(mapping, "get"))
    throw Error(where + ": expected eddy.Mesh or a mapping with \"vertices\" and \"faces\", got " +
                std::string(py::str(py::type::of(mapping).attr("__name__"))));
  auto get = [&](const char* key) { return mapping.attr("get")(key); };
  static const std::set<std::string> keys{"vertices", "faces", "quads", "normals", "velocities"};
  for (const auto& k : mapping.attr("keys")())
    if (!keys.count(py::str(k).cast<std::string>()))
      throw Error(where + ": unknown key \"" + py::str(k).cast<std::string>() +
                  "\" (a mesh has vertices, faces, quads, normals, velocities)");
  Mesh m;
  if (get("vertices").is_none()) throw Error(where + ": no \"vertices\" array ((N, 3))");
  m.points = vec3_list(get("vertices"), where + "[\"vertices\"]");
  auto indices = [&](const char* key, auto& out, int k) {
    const py::object o = get(key);
    if (o.is_none()) return;
    auto a = as_array<int64_t>(o, k, where + "[\"" + key + "\"]");
    out.resize(std::size_t(a.shape(0)));
    for (std::size_t f = 0; f < out.size(); ++f)
      for (int c = 0; c < k; ++c) {
        const int64_t i = a.data()[f * std::size_t(k) + std::size_t(c)];
        if (i < 0 || i >= int64_t(m.points.size()))
          throw Error(where + "[\"" + key + "\"][" + std::to_string(f) + "]: vertex index " + std::to_string(i) +
                      " is outside 0.." + std::to_string(int64_t(m.points.size()) - 1));
        out[f][std::size_t(c)] = int32_t(i);
      }
  };
  indices("faces", m.triangles, 3);
  indices("quads", m.quads, 4);
  for (const auto& [key, dst] : {std::pair<const char*, std::vector<Vec3f>*>{"normals", &m.normals},
                                 {"velocities", &m.velocities}}) {
    const py::object o = get(key);
    if (o.is_none()) continue;
    *dst = vec3_list(o, where + "[\"" + key + "\"]");
    if (!dst->empty() && dst->size() != m.points.size())
      throw Error(where + "[\"" + key + "\"]: has " + std::to_string(dst->size()) + " rows, \"vertices\" has " +
                  std::to_string(m.points.size()));
  }
  return m;
}

py::object to_python(const Value& v) {
  if (v.empty()) return py::none();
  if (v.type() == ValueTraits<Points>::name()) return py::cast(PyPoints{v.as<Points>()});
  if (v.type() == ValueTraits<Mesh>::name()) return py::cast(PyMesh{v.as<Mesh>()});
  if (v.type() == ValueTraits<Volumes>::name()) return py::cast(PyVolumes{v.as<Volumes>()});
  return py::cast(PyValue{v});
}

Value from_python(const py::handle& o, const std::string& type, const std::string& where,
                  const Points* template_points) {
  if (py::isinstance<PyValue>(o)) {
    const Value& v = o.cast<const PyValue&>().value;
    if (v.type() != type) throw Error(where + ": expected a value of type '" + type + "', got '" + v.type() + "'");
    return v;
  }
  if (type == ValueTraits<Points>::name()) {
    if (py::isinstance<PyPoints>(o)) return Value::of<Points>(o.cast<const PyPoints&>().points);
    return Value::make(points_from_mapping(o, template_points ? template_points->radius : 0.0f, where));
  }
  if (type == ValueTraits<Mesh>::name()) {
    if (py::isinstance<PyMesh>(o)) return Value::of<Mesh>(o.cast<const PyMesh&>().mesh);
    return Value::make(mesh_from_mapping(o, where));
  }
  if (type == ValueTraits<Volumes>::name()) {
    if (py::isinstance<PyVolumes>(o)) return Value::of<Volumes>(o.cast<const PyVolumes&>().volumes);
    throw Error(where + ": expected eddy.Volumes (e.g. from eddy.read_vdb), got " +
                std::string(py::str(py::type::of(o).attr("__name__"))));
  }
  throw Error(where + ": a Python node can pass on a '" + type + "' value it was given, not make one (got " +
              std::string(py::str(py::type::of(o).attr("__name__"))) + ")");
}

void bind_values(py::module_& m) {
  py::class_<PyPoints>(m, "Points", R"(Particles: a mapping from attribute name to a numpy array.

Arrays of cooked points view Eddy's own memory (no copy) and are read-only:
(N, 3) float32 for vectors ("P", "v"), (N,) float32 or int32 for scalars.
Points(arrays, radius=0.0) builds points from a mapping of arrays ("P" required).)")
      .def(py::init([](const py::object& arrays, float radius) {
             return PyPoints{std::make_shared<const Points>(points_from_mapping(arrays, radius, "eddy.Points"))};
           }),
           py::arg("arrays"), py::arg("radius") = 0.0f)
      .def("__len__", [](const PyPoints& p) { return p.points->size(); })
      .def("attributes", &attribute_names, "The attribute names, in storage order.")
      .def("keys", &attribute_names)
      .def("attribute_type",
           [](const PyPoints& p, const std::string& name) {
             const auto* a = p.points->find(name);
             if (!a) throw py::key_error("no attribute '" + name + "'");
             return std::string(to_string(a->type));
           },
           "\"float\", \"int\" or \"vec3\".")
      .def("__getitem__", [](const PyPoints& p, const std::string& name) { return attribute_view(p.points, name); })
      .def("__contains__", [](const PyPoints& p, const std::string& name) { return p.points->has(name); })
      .def("address",
           [](const PyPoints& p, const std::string& name) {
             const auto* a = p.points->find(name);
             if (!a) throw py::key_error("no attribute '" + name + "'");
             return reinterpret_cast<std::uintptr_t>(p.points->data(*a));
           },
           "The address of an attribute's storage in Eddy's memory (what its array views).")
      .def_property_readonly("radius", [](const PyPoints& p) { return p.points->radius; },
                             "Particle radius (m).")
      .def("__repr__", [](const PyPoints& p) {
        std::string names;
        for (const auto& a : p.points->attributes()) names += (names.empty() ? "" : ", ") + a.name;
        return "<eddy.Points " + std::to_string(p.points->size()) + " points: " + names + ">";
      });

  py::class_<PyMesh>(m, "Mesh", R"(A mesh: vertices (N, 3) float32, faces (M, 3) int32 (triangles),
quads (K, 4) int32, normals and velocities (N, 3) float32 or empty; read-only
views of Eddy's memory. Mesh(vertices=, faces=, quads=, normals=, velocities=) builds one.)")
      .def(py::init([](const py::kwargs& kw) {
        return PyMesh{std::make_shared<const Mesh>(mesh_from_mapping(kw, "eddy.Mesh"))};
      }))
      .def_property_readonly("vertices", [](const PyMesh& m) { return vec3_view(m.mesh, m.mesh->points); })
      .def_property_readonly("faces", [](const PyMesh& m) { return index_view(m.mesh, m.mesh->triangles); })
      .def_property_readonly("quads", [](const PyMesh& m) { return index_view(m.mesh, m.mesh->quads); })
      .def_property_readonly("normals", [](const PyMesh& m) { return vec3_view(m.mesh, m.mesh->normals); })
      .def_property_readonly("velocities", [](const PyMesh& m) { return vec3_view(m.mesh, m.mesh->velocities); })
      .def("save", [](const PyMesh& m, const std::string& path) { write_mesh(path, *m.mesh); },
           "Writes .obj or .ply (by the extension), atomically.", py::call_guard<py::gil_scoped_release>())
      .def("__repr__", [](const PyMesh& m) {
        return "<eddy.Mesh " + std::to_string(m.mesh->points.size()) + " vertices, " +
               std::to_string(m.mesh->face_count()) + " faces>";
      });
  m.def("read_mesh", [](const std::string& path) { return PyMesh{std::make_shared<const Mesh>(read_mesh(path))}; },
        "Reads an .obj or .ply mesh.", py::call_guard<py::gil_scoped_release>());

  py::class_<PyVolumes>(m, "Volumes", "OpenVDB grids (a surface SDF, a velocity grid, a point data grid).")
      .def("__len__", [](const PyVolumes& v) { return v.volumes->grids.size(); })
      .def("grids",
           [](const PyVolumes& v) {
             py::list out;
             for (const auto& g : v.volumes->grids) {
               py::dict d;
               d["name"] = g.name();
               d["class"] = to_string(g.grid_class());
               d["value_type"] = g.value_type();
               d["voxel_size"] = g.voxel_size();
               d["active_voxels"] = g.active_voxels();
               if (g.grid_class() == GridClass::Points) d["points"] = g.point_count();
               out.append(d);
             }
             return out;
           },
           "One dict per grid: name, class, value_type, voxel_size, active_voxels (points for point grids).")
      .def("save", [](const PyVolumes& v, const std::string& path) { write_vdb(path, *v.volumes); },
           "Writes every grid to one .vdb file, atomically.", py::call_guard<py::gil_scoped_release>())
      .def("__repr__", [](const PyVolumes& v) {
        std::string names;
        for (const auto& g : v.volumes->grids) names += (names.empty() ? "" : ", ") + g.name();
        return "<eddy.Volumes " + names + ">";
      });
  m.def("read_vdb", [](const std::string& path) { return PyVolumes{std::make_shared<const Volumes>(read_vdb(path))}; },
        "Reads every grid of a .vdb file.", py::call_guard<py::gil_scoped_release>());

  py::class_<PyValue>(m, "Value", "A node output Python passes along as is (colliders, sources, bodies, ...).")
      .def_property_readonly("type", [](const PyValue& v) { return v.value.type(); })
      .def("__repr__", [](const PyValue& v) { return "<eddy.Value of type '" + v.value.type() + "'>"; });
}

}  // namespace eddy::python
