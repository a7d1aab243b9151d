#pragma once
// The `eddy` Python module's C++ side (the extension eddy._eddy): values as
// Python objects viewing Eddy's memory, graphs, and Python-defined node
// types. A thin layer over nodes/graph; the pure-Python package in
// python/eddy/ gives it its public shape.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "eddy/core/mesh.h"
#include "eddy/core/points.h"
#include "eddy/graph/registry.h"
#include "eddy/graph/value.h"
#include "eddy/graph/volumes_value.h"

namespace eddy::python {

namespace py = pybind11;

// The one registry of the process: the plug-ins beside the module, then the
// node types Python code registers.
Registry& registry();

// Particles as Python sees them: a mapping from attribute name to a
// read-only numpy array over the cooked value's own memory.
struct PyPoints {
  std::shared_ptr<const Points> points;
};
// A triangle/quad mesh: vertices, faces, quads, normals, velocities.
struct PyMesh {
  std::shared_ptr<const Mesh> mesh;
};
// OpenVDB grids: their descriptions, written to or read from .vdb files.
struct PyVolumes {
  std::shared_ptr<const Volumes> volumes;
};
// Any other value (colliders, sources, bodies, ...): passed along as is.
struct PyValue {
  Value value;
};

// A node output as the Python object above.
py::object to_python(const Value& v);
// A Python object as a value of the socket type `type` (points and meshes
// also from a mapping of arrays); throws eddy::Error starting with `where`.
Value from_python(const py::handle& o, const std::string& type, const std::string& where,
                  const Points* template_points);

// Whether a Python exception is eddy.Cancelled.
bool is_cancelled(const py::error_already_set& e);

void bind_values(py::module_& m);
void bind_python_nodes(py::module_& m);

}  // namespace eddy::python
