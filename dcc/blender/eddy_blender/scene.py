"""Blender's side of an import: objects that follow the scene frame from
the cache, and Blender meshes exported to the graph as colliders.

Eddy is Y-up and Blender Z-up: objects carry a +90 degree turn about X, so
their data stays in Eddy's coordinates (Eddy's (x, y, z) shows at Blender's
(x, -z, y)); colliders go the other way.
"""
import math
import os
import zipfile

import bpy
import numpy as np

from . import cache

PROP_FOLDER, PROP_NODE, PROP_KIND = "eddy_cache", "eddy_node", "eddy_kind"
PROP_FIRST, PROP_LAST = "eddy_first", "eddy_last"
PROP_COOK, PROP_FRAME = "eddy_cook", "eddy_frame"  # which cook a mesh came from, and its frame


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


def _frame_meshes(cook, node):
    """The meshes read so far for `node` of the cook `cook`, by frame."""
    return {me[PROP_FRAME]: me for me in bpy.data.meshes
            if me.get(PROP_COOK) == cook and me.get(PROP_NODE) == node}


def frame_mesh(obj, frame):
    """The mesh of `obj`'s sequence at `frame` (held at the ends)."""
    return _cooked_mesh(obj[PROP_FOLDER], obj[PROP_NODE], obj[PROP_KIND], obj[PROP_COOK], obj[PROP_FIRST],
                        obj[PROP_LAST], frame)


def _cooked_mesh(folder, node, kind, cook, first, last, frame):
    """Frame `frame` (held at first..last) of a node's cooked meshes, read
    from the cache once and kept as a mesh data-block of that cook."""
    f = min(max(frame, first), last)
    me = _frame_meshes(cook, node).get(f)
    if me is not None:
        return me
    me = _mesh_from_arrays("%s.%04d" % (node, f), cache.load(cache.frame_file(folder, node, f, "npz")), kind)
    me[PROP_COOK], me[PROP_NODE], me[PROP_FRAME] = cook, node, f
    return me


@bpy.app.handlers.persistent
def follow_frame(scene, *_):
    """Frame-change handler: every Eddy mesh or point object shows the frame."""
    for obj in scene.objects:
        if obj.get(PROP_KIND) in ("mesh", "points") and obj.type == "MESH":
            try:
                me = frame_mesh(obj, scene.frame_current)
            except (OSError, ValueError, zipfile.BadZipFile):
                continue  # the frame is not cached (or its file was damaged since)
            if obj.data != me:
                obj.data = me


def _replace_object(name, data, collection):
    """A new object named `name` (the node id), replacing the object of an
    earlier import of that node; any other object of that name is left
    alone (Blender then names the new one name.001)."""
    old = bpy.data.objects.get(name)
    if old is not None and old.get(PROP_NODE) == name:
        old_data, old_kind = old.data, old.get(PROP_KIND)
        old_cook = old.get(PROP_COOK)
        bpy.data.objects.remove(old, do_unlink=True)
        if old_kind == "volumes" and old_data is not None and old_data.users == 0:
            bpy.data.volumes.remove(old_data)
        for me in _frame_meshes(old_cook, name).values():
            if me.users == 0:
                bpy.data.meshes.remove(me)
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
            # File i of the sequence shows at scene frame frame_start + i - 1
            # with frame_offset; files are numbered by Eddy's frame.
            vol.frame_start = first
            vol.frame_offset = first - 1
            vol.frame_duration = last - first + 1
            vol.sequence_mode = "EXTEND"  # held at the ends, like the meshes
            obj = _replace_object(node, vol, scene.collection)
        else:
            me = _cooked_mesh(folder, node, kind, manifest["cook"], first, last, scene.frame_current)
            obj = _replace_object(node, me, scene.collection)
        obj[PROP_FOLDER], obj[PROP_NODE], obj[PROP_KIND] = folder, node, kind
        obj[PROP_FIRST], obj[PROP_LAST], obj[PROP_COOK] = first, last, manifest["cook"]
        made.append(obj)
    follow_frame(scene)
    return made


def _safe(name):
    """A node id from an object name: ASCII letters, digits, '_' and '-'."""
    return "".join(c if (c.isascii() and c.isalnum()) or c in "_-" else "_" for c in name)


def _write_obj(path, vertices, triangles):
    lines = ["# Eddy collider exported from Blender"]
    lines += ["v %.7g %.7g %.7g" % tuple(p) for p in vertices]
    lines += ["f %d %d %d" % (a + 1, b + 1, c + 1) for a, b, c in triangles]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def export_collider(context, obj, path_pattern, first, last):
    """Writes `obj`'s evaluated mesh (world space, in Eddy's axes) for every
    frame first..last to `path_pattern` ($F4: the frame); returns it."""
    scene = context.scene
    keep = scene.frame_current
    pattern = path_pattern
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
    ids = {n for n, _ in graph.nodes}
    for obj in marked:
        base, k = "blender_" + _safe(obj.name), 1
        while base + ("" if k == 1 else "_%d" % k) in ids:  # "Cube.001" and "Cube_001" both become Cube_001
            k += 1
        reader = base + ("" if k == 1 else "_%d" % k)
        shape = reader + "_collider"
        ids |= {reader, shape}
        pattern = export_collider(context, obj, os.path.join(folder, reader + ".$F4.obj"), first, last)
        graph.add("ReadMesh", reader, path=pattern)
        graph.add("ColliderMesh", shape, mode="solid")
        graph.link(reader + ".mesh", shape + ".mesh")
        for t in targets:
            graph.link(shape + ".colliders", t + ".colliders")
        added.append(obj.name)
    return added
