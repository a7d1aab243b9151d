// Node types written in Python (Houdini's Python SOP): a spec built from the
// decorator's description and a Node whose cook() takes the GIL and calls the
// Python function with the node's inputs as Python values and its
// parameters at the frame (animated ones evaluated).
#include <pybind11/stl.h>

#include <set>

#include "bindings.h"
#include "eddy/core/error.h"
#include "eddy/graph/node.h"

namespace eddy::python {

namespace {

// A Python callable owned by C++ code that may drop it without the GIL.
class PyRef {
 public:
  explicit PyRef(py::object o) : o_(o.release().ptr()) {}
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  ~PyRef() {
    if (!Py_IsInitialized()) return;  // the interpreter has gone: nothing left to release
    py::gil_scoped_acquire gil;
    Py_XDECREF(o_);
  }
  py::handle get() const { return o_; }

 private:
  PyObject* o_;
};

// What the cook function sees besides its inputs and parameters. The
// CookContext lives for one cook: a context kept past it refuses to be used.
struct PyCookContext {
  std::shared_ptr<CookContext*> cell;
  std::string node;
  CookContext& get() const {
    if (!*cell) throw Error("the CookContext of node '" + node + "' was used after its cook returned");
    return **cell;
  }
};

py::object param_value(const CookContext& ctx, const ParamSpec& p) {
  switch (p.type) {
    case ParamType::Bool: return py::bool_(ctx.param_bool(p.name));
    case ParamType::Int: return py::int_(ctx.param_int(p.name));
    case ParamType::Float: return py::float_(ctx.param_float(p.name));
    case ParamType::Vec3: {
      const Vec3Value v = ctx.param_vec3(p.name);
      return py::make_tuple(v[0], v[1], v[2]);
    }
    case ParamType::String:
    case ParamType::Path:
    case ParamType::Enum: return py::str(ctx.param_string(p.name));
  }
  return py::none();
}

// A Python node type's function, replaced when the type is defined again
// (a module reloaded): node instances already made call the new one.
struct PyFunction {
  std::shared_ptr<PyRef> fn;
  py::handle operator()() const { return fn->get(); }
};

class PythonNode final : public Node {
 public:
  explicit PythonNode(std::shared_ptr<PyFunction> fn) : fn_(std::move(fn)) {}

  void cook(CookContext& ctx) override {
    const NodeSpec& spec = ctx.spec();
    // Inputs are pulled before the GIL is taken: an upstream node may be
    // another Python node, cooked while this thread waits.
    std::map<std::string, std::vector<Value>> inputs;
    const Points* template_points = nullptr;
    for (const auto& s : spec.inputs)
      for (std::size_t i = 0; i < ctx.input_count(s.name); ++i) {
        inputs[s.name].push_back(ctx.input_value(s.name, i));
        if (!template_points && s.type == ValueTraits<Points>::name())
          template_points = inputs[s.name].back().as<Points>().get();
      }
    ctx.check_cancel();

    py::gil_scoped_acquire gil;
    try {
      py::dict kwargs;
      for (const auto& s : spec.inputs) {
        const auto& vs = inputs[s.name];
        if (s.multi) {
          py::list l;
          for (const auto& v : vs) l.append(to_python(v));
          kwargs[s.name.c_str()] = l;
        } else {
          kwargs[s.name.c_str()] = vs.empty() ? py::none() : to_python(vs[0]);
        }
      }
      for (const auto& p : spec.params) kwargs[p.name.c_str()] = param_value(ctx, p);
      PyCookContext pc{std::make_shared<CookContext*>(&ctx), ctx.node_id()};
      struct Expire {
        std::shared_ptr<CookContext*> cell;
        ~Expire() { *cell = nullptr; }
      } expire{pc.cell};
      py::object result = (*fn_)()(pc, **kwargs);
      set_outputs(ctx, result, template_points);
    } catch (py::error_already_set& e) {
      if (is_cancelled(e)) throw Cancelled();  // ctx.check_cancel(), or the function's own
      // The engine adds the node and the frame; the message is the exception's, without the traceback.
      throw Error("Python " + std::string(py::str(e.type().attr("__name__"))) + ": " + std::string(py::str(e.value())));
    }
  }

 private:
  static void set_outputs(CookContext& ctx, const py::object& result, const Points* template_points) {
    const auto& outs = ctx.spec().outputs;
    const std::string where = "the cook function";
    py::dict by_socket;
    // One output: the value itself, or {"name": value}. Several: a dict by socket name.
    if (outs.size() == 1 && !(py::isinstance<py::dict>(result) && py::len(result) == 1 &&
                              result.cast<py::dict>().contains(outs[0].name))) {
      by_socket[outs[0].name.c_str()] = result;
    } else {
      if (!py::isinstance<py::dict>(result))
        throw Error(where + " returned " + std::string(py::str(py::type::of(result).attr("__name__"))) +
                    "; a node with several outputs returns a dict by output name");
      by_socket = result.cast<py::dict>();
    }
    for (const auto& [k, v] : by_socket) {
      const std::string name = py::str(k);
      if (!ctx.spec().find_output(name))
        throw Error(where + " returned output '" + name + "', which the node does not declare");
    }
    for (const auto& s : outs) {
      if (!by_socket.contains(s.name)) throw Error(where + " returned no value for output '" + s.name + "'");
      ctx.set_output(s.name, from_python(by_socket[s.name.c_str()], s.type, "output '" + s.name + "'", template_points));
    }
  }
  std::shared_ptr<PyFunction> fn_;
};

// The functions of the Python node types, by type (touched with the GIL held).
std::map<std::string, std::shared_ptr<PyFunction>>& python_types() {
  static auto* m = new std::map<std::string, std::shared_ptr<PyFunction>>();  // never freed: see registry()
  return *m;
}

// The value types sockets may have: those of the registered node types.
std::set<std::string> socket_types() {
  std::set<std::string> t;
  for (const NodeSpec* s : registry().all()) {
    for (const auto& x : s->inputs) t.insert(x.type);
    for (const auto& x : s->outputs) t.insert(x.type);
  }
  return t;
}

std::optional<double> optional_number(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return std::nullopt;
  return d[key].cast<double>();
}
std::string text(const py::dict& d, const char* key) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<std::string>() : std::string();
}

}  // namespace

