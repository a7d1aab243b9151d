// eddy._eddy: the registry, graphs (build, load, validate, save, cook) and
// the exceptions. The GIL is released while a graph cooks; progress
// callbacks take it back, and a callback returning False (or raising)
// cancels the cook.
#include <cxxabi.h>
#include <dlfcn.h>
#include <pybind11/stl.h>

#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <tuple>

#include "bindings.h"
#include "eddy/core/error.h"
#include "eddy/graph/asset.h"
#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"

namespace eddy::python {

namespace fs = std::filesystem;

Registry& registry() {
  // Never destroyed: Python nodes' callables live in it, and the interpreter
  // may be gone by the time static destructors run.
  static Registry* r = [] {
    auto* reg = new Registry();
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&registry), &info) && info.dli_fname) {
      // The module is <build>/python/eddy/_eddy*.so; the plug-ins are in
      // <build>/plugins, which load_default_plugins finds at ../plugins of
      // the "executable" it is given: <build>/python/eddy.
      reg->load_default_plugins(fs::path(info.dli_fname).parent_path().string());
    } else {
      reg->load_default_plugins("");
    }
    return reg;
  }();
  return *r;
}

namespace {

// Python exception types (set in the module init; never released, as they
// must outlive the interpreter's teardown of the module).
PyObject *g_error, *g_graph_error, *g_cook_error, *g_cancelled;

[[noreturn]] void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}
[[noreturn]] void raise_graph_error(const std::exception& e) { raise(g_graph_error, e.what()); }

// Runs `f`, turning Eddy's graph errors into eddy.GraphError.
template <class F>
auto graph_call(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    raise_graph_error(e);
  }
}

std::pair<std::string, std::string> split_endpoint(const std::string& s, const char* what) {
  const auto dot = s.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size())
    throw Error(std::string(what) + " \"" + s + "\": expected \"node.socket\"");
  return {s.substr(0, dot), s.substr(dot + 1)};
}

// A line of a node's report: frame, node, message.
using InfoLine = std::tuple<int, std::string, std::string>;

// Reports cook progress to a Python callable: callback(frame, fraction,
// message) with fraction over the whole request; False cancels.
class PyProgress final : public CookObserver {
 public:
  PyProgress(CookEngine& engine, py::object callback, int first, int last)
      : engine_(engine), callback_(std::move(callback)), first_(first), last_(last) {}

  void set_frame(int f) { frame_ = f; }
  void frame_done(int f) { call(f, double(f - first_ + 1) / double(last_ - first_ + 1), "frame done"); }
  void node_progress(const std::string& node, int frame, double fraction, const std::string& message) override {
    call(frame, (double(frame_ - first_) + std::clamp(fraction, 0.0, 1.0)) / double(last_ - first_ + 1),
         node + ": " + message);
  }
  void node_info(const std::string& node, int frame, const std::string& message) override {
    std::lock_guard<std::mutex> lock(mutex_);
    info_.emplace_back(frame, node, message);
  }
  // Rethrows what the callback raised, if anything.
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }
  std::vector<InfoLine> take_info() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(info_);
  }

 private:
  void call(int frame, double fraction, const std::string& message) {
    py::gil_scoped_acquire gil;
    if (error_) return;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (!callback_.is_none()) {
        const py::object r = callback_(frame, fraction, message);
        if (!r.is_none() && !r.cast<bool>()) engine_.cancel();
      }
    } catch (py::error_already_set&) {
      error_ = std::current_exception();
      engine_.cancel();
    }
  }
  CookEngine& engine_;
  py::object callback_;
  int first_, last_, frame_ = 0;
  std::exception_ptr error_;
  std::mutex mutex_;
  std::vector<InfoLine> info_;
};

// A graph being built or cooked from Python. The cook engine (and its cache
// of cooked outputs) is made on the first cook and given each edit of the
// graph, so outputs whose inputs and parameters did not change stay cooked.
class PyGraph {
 public:
  PyGraph() = default;
  explicit PyGraph(Graph g) : graph_(std::move(g)) {}

  Graph& graph() { return graph_; }
  const Graph& graph() const { return graph_; }
  void edited() { dirty_ = true; }

  // A graph cooks on one thread at a time, and is not changed while it
  // cooks (from a progress callback, a Python node or another thread):
  // everything but cancel() refuses then. Checked with the GIL held.
  void not_cooking(const char* what) const {
    if (cooking_)
      raise(g_error, std::string("Graph.") + what + ": the graph is cooking (only cancel() may be called until it ends)");
  }

