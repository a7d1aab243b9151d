"""Blender's side of an import: objects that follow the scene frame from
the cache, and Blender meshes exported to the graph as colliders.

Eddy is Y-up and Blender Z-up: objects carry a +90 degree turn about X, so
their data stays in Eddy's coordinates (Eddy's (x, y, z) shows at Blender's
(x, -z, y)); colliders go the other way.
"""
import math
import os

import bpy
import numpy as np

from . import cache

PROP_FOLDER, PROP_NODE, PROP_KIND = "eddy_cache", "eddy_node", "eddy_kind"
PROP_FIRST, PROP_LAST = "eddy_first", "eddy_last"


def _mesh_from_arrays(name, a, kind):
    me = bpy.data.meshes.new(name)
    if kind == "points":
        P = a["P"]
        me.vertices.add(len(P))
        me.vertices.foreach_set("co", P.astype(np.float32).ravel())
        for key, arr in a.items():
            if key in ("P", "__radius__"):
                continue
            if arr.ndim == 2:
                attr = me.attributes.new(key, "FLOAT_VECTOR", "POINT")
                attr.data.foreach_set("vector", arr.astype(np.float32).ravel())
            elif arr.dtype.kind in "iub":
                attr = me.attributes.new(key, "INT", "POINT")
                attr.data.foreach_set("value", arr.astype(np.int32))
            else:
                attr = me.attributes.new(key, "FLOAT", "POINT")
                attr.data.foreach_set("value", arr.astype(np.float32))
        me["eddy_radius"] = float(a.get("__radius__", 0.0))
    else:
        v, tri, quad = a["vertices"], a["faces"], a["quads"]
        nt, nq = len(tri), len(quad)
        me.vertices.add(len(v))
        me.vertices.foreach_set("co", v.astype(np.float32).ravel())
        loops = np.concatenate([tri.ravel(), quad.ravel()]).astype(np.int32)
        me.loops.add(len(loops))
        me.loops.foreach_set("vertex_index", loops)
        me.polygons.add(nt + nq)
        me.polygons.foreach_set("loop_start", np.concatenate([np.arange(nt) * 3, nt * 3 + np.arange(nq) * 4])
                                .astype(np.int32))
        me.polygons.foreach_set("loop_total", np.concatenate([np.full(nt, 3), np.full(nq, 4)]).astype(np.int32))
        me.polygons.foreach_set("use_smooth", np.ones(nt + nq, dtype=bool))
        if len(a["velocities"]) == len(v) and len(v):
            attr = me.attributes.new("velocity", "FLOAT_VECTOR", "POINT")
            attr.data.foreach_set("vector", a["velocities"].astype(np.float32).ravel())
    me.update(calc_edges=True)
    return me


def frame_mesh(obj, frame):
    """The mesh of `obj`'s sequence at `frame` (held at the ends), read from
    the cache once and kept as a mesh data-block."""
    first, last = obj[PROP_FIRST], obj[PROP_LAST]
    f = min(max(frame, first), last)
    node, folder, kind = obj[PROP_NODE], obj[PROP_FOLDER], obj[PROP_KIND]
    name = "%s.%04d" % (node, f)
    me = bpy.data.meshes.get(name)
    if me is not None and me.get(PROP_FOLDER) == folder:
        return me
    me = _mesh_from_arrays(name, cache.load(cache.frame_file(folder, node, f, "npz")), kind)
    me[PROP_FOLDER] = folder
    return me


@bpy.app.handlers.persistent
def follow_frame(scene, *_):
    """Frame-change handler: every Eddy mesh or point object shows the frame."""
    for obj in scene.objects:
        if obj.get(PROP_KIND) in ("mesh", "points") and obj.type == "MESH":
            try:
                me = frame_mesh(obj, scene.frame_current)
            except OSError:
                continue  # the frame is not cached (a cook was cancelled before it)
            if obj.data != me:
                obj.data = me


