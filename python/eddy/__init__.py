"""Eddy from Python: build, load, cook and save node graphs; read cooked
particles and meshes as numpy arrays over Eddy's own memory; write node
types in Python.

    import eddy
    g = eddy.load("examples/dam_break_pbf.eddy.json")
    pts = g.cook("solver", 12)["points"]
    pts["P"]            # (N, 3) float32, read-only, no copy

See docs/python.md.
"""
import importlib
import json
import numbers
import os
import sys

from . import _eddy
from ._eddy import (Cancelled, CookContext, CookError, Error, GraphError, Mesh, Points, Value, Volumes,
                    read_mesh, read_vdb)

__all__ = ["nodes", "node_spec", "load", "load_assets", "reload_asset", "Graph", "node", "Param", "Points", "Mesh", "Volumes", "Value",
           "CookContext", "Error", "GraphError", "CookError", "Cancelled", "read_mesh", "read_vdb"]

# Python node types: type name -> the module that defines it (written to
# graph files as "python_modules").
_python_types = {}


def nodes():
    """Every node type name (built-in, plug-in and Python)."""
    return list(_eddy.node_types())


def node_spec(type_name):
    """A node type's spec as a dict: type, category, doc, inputs, outputs
    (name, type, doc, optional, multi) and params (name, type, default, min,
    max, unit, doc, items)."""
    for spec in json.loads(_eddy.catalog_json()):
        if spec["type"] == type_name:
            if type_name in _python_types:
                spec["python_module"] = _python_types[type_name]
            return spec
    near = [t for t in nodes() if t.lower() == type_name.lower()]
    raise GraphError('unknown node type "%s"%s' % (type_name, '; did you mean "%s"?' % near[0] if near else ""))


def _to_json(value):
    """A parameter value as graph-format JSON text (numpy scalars and arrays
    included; expressions and keys as dicts)."""
    def plain(v):
        if hasattr(v, "tolist"):
            return v.tolist()
        if isinstance(v, tuple):
            return [plain(x) for x in v]
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v
    return json.dumps(plain(value))


class Graph(_eddy.Graph):
    """A node graph: build it (add, link, set), check it (validate), cook it
    (cook, cook_range) and save it. Errors in the graph raise GraphError
    with the messages of the `eddy` command line."""

    def __init__(self, frame_range=(1, 1), fps=24.0):
        super().__init__()
        self.frame_range = tuple(frame_range)
        self.fps = fps

    def add(self, type_name, node_id, **params):
        """Adds a node of `type_name`; keyword arguments set its parameters
        (values, {"expr": ...} or {"keys": ...} as in the graph format)."""
        self._add(type_name, node_id)
        try:
            for name, value in params.items():
                self.set(node_id, name, value)
        except Exception:
            self.remove(node_id)
            raise
        return node_id

    def collapse(self, nodes, type_name, path, doc="", promote=()):
        """Makes the nodes one node of a new asset type (Houdini's collapse
        into a subnet, then "create digital asset"): writes the asset file at
        `path` (never over a file), registers the type and puts its node in
        their place, wired as they were; `promote` names parameters
        ("node.param") to become the asset's. Returns the new node's id.
        The graph cooks exactly as before."""
        return self._collapse(list(nodes), type_name, os.fspath(path), doc, list(promote))

    def set(self, node_id, param, value):
        """Sets a parameter: a value, a (x, y, z) vector, {"expr": "..."} or
        {"keys": [[frame, value], ...]} (any vector component may be animated)."""
        self._set(node_id, param, _to_json(value))

    def get(self, node_id, param):
        """A parameter as the graph file holds it (animated ones as dicts)."""
        for n in json.loads(self.to_json())["nodes"]:
            if n["id"] == node_id:
                if param not in n["params"]:
                    raise GraphError('%s "%s" has no parameter "%s"' % (n["type"], node_id, param))
                return n["params"][param]
        raise GraphError('no node "%s"' % node_id)

    @property
    def nodes(self):
        """(id, type) of every node, in graph order."""
        return self._nodes()

    @property
    def links(self):
        """("node.output", "node.input") of every link."""
        return self._links()

    def save(self, path):
        """Writes the graph file atomically, naming the Python modules its
        Python nodes come from."""
        used = {t: _python_types[t] for _, t in self.nodes if t in _python_types}
        scripts = sorted(t for t, m in used.items() if m == "__main__")
        if scripts:
            raise GraphError("save: the Python node type%s %s %s defined in a script (__main__), which a graph file "
                             "cannot name; define %s in a module" % ("s" if len(scripts) > 1 else "",
                                                                     ", ".join(scripts),
                                                                     "are" if len(scripts) > 1 else "is",
                                                                     "them" if len(scripts) > 1 else "it"))
        self.python_modules = sorted(set(used.values()))
        super().save(os.fspath(path))

    def cook_range(self, first=None, last=None, progress=None, nodes=None):
        """Cooks frames first..last (default: the graph's range) of `nodes`
        (default: the terminal nodes, as `eddy run` does). progress(frame,
        fraction, message) is called as the cook goes; returning False
        cancels it (eddy.Cancelled is raised; finished frames stay
        written). The GIL is released while cooking."""
        a, b = self.frame_range
        first = a if first is None else first
        last = b if last is None else last
        self._cook_range(first, last, progress, list(nodes or []))

    def __repr__(self):
        return "<eddy.Graph %d nodes, frames %d-%d%s>" % (len(self.nodes), self.frame_range[0], self.frame_range[1],
                                                         ", from " + self.source if self.source else "")