void bind_python_nodes(py::module_& m) {
  py::class_<PyCookContext>(m, "CookContext", "What a Python node's cook function sees besides its inputs.")
      .def_property_readonly("frame", [](const PyCookContext& c) { return c.get().frame(); })
      .def_property_readonly("time", [](const PyCookContext& c) { return c.get().time(); },
                             "Seconds since the graph's start frame.")
      .def_property_readonly("fps", [](const PyCookContext& c) { return c.get().fps(); })
      .def_property_readonly("start_frame", [](const PyCookContext& c) { return c.get().start_frame(); })
      .def_property_readonly("end_frame", [](const PyCookContext& c) { return c.get().end_frame(); })
      .def_property_readonly("node_id", [](const PyCookContext& c) { return c.node; })
      .def("info", [](const PyCookContext& c, const std::string& s) { c.get().info(s); },
           "A line of the node's report for this frame.")
      .def("warn", [](const PyCookContext& c, const std::string& s) { c.get().warn(s); })
      .def("check_cancel", [](const PyCookContext& c) { c.get().check_cancel(); },
           "Raises eddy.Cancelled when the cook has been cancelled.");

  // _register_node(spec, fn): spec is the dict the decorator builds:
  // type, category, doc, time_dependent, inputs/outputs [{name, type, doc,
  // optional, multi}], params [{name, type, default, min, max, unit, doc, items}].
  m.def("_register_node", [](const py::dict& d, const py::function& fn) {
    NodeSpec spec(d["type"].cast<std::string>(), text(d, "category"), text(d, "doc"));
    const std::string w = "eddy.node(\"" + spec.type + "\")";
    if (registry().find(spec.type) && !python_types().count(spec.type))
      throw Error(w + ": node type '" + spec.type + "' exists already (registered by " +
                  registry().origin(spec.type) + ")");
    spec.time_dependent = d["time_dependent"].cast<bool>();
    for (const auto& s : d["inputs"].cast<py::list>()) {
      const auto sd = s.cast<py::dict>();
      spec.input(sd["name"].cast<std::string>(), sd["type"].cast<std::string>(), text(sd, "doc"),
                 sd["optional"].cast<bool>(), sd["multi"].cast<bool>());
    }
    for (const auto& s : d["outputs"].cast<py::list>()) {
      const auto sd = s.cast<py::dict>();
      spec.output(sd["name"].cast<std::string>(), sd["type"].cast<std::string>(), text(sd, "doc"));
    }
    for (const auto& p : d["params"].cast<py::list>()) {
      const auto pd = p.cast<py::dict>();
      const std::string name = pd["name"].cast<std::string>(), type = pd["type"].cast<std::string>();
      const auto lo = optional_number(pd, "min"), hi = optional_number(pd, "max");
      const std::string unit = text(pd, "unit"), doc = text(pd, "doc");
      const py::object def = pd["default"];
      if (type == "bool") spec.param_bool(name, def.cast<bool>(), doc);
      else if (type == "int") spec.param_int(name, def.cast<int64_t>(), lo, hi, unit, doc);
      else if (type == "float") spec.param_float(name, def.cast<double>(), lo, hi, unit, doc);
      else if (type == "vec3") spec.param_vec3(name, def.cast<Vec3Value>(), lo, hi, unit, doc);
      else if (type == "string") spec.param_string(name, def.cast<std::string>(), doc);
      else if (type == "path") spec.param_path(name, def.cast<std::string>(), doc);
      else if (type == "enum")
        spec.param_enum(name, pd["items"].cast<std::vector<std::string>>(), def.cast<std::string>(), doc);
      else throw Error("parameter '" + name + "': unknown type '" + type + "'");
    }
    // The function's arguments: ctx, then inputs and parameters by name.
    const std::set<std::string> types = socket_types();
    std::set<std::string> names{"ctx"};
    auto take = [&](const std::string& name, const char* what) {
      if (!names.insert(name).second)
        throw Error(w + ": " + what + " '" + name + "' is named like the context or another input or parameter " +
                    "(the function takes them all by name)");
    };
    for (const auto& s : spec.inputs) take(s.name, "input");
    for (const auto& p : spec.params) take(p.name, "parameter");
    for (const auto* list : {&spec.inputs, &spec.outputs})
      for (const auto& s : *list)
        if (!types.count(s.type)) {
          std::string known;
          for (const auto& t : types) known += (known.empty() ? "" : ", ") + t;
          throw Error(w + ": socket '" + s.name + "' has the unknown type '" + s.type + "' (types: " + known + ")");
        }
    auto& fns = python_types();
    auto cell = fns.count(spec.type) ? fns[spec.type] : std::make_shared<PyFunction>();
    spec.factory = [cell] { return std::unique_ptr<Node>(new PythonNode(cell)); };
    try {
      registry().replace(std::move(spec));
    } catch (const Error& e) {
      throw Error(w + ": " + e.what());
    }
    cell->fn = std::make_shared<PyRef>(fn);
    fns[d["type"].cast<std::string>()] = cell;
  });
}

}  // namespace eddy::python