  void add(const std::string& type, const std::string& id) {
    not_cooking("add");
    graph_call([&] {
      const NodeSpec* spec = registry().find(type);
      if (!spec) {
        const std::string near = registry().closest(type);
        throw Error("add(\"" + type + "\", \"" + id + "\"): unknown node type \"" + type + "\"" +
                    (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
      }
      if (graph_.find(id)) throw Error("add(\"" + type + "\", \"" + id + "\"): the graph already has a node \"" + id + "\"");
      GraphNode n;
      n.id = id;
      n.type = type;
      n.params = default_params(*spec);
      n.position = {240.0 * double(graph_.nodes.size()), 0.0};
      if (!valid_node_id(id))
        throw Error("add(\"" + type + "\", \"" + id + "\"): a node id is a name of letters, digits, '_' or '-'");
      graph_.nodes.push_back(std::move(n));  // its parameters are the spec's defaults: valid
      edited();
    });
  }

  // The nodes into a new asset type written to `path` (asset.h); returns
  // the asset node's id.
  std::string collapse(const std::vector<std::string>& nodes, const std::string& type, const std::string& path,
                       const std::string& doc, const std::vector<std::string>& promote) {
    not_cooking("collapse");
    return graph_call([&] {
      CollapseRequest rq;
      rq.nodes = nodes;
      rq.type = type;
      rq.doc = doc;
      rq.promote = promote;
      const std::string id = collapse_into_file(graph_, registry(), rq, path);
      edited();
      return id;
    });
  }

  void remove(const std::string& id) {
    not_cooking("remove");
    graph_call([&] {
      const int i = graph_.index_of(id);
      if (i < 0) throw Error("remove(\"" + id + "\"): no node \"" + id + "\"");
      graph_.nodes.erase(graph_.nodes.begin() + i);
      std::erase_if(graph_.links, [&](const Link& l) { return l.from_node == id || l.to_node == id; });
      edited();
    });
  }

  void link(const std::string& from, const std::string& to) {
    not_cooking("link");
    graph_call([&] {
      Link l;
      std::tie(l.from_node, l.from_socket) = split_endpoint(from, "link from");
      std::tie(l.to_node, l.to_socket) = split_endpoint(to, "link to");
      graph_.links.push_back(l);
      // The link's own faults (ends, types, an input linked twice, a cycle)
      // are the graph validator's, with its messages; an input left
      // unconnected elsewhere is not the link's fault.
      const std::string mine = "links[" + std::to_string(graph_.links.size() - 1) + "]";
      try {
        ValidateOptions o{false};
        o.required_inputs = false;
        validate_graph(graph_, registry(), o);
      } catch (const Error& e) {
        const std::string m = e.what();
        if (m.rfind(mine, 0) == 0 || m.rfind("links: the graph has a cycle", 0) == 0) {
          graph_.links.pop_back();
          throw Error("link(\"" + from + "\", \"" + to + "\"): " + m);
        }
      }
      edited();
    });
  }

  void unlink(const std::string& from, const std::string& to) {
    not_cooking("unlink");
    graph_call([&] {
      const auto [fn, fs] = split_endpoint(from, "unlink from");
      const auto [tn, ts] = split_endpoint(to, "unlink to");
      const auto before = graph_.links.size();
      std::erase_if(graph_.links, [&](const Link& l) {
        return l.from_node == fn && l.from_socket == fs && l.to_node == tn && l.to_socket == ts;
      });
      if (graph_.links.size() == before) throw Error("unlink: no link from \"" + from + "\" to \"" + to + "\"");
      edited();
    });
  }

  void set(const std::string& node, const std::string& param, const std::string& json_value) {
    not_cooking("set");
    graph_call([&] {
      set_param(graph_, registry(), node, param, json_value, "set(\"" + node + "\", \"" + param + "\")");
      edited();
    });
  }

  // The frame range and rate, checked on their own (the nodes may not be wired yet).
  void set_timeline(int start, int end, double fps, const char* what) {
    not_cooking(what);
    graph_call([&] {
      Graph timeline;
      timeline.frame_start = start;
      timeline.frame_end = end;
      timeline.fps = fps;
      validate_graph(timeline, registry(), ValidateOptions{false});
      graph_.frame_start = start;
      graph_.frame_end = end;
      graph_.fps = fps;
      edited();
    });
  }

  void validate(std::optional<int> first, std::optional<int> last) {
    not_cooking("validate");
    graph_call([&] {
      ValidateOptions o;
      o.first = first.value_or(graph_.frame_start);
      o.last = last.value_or(first ? *first : graph_.frame_end);
      try {
        validate_graph(graph_, registry(), o);
      } catch (const Error& e) {
        throw Error(prefix() + e.what());
      }
    });
  }

  void save(const std::string& path) {
    not_cooking("save");
    graph_call([&] {
      save_graph(graph_, registry(), path);
      if (graph_.source.empty()) {
        graph_.source = path;  // relative input paths now resolve beside the file
        edited();
      }
    });
  }

  std::string to_json() const { return graph_call([&] { return graph_to_json(graph_, registry()); }); }

  py::dict cook(const std::string& node, int frame) {
    not_cooking("cook");
    if (!graph_.find(node)) raise(g_graph_error, "cook(\"" + node + "\"): no node \"" + node + "\"");
    CookEngine& e = engine(frame, frame);
    std::shared_ptr<const Outputs> out;
    run_cook(e, py::none(), frame, frame, [&](PyProgress&) { out = e.cook(node, frame); });
    py::dict d;
    for (const auto& [socket, value] : *out) d[socket.c_str()] = to_python(value);
    return d;
  }

  // Cooks the given nodes (default: the terminal ones) over [first, last].
  void cook_range(int first, int last, const py::object& progress, const std::vector<std::string>& nodes) {
    not_cooking("cook_range");
    for (const auto& n : nodes)
      if (!graph_.find(n)) raise(g_graph_error, "cook_range: no node \"" + n + "\"");
    CookEngine& e = engine(first, last);
    run_cook(e, progress, first, last, [&](PyProgress& p) {
      for (int f = first; f <= last; ++f) {
        p.set_frame(f);
        if (nodes.empty()) e.cook_frame(f);
        else
          for (const auto& n : nodes) e.cook(n, f);
        p.frame_done(f);
        p.rethrow();
        if (e.cancel_requested()) throw Cancelled();
      }
    });
  }

  // Cancels the cook in progress, or the next one to start when none is
  // (a cancel between two cooks of a loop is not lost).
  void cancel() {
    cancel_pending_ = true;
    if (engine_) engine_->cancel();
  }
  std::string output_dir = "out";
  int threads = 0;
  std::vector<InfoLine> info;

 private:
  std::string prefix() const { return graph_.source.empty() ? std::string() : graph_.source + ": "; }

  // The engine for a cook of [first, last], after validating the graph for
  // those frames (the same checks as `eddy run`).
  CookEngine& engine(int first, int last) {
    validate(first, last);
    graph_call([&] {
      if (first < graph_.frame_start || last > graph_.frame_end || last < first)
        throw Error(prefix() + "frames " + std::to_string(first) + "-" + std::to_string(last) +
                    ": outside the graph's frame_range " + std::to_string(graph_.frame_start) + "-" +
                    std::to_string(graph_.frame_end));
      if (!engine_ || engine_->options().output_dir != output_dir || engine_->options().threads != threads) {
        CookOptions o;
        o.output_dir = output_dir;
        o.threads = threads;
        engine_ = std::make_unique<CookEngine>(registry(), graph_, o);
      } else if (dirty_) {
        engine_->set_graph(graph_);
      }
      dirty_ = false;
    });
    return *engine_;
  }

  template <class F>
  void run_cook(CookEngine& e, const py::object& progress, int first, int last, F&& body) {
    PyProgress p(e, progress, first, last);
    e.clear_cancel();
    if (cancel_pending_) e.cancel();
    e.set_observer(&p);
    std::exception_ptr failure;
    cooking_ = true;
    {
      py::gil_scoped_release release;
      try {
        body(p);
      } catch (const abi::__forced_unwind&) {
        throw;  // a thread being torn down: let it unwind
      } catch (...) {
        failure = std::current_exception();
      }
    }
    cooking_ = false;
    cancel_pending_ = false;
    e.set_observer(nullptr);
    for (auto& i : p.take_info()) info.push_back(std::move(i));
    p.rethrow();  // what a progress callback raised comes first
    if (!failure) return;
    try {
      std::rethrow_exception(failure);
    } catch (const Cancelled&) {
      raise(g_cancelled, "the cook was cancelled; the frames finished before it are complete");
    } catch (const NodeError& err) {
      py::object exc = py::handle(g_cook_error)(err.what());
      exc.attr("node") = err.node_id;
      exc.attr("frame") = err.frame;
      PyErr_SetObject(g_cook_error, exc.ptr());
      throw py::error_already_set();
    } catch (const Error& err) {
      raise(g_error, err.what());
    }
  }

  Graph graph_;
  std::unique_ptr<CookEngine> engine_;
  bool dirty_ = true;
  bool cooking_ = false;
  bool cancel_pending_ = false;
};

}  // namespace

bool is_cancelled(const py::error_already_set& e) { return e.matches(g_cancelled); }

}  // namespace eddy::python