def reload_asset(type_name):
    """Reads an asset type's file again (after it was edited); graphs cook
    the new contents from their next cook on."""
    _eddy.reload_asset(type_name)


def load_assets(path):
    """Registers the asset (a subnetwork as a node type) of an asset file,
    or every asset file in a folder."""
    _eddy.load_asset(os.fspath(path))


def load(path):
    """Reads and validates a graph file, importing the Python modules it
    names first (looked for beside the graph file too) and registering the
    assets in EDDY_ASSET_PATH and in the "assets" folder beside it."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            modules = json.load(f).get("python_modules", [])
    except (OSError, ValueError, AttributeError):
        modules = []  # the C++ reader reports what is wrong with the file
    if isinstance(modules, list) and modules:
        folder = os.path.dirname(os.path.abspath(path))
        added = folder not in sys.path
        if added:
            sys.path.insert(0, folder)
        try:
            for name in modules:
                if isinstance(name, str):
                    importlib.import_module(name)
        finally:
            if added:
                sys.path.remove(folder)
    _eddy.load_default_assets(path)  # after the modules: an asset may use their node types
    g = Graph()
    g._load(path)
    return g


class Param:
    """A Python node's parameter: Param(default, min=None, max=None,
    unit="", doc="", items=None (an enum), path=False)."""

    def __init__(self, default, min=None, max=None, unit="", doc="", items=None, path=False):
        self.default, self.min, self.max, self.unit, self.doc = default, min, max, unit, doc
        self.items, self.path = items, path

    def describe(self, name):
        d = self.default
        if self.items is not None:
            kind = "enum"
        elif isinstance(d, bool):
            kind = "bool"
        elif isinstance(d, numbers.Integral):
            kind = "int"
        elif isinstance(d, numbers.Real):
            kind = "float"
        elif isinstance(d, str):
            kind = "path" if self.path else "string"
        elif isinstance(d, (tuple, list)) and len(d) == 3:
            kind, d = "vec3", [float(x) for x in d]
        else:
            raise TypeError("parameter %r: cannot tell its type from the default %r" % (name, d))
        return {"name": name, "type": kind, "default": d, "min": self.min, "max": self.max, "unit": self.unit,
                "doc": self.doc, "items": list(self.items or [])}


def _sockets(spec, multi_ok):
    out = []
    for name, s in (spec or {}).items():
        if isinstance(s, str):
            s = {"type": s}
        out.append({"name": name, "type": s["type"], "doc": s.get("doc", ""),
                    "optional": bool(s.get("optional", False)), "multi": bool(s.get("multi", False)) and multi_ok})
    return out


def node(type_name, inputs=None, outputs=None, params=None, category="Python", doc="", time_dependent=True):
    """Registers the decorated function as a node type, like Houdini's
    Python SOP:

        @eddy.node("ScaleVelocity", inputs={"points": "points"},
                   outputs={"points": "points"}, params={"factor": 2.0})
        def scale_velocity(ctx, points, factor):
            arrays = dict(points.items())
            arrays["v"] = points["v"] * factor
            return arrays

    Sockets are {name: type} or {name: {"type", "doc", "optional", "multi"}}.
    Parameters are {name: default} or {name: eddy.Param(...)}. The function
    gets a CookContext, then each input (eddy.Points, eddy.Mesh, ...; a list
    for a multi input, None for an unlinked optional one) and each parameter
    (animated ones at the frame) by name. It returns the output value (one
    output) or a dict by output name; points and meshes may be mappings of
    numpy arrays. A node that reads only its inputs may say
    time_dependent=False and is then cooked once for all frames."""
    def register(fn):
        described = []
        for name, p in (params or {}).items():
            described.append((p if isinstance(p, Param) else Param(p)).describe(name))
        _eddy._register_node({
            "type": type_name, "category": category, "doc": doc or (fn.__doc__ or "").strip(),
            "time_dependent": bool(time_dependent), "inputs": _sockets(inputs, True),
            "outputs": _sockets(outputs, False), "params": described}, fn)
        _python_types[type_name] = fn.__module__
        return fn
    return register


def _items(self):
    return [(k, self[k]) for k in self.attributes()]


Points.items = _items
Points.__iter__ = lambda self: iter(self.attributes())