def _replace_object(name, data, collection):
    old = bpy.data.objects.get(name)
    if old is not None:
        bpy.data.objects.remove(old, do_unlink=True)
    obj = bpy.data.objects.new(name, data)
    collection.objects.link(obj)
    obj.rotation_euler = (math.pi / 2, 0.0, 0.0)
    return obj


def build_objects(scene, folder, manifest):
    """One object per output node, named by its id, following the scene frame."""
    first, last = manifest["first"], manifest["last"]
    made = []
    for node, info in manifest["nodes"].items():
        kind = info["kind"]
        if kind == "volumes":
            vol = bpy.data.volumes.new(node)
            vol.filepath = cache.frame_file(folder, node, first, "vdb")
            vol.is_sequence = last > first
            vol.frame_start = first
            vol.frame_duration = last - first + 1
            vol.sequence_mode = "CLIP"
            obj = _replace_object(node, vol, scene.collection)
        else:
            obj = _replace_object(node, bpy.data.meshes.new(node), scene.collection)
        obj[PROP_FOLDER], obj[PROP_NODE], obj[PROP_KIND] = folder, node, kind
        obj[PROP_FIRST], obj[PROP_LAST] = first, last
        made.append(obj)
    follow_frame(scene)
    return made


def _safe(name):
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)


def _write_obj(path, vertices, triangles):
    lines = ["# Eddy collider exported from Blender"]
    lines += ["v %.7g %.7g %.7g" % tuple(p) for p in vertices]
    lines += ["f %d %d %d" % (a + 1, b + 1, c + 1) for a, b, c in triangles]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def export_collider(context, obj, folder, first, last):
    """Writes `obj`'s evaluated mesh (world space, in Eddy's axes) for every
    frame as collider_NAME.FFFF.obj; returns the $F4 path pattern."""
    scene = context.scene
    keep = scene.frame_current
    pattern = os.path.join(folder, "collider_%s.$F4.obj" % _safe(obj.name))
    try:
        for f in range(first, last + 1):
            scene.frame_set(f)
            dg = context.evaluated_depsgraph_get()
            ev = obj.evaluated_get(dg)
            me = ev.to_mesh()
            try:
                me.calc_loop_triangles()
                co = np.empty(len(me.vertices) * 3, dtype=np.float32)
                me.vertices.foreach_get("co", co)
                co = co.reshape(-1, 3)
                m = np.array(ev.matrix_world)
                world = co @ m[:3, :3].T + m[:3, 3]
                eddy_xyz = np.stack([world[:, 0], world[:, 2], -world[:, 1]], axis=1)
                tris = np.empty(len(me.loop_triangles) * 3, dtype=np.int32)
                me.loop_triangles.foreach_get("vertices", tris)
                _write_obj(pattern.replace("$F4", "%04d" % f), eddy_xyz, tris.reshape(-1, 3))
            finally:
                ev.to_mesh_clear()
    finally:
        scene.frame_set(keep)
    return pattern


def add_colliders(eddy, graph, context, folder, first, last):
    """Every object marked "Eddy Collider" as a ColliderMesh of the graph,
    linked to each solver's and emitter's colliders input."""
    marked = [o for o in context.scene.objects if o.type == "MESH" and getattr(o, "eddy_collider", False)]
    if not marked:
        return []
    targets = []
    for node, type_name in graph.nodes:
        spec = eddy.node_spec(type_name)
        if spec["category"] in ("Solvers", "Emitters") and any(
                s["name"] == "colliders" and s["type"] == "colliders" and s["multi"] for s in spec["inputs"]):
            targets.append(node)
    added = []
    for obj in marked:
        pattern = export_collider(context, obj, folder, first, last)
        reader, shape = "blender_" + _safe(obj.name), "blender_" + _safe(obj.name) + "_collider"
        graph.add("ReadMesh", reader, path=pattern)
        graph.add("ColliderMesh", shape, mode="solid")
        graph.link(reader + ".mesh", shape + ".mesh")
        for t in targets:
            graph.link(shape + ".colliders", t + ".colliders")
        added.append(obj.name)
    return added
