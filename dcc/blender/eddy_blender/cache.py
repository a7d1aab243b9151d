"""Cooking a graph's output nodes over frames into an on-disk cache, with
no Blender in it (the add-on's operators run it in a thread; the tests run
it alone).

The cache folder holds, per output node and frame:
    NODE.FFFF.npz   points (every attribute) or a mesh (vertices, faces,
                    quads, normals, velocities), as numpy arrays
    NODE.FFFF.vdb   volumes, for Blender's Volume objects
and manifest.json: the nodes, what each holds, and the frames done.
Every file is written under a temporary name and renamed into place.
"""
import json
import os
import tempfile
import uuid

import numpy as np

KINDS = ("points", "mesh", "volumes")


def frame_file(folder, node, frame, ext):
    return os.path.join(folder, "%s.%04d.%s" % (node, frame, ext))


def _atomic(path, write):
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".eddy-", suffix=os.path.splitext(path)[1], dir=folder)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _save_npz(path, arrays):
    def write(tmp):
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
    _atomic(path, write)


def output_kind(eddy, graph, node):
    """What an output node gives Blender: the first of its outputs that is
    points, a mesh or volumes, as (socket, kind); None when it has none."""
    spec = eddy.node_spec(dict(graph.nodes)[node])
    for s in spec["outputs"]:
        if s["type"] in KINDS:
            return s["name"], s["type"]
    return None


def output_nodes(eddy, graph):
    """The graph's output nodes (no link starts from them) that give
    points, meshes or volumes, with their socket and kind."""
    out = []
    for node in graph.terminal_nodes():
        k = output_kind(eddy, graph, node)
        if k:
            out.append((node, k[0], k[1]))
    return out


def store(value, kind, folder, node, frame):
    """Writes one cooked value into the cache; returns the file."""
    if kind == "volumes":
        path = frame_file(folder, node, frame, "vdb")
        value.save(path)  # written atomically by Eddy
        return path
    path = frame_file(folder, node, frame, "npz")
    if kind == "points":
        arrays = {name: np.asarray(value[name]) for name in value.attributes()}
        arrays["__radius__"] = np.float32(value.radius)
    else:
        arrays = {"vertices": value.vertices, "faces": value.faces, "quads": value.quads,
                  "normals": value.normals, "velocities": value.velocities}
    _save_npz(path, arrays)
    return path


def _save_json(path, doc):
    def write(tmp):
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=2)
    _atomic(path, write)


def load(path):
    """A cached frame's arrays (a dict)."""
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


class Cooker:
    """Cooks `graph`'s output nodes for frames first..last into `folder`.
    run() may be called on another thread; cancel() stops it between or
    within frames; progress is (frames done, total, message)."""

    def __init__(self, eddy, graph, folder, first, last):
        self.eddy, self.graph, self.folder = eddy, graph, folder
        self.first, self.last = first, last
        self.outputs = output_nodes(eddy, graph)
        self.done = 0
        self.message = ""
        self.error = None
        self.cancelled = False
        self.finished = False
        self.cook_id = uuid.uuid4().hex  # tells this cook's frames from an earlier cook's in the same folder

    @property
    def total(self):
        return self.last - self.first + 1

    def cancel(self):
        self.cancelled = True
        self.graph.cancel()

    def manifest(self):
        return {"cook": self.cook_id, "first": self.first, "last": self.first + self.done - 1,
                "nodes": {n: {"socket": s, "kind": k} for n, s, k in self.outputs}}

    def run(self):
        try:
            os.makedirs(self.folder, exist_ok=True)
            if not self.outputs:
                raise self.eddy.GraphError("the graph has no output node giving points, a mesh or volumes")
            self.graph.validate(self.first, self.last)
            for f in range(self.first, self.last + 1):
                for node, socket, kind in self.outputs:
                    if self.cancelled:
                        raise self.eddy.Cancelled("cancelled")
                    self.message = "frame %d: %s" % (f, node)
                    store(self.graph.cook(node, f)[socket], kind, self.folder, node, f)
                self.done += 1
                _save_json(os.path.join(self.folder, "manifest.json"), self.manifest())
        except self.eddy.Cancelled:
            self.cancelled = True
        except Exception as e:  # reported to the user by the operator
            self.error = e
        finally:
            self.finished = True