PYBIND11_MODULE(_eddy, m) {
  using namespace eddy;
  using namespace eddy::python;
  m.doc() = "Eddy's graph library (the C++ side of the eddy package)";

  g_error = py::register_exception<Error>(m, "Error", PyExc_RuntimeError).ptr();
  Py_INCREF(g_error);
  py::handle(g_error).attr("__module__") = "eddy";  // shown as eddy.Error
  auto sub = [&](const char* name, const char* doc) {
    PyObject* t = PyErr_NewExceptionWithDoc((std::string("eddy.") + name).c_str(), doc, g_error, nullptr);
    if (!t) throw py::error_already_set();
    m.attr(name) = py::handle(t);  // the module's reference; the global keeps its own
    return t;
  };
  g_graph_error = sub("GraphError", "A graph is not valid: the message names the place, as the CLI does.");
  g_cook_error = sub("CookError", "A node failed to cook; .node and .frame say which and when.");
  g_cancelled = sub("Cancelled", "A cook was cancelled (by a progress callback or Graph.cancel()).");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Cancelled&) {
      PyErr_SetString(g_cancelled, "cancelled");
    }
  });

  bind_values(m);
  bind_python_nodes(m);

  m.def("node_types", [] {
    std::vector<std::string> types;
    for (const NodeSpec* s : registry().all()) types.push_back(s->type);
    return types;
  });
  m.def("catalog_json", [] { return catalog_json(registry()); });
  m.def("load_default_assets", [](const std::string& graph_path) {
    return graph_call([&] { return registry().load_default_assets(graph_path); });
  });
  m.def("load_asset", [](const std::string& path) {
    graph_call([&] {
      if (std::filesystem::is_directory(path)) registry().load_assets_in(path);
      else registry().load_asset(path);
    });
  });
  m.def("reload_asset", [](const std::string& type) { graph_call([&] { registry().reload_asset(type); }); });
  m.def("plugins", [] { return registry().plugins(); });

  py::class_<PyGraph>(m, "Graph")
      .def(py::init<>())
      .def("_load",
           [](PyGraph& self, const std::string& path) {
             self.not_cooking("load");
             graph_call([&] { self = PyGraph(load_graph(path, registry(), ValidateOptions{false})); });
           })
      .def("_add", &PyGraph::add)
      .def("remove", &PyGraph::remove, "Removes a node and its links.")
      .def("_collapse", &PyGraph::collapse)
      .def("link", &PyGraph::link, py::arg("source"), py::arg("target"),
           "Links an output to an input: g.link(\"emitter.points\", \"solver.points\").")
      .def("unlink", &PyGraph::unlink, py::arg("source"), py::arg("target"))
      .def("_set", &PyGraph::set)
      .def("validate", &PyGraph::validate, py::arg("first") = py::none(), py::arg("last") = py::none(),
           "Raises eddy.GraphError as `eddy validate` reports it (the node checks for frames first..last).")
      .def("save", &PyGraph::save, "Writes the graph file atomically (after validating it).")
      .def("to_json", &PyGraph::to_json)
      .def("cook", &PyGraph::cook, py::arg("node"), py::arg("frame"),
           "The node's outputs at the frame, by socket name (eddy.Points, eddy.Mesh, eddy.Volumes, eddy.Value).")
      .def("_cook_range", &PyGraph::cook_range)
      .def("cancel", &PyGraph::cancel, "Cancels the running cook (from another thread).")
      .def_property(
          "frame_range", [](const PyGraph& g) { return std::make_pair(g.graph().frame_start, g.graph().frame_end); },
          [](PyGraph& g, std::pair<int, int> r) { g.set_timeline(r.first, r.second, g.graph().fps, "frame_range"); })
      .def_property(
          "fps", [](const PyGraph& g) { return g.graph().fps; },
          [](PyGraph& g, double fps) { g.set_timeline(g.graph().frame_start, g.graph().frame_end, fps, "fps"); })
      .def_property_readonly("source", [](const PyGraph& g) { return g.graph().source; })
      .def_property(
          "python_modules", [](const PyGraph& g) { return g.graph().python_modules; },
          [](PyGraph& g, std::vector<std::string> m) { g.graph().python_modules = std::move(m); })
      .def_readwrite("output_dir", &PyGraph::output_dir, "Where relative output paths resolve (default \"out\").")
      .def_readwrite("threads", &PyGraph::threads, "Threads to cook with (0: all).")
      .def("_nodes",
           [](const PyGraph& g) {
             std::vector<std::pair<std::string, std::string>> v;
             for (const auto& n : g.graph().nodes) v.emplace_back(n.id, n.type);
             return v;
           })
      .def("_links",
           [](const PyGraph& g) {
             std::vector<std::pair<std::string, std::string>> v;
             for (const auto& l : g.graph().links)
               v.emplace_back(l.from_node + "." + l.from_socket, l.to_node + "." + l.to_socket);
             return v;
           })
      .def("terminal_nodes", [](const PyGraph& g) { return g.graph().terminal_nodes(); })
      .def("take_info",
           [](PyGraph& g) {
             auto l = std::move(g.info);
             g.info.clear();
             return l;
           },
           "The node report lines (frame, node, message) since the last call.");
}
