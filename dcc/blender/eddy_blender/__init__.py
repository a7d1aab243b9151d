"""Eddy for Blender: cook Eddy graphs inside Blender and see their meshes,
particles and VDBs follow the scene frame; mark Blender meshes as colliders
the liquid reacts to. Needs Eddy's Python module (build/python from Eddy's
CMake), found through the add-on's preferences, EDDY_PYTHONPATH, or a
`python` folder beside the add-on. See docs/blender.md.
"""
import atexit
import importlib
import os
import sys
import threading

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty, FloatVectorProperty,
                       IntProperty, PointerProperty, StringProperty)

from . import cache, scene

bl_info = {
    "name": "Eddy",
    "author": "Eddy developers",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "3D View > Sidebar > Eddy",
    "description": "Cook Eddy liquid graphs in Blender: meshes, particles and VDBs as frame sequences",
    "category": "Physics",
}


# ---------------------------------------------------------------------------
# Finding Eddy's Python module
# ---------------------------------------------------------------------------

def module_places(prefs_path=""):
    """Where the `eddy` package is looked for, in order."""
    places = []
    if prefs_path:
        places.append(bpy.path.abspath(prefs_path))
    places += [p for p in os.environ.get("EDDY_PYTHONPATH", "").split(os.pathsep) if p]
    places.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
    return places


def get_eddy():
    """Eddy's Python module; raises ImportError saying where it looked."""
    prefs = bpy.context.preferences.addons.get(__name__)
    places = module_places(prefs.preferences.module_path if prefs else "")
    for p in places:
        if os.path.isfile(os.path.join(p, "eddy", "__init__.py")):
            if p not in sys.path:
                sys.path.insert(0, p)
            break
    try:
        return importlib.import_module("eddy")
    except ImportError as e:
        raise ImportError("Eddy's Python module was not found (looked in %s; set it in the add-on's preferences "
                          "or EDDY_PYTHONPATH to Eddy's build/python): %s" % (", ".join(places) or "nothing", e))


class EddyPreferences(bpy.types.AddonPreferences):
    bl_idname = __name__
    module_path: StringProperty(name="Eddy Python module", subtype="DIR_PATH",
                                description="The folder holding the eddy package (Eddy's build/python)")

    def draw(self, context):
        self.layout.prop(self, "module_path")
        try:
            eddy = get_eddy()
            self.layout.label(text="Found: %s (%d node types)" % (os.path.dirname(eddy.__file__), len(eddy.nodes())))
        except ImportError as e:
            self.layout.label(text=str(e)[:120], icon="ERROR")


# ---------------------------------------------------------------------------
# Settings kept in the scene
# ---------------------------------------------------------------------------

class EddyParam(bpy.types.PropertyGroup):
    """One node parameter shown in the panel (from the node's spec)."""
    node: StringProperty()
    kind: StringProperty()  # bool, int, float, vec3, string, path, enum
    animated: BoolProperty()
    edited: BoolProperty(description="Set by the user: applied when the graph cooks")
    unit: StringProperty()
    doc: StringProperty()
    items: StringProperty()  # enum items, '|'-separated
    min: FloatProperty()
    max: FloatProperty()

    def _edited(self, context):
        self.edited = True

    bool_value: BoolProperty(name="Value", update=_edited)
    int_value: IntProperty(name="Value", update=_edited)
    float_value: FloatProperty(name="Value", update=_edited, precision=4)
    vec_value: FloatVectorProperty(name="Value", size=3, update=_edited)
    string_value: StringProperty(name="Value", update=_edited)

    def value(self):
        if self.kind == "bool":
            return self.bool_value
        if self.kind == "int":
            return int(min(max(self.int_value, self.min), self.max))
        if self.kind == "float":
            return float(min(max(self.float_value, self.min), self.max))
        if self.kind == "vec3":
            return [float(min(max(x, self.min), self.max)) for x in self.vec_value]
        return self.string_value


# Blender keeps only pointers to the strings of a dynamic enum's items:
# Python must hold them (the last list made is kept here).
_node_items_kept = []


def _node_items(self, context):
    nodes = []
    for p in self.params:
        if p.node not in nodes:
            nodes.append(p.node)
    _node_items_kept[:] = [(n, n, "") for n in nodes] or [("-", "(open a graph)", "")]
    return _node_items_kept


class EddySettings(bpy.types.PropertyGroup):
    graph_path: StringProperty(name="Graph", subtype="FILE_PATH", description="An Eddy graph (.eddy.json)")
    frame_start: IntProperty(name="Start", default=1)
    frame_end: IntProperty(name="End", default=24)
    cache_dir: StringProperty(name="Cache", subtype="DIR_PATH", default="//eddy_cache",
                              description="Where cooked frames are kept (relative to the .blend file)")
    node: EnumProperty(name="Node", items=_node_items, description="The node whose parameters are shown")
    params: CollectionProperty(type=EddyParam)
    params_graph: StringProperty(description="The graph file the parameters were read from")
    status: StringProperty()


def load_params(settings, graph, eddy, path):
    """Fills the panel's parameter list from the graph's nodes and their specs."""
    settings.params.clear()
    settings.params_graph = path
    for node, type_name in graph.nodes:
        spec = eddy.node_spec(type_name)
        for ps in spec["params"]:
            p = settings.params.add()
            p.name, p.node, p.kind = ps["name"], node, ps["type"].lower()
            p.unit, p.doc = ps.get("unit", ""), ps.get("doc", "")
            p.min = ps.get("min", -1e30) if ps.get("min") is not None else -1e30
            p.max = ps.get("max", 1e30) if ps.get("max") is not None else 1e30
            p.items = "|".join(ps.get("items", []))
            v = graph.get(node, ps["name"])
            p.animated = isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, dict) for x in v))
            if p.animated:
                continue
            if p.kind == "bool":
                p.bool_value = v
            elif p.kind == "int":
                p.int_value = v
            elif p.kind == "float":
                p.float_value = v
            elif p.kind == "vec3":
                p.vec_value = v
            else:
                p.string_value = str(v)
            p.edited = False


def cache_folder(settings):
    """The cache folder; a path relative to an unsaved .blend file resolves
    under the home folder (as Houdini's $HIP does): the cache outlives the
    session, since the file saved later refers to it."""
    folder = settings.cache_dir or "//eddy_cache"
    if folder.startswith("//"):
        folder = bpy.path.abspath(folder) if bpy.data.filepath else os.path.join(os.path.expanduser("~"), folder[2:])
    return os.path.normpath(folder)


# ---------------------------------------------------------------------------
# Operators
# ---------------------------------------------------------------------------

class EDDY_OT_open_graph(bpy.types.Operator):
    """Open an Eddy graph: its frame range and its nodes' parameters"""
    bl_idname = "eddy.open_graph"
    bl_label = "Open Eddy Graph"
    filepath: StringProperty(subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        settings = context.scene.eddy
        try:
            eddy = get_eddy()
            g = eddy.load(bpy.path.abspath(self.filepath))
        except Exception as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        settings.graph_path = self.filepath
        settings.frame_start, settings.frame_end = g.frame_range
        load_params(settings, g, eddy, os.path.normpath(bpy.path.abspath(self.filepath)))
        settings.status = "%d nodes, frames %d-%d" % (len(g.nodes), *g.frame_range)
        return {"FINISHED"}


class EDDY_OT_import_graph(bpy.types.Operator):
    """Cook an Eddy graph's output nodes over the frames and show them as objects following the scene frame"""
    bl_idname = "eddy.import_graph"
    bl_label = "Cook Eddy Graph"
    filepath: StringProperty(subtype="FILE_PATH")
    frame_start: IntProperty(default=-1000000000)
    frame_end: IntProperty(default=-1000000000)
    cache_dir: StringProperty(subtype="DIR_PATH")

    _timer = None
    _thread = None
    _cooker = None
    running = None  # (Cooker, thread) of the cook in the background: one at a time

    @classmethod
    def poll(cls, context):
        return cls.running is None

    def _prepare(self, context):
        settings = context.scene.eddy
        eddy = get_eddy()
        path = os.path.normpath(bpy.path.abspath(self.filepath or settings.graph_path))
        g = eddy.load(path)
        if settings.params_graph == path:  # what the user changed in the panel, for this graph
            for p in settings.params:
                if p.edited and not p.animated and any(n == p.node for n, _ in g.nodes):
                    g.set(p.node, p.name, p.value())
        a, b = g.frame_range
        first = self.frame_start if self.frame_start != -1000000000 else a
        last = self.frame_end if self.frame_end != -1000000000 else b
        folder = os.path.normpath(bpy.path.abspath(self.cache_dir)) if self.cache_dir else cache_folder(settings)
        folder = os.path.join(folder, os.path.basename(path).split(".")[0])
        os.makedirs(folder, exist_ok=True)
        g.output_dir = os.path.join(folder, "out")
        # Stateful solvers cook from the graph's start frame: colliders are exported from there.
        scene.add_colliders(eddy, g, context, folder, min(first, a), last)
        return cache.Cooker(eddy, g, folder, first, last)

    def _finish(self, context):
        c = self._cooker
        status = context.scene.eddy
        if c.error is not None:
            status.status = "failed: %s" % str(c.error).splitlines()[0][:200]
            self.report({"ERROR"}, str(c.error))
            return {"CANCELLED"}
        if c.done == 0:
            status.status = "cancelled before the first frame was cooked"
            self.report({"WARNING"}, status.status)
            return {"CANCELLED"}
        made = scene.build_objects(context.scene, c.folder, c.manifest())
        context.scene.eddy.status = "%s: frames %d-%d%s" % (", ".join(o.name for o in made), c.first,
                                                            c.first + c.done - 1, " (cancelled)" if c.cancelled else "")
        self.report({"INFO"}, "Eddy: " + context.scene.eddy.status)
        return {"FINISHED"}

    def execute(self, context):
        # Headless (blender -b) or from a script: cook here, then build.
        try:
            self._cooker = self._prepare(context)
        except Exception as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self._cooker.run()
        return self._finish(context)

    def invoke(self, context, event):
        try:
            self._cooker = self._prepare(context)
        except Exception as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self._thread = threading.Thread(target=self._cooker.run, daemon=True)
        EDDY_OT_import_graph.running = (self._cooker, self._thread)
        self._thread.start()
        wm = context.window_manager
        wm.progress_begin(0, self._cooker.total)
        self._timer = wm.event_timer_add(0.2, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        wm = context.window_manager
        if event.type == "ESC":
            self._cooker.cancel()  # the thread stops at its next check; finished frames are kept
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        wm.progress_update(self._cooker.done)
        context.scene.eddy.status = "cooking %s (%d/%d)" % (self._cooker.message, self._cooker.done,
                                                           self._cooker.total)
        for area in context.screen.areas if context.screen else []:
            if area.type == "VIEW_3D":
                area.tag_redraw()
        if not self._cooker.finished:
            return {"RUNNING_MODAL"}
        self._thread.join()
        EDDY_OT_import_graph.running = None
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        return self._finish(context)


# ---------------------------------------------------------------------------
# The sidebar panel
# ---------------------------------------------------------------------------

class EDDY_PT_panel(bpy.types.Panel):
    bl_label = "Eddy"
    bl_idname = "EDDY_PT_panel"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Eddy"

    def draw(self, context):
        s = context.scene.eddy
        col = self.layout.column()
        row = col.row(align=True)
        row.prop(s, "graph_path", text="")
        row.operator("eddy.open_graph", text="", icon="FILEBROWSER")
        row = col.row(align=True)
        row.prop(s, "frame_start")
        row.prop(s, "frame_end")
        col.prop(s, "cache_dir")
        if len(s.params):
            col.prop(s, "node")
            box = col.box()
            for p in s.params:
                if p.node != s.node:
                    continue
                label = p.name + (" (%s)" % p.unit if p.unit else "")
                if p.animated:
                    box.label(text=label + ": animated in the graph")
                elif p.kind == "enum":
                    r = box.row()
                    r.label(text=label)
                    r.prop(p, "string_value", text="")
                    r.label(text="|".join(p.items.split("|")[:4]))
                else:
                    box.prop(p, {"bool": "bool_value", "int": "int_value", "float": "float_value",
                                 "vec3": "vec_value"}.get(p.kind, "string_value"), text=label)
        busy = EDDY_OT_import_graph.running is not None
        op = col.operator("eddy.import_graph", text="Cooking... (Esc cancels)" if busy else "Cook", icon="PLAY")
        op.filepath, op.frame_start, op.frame_end = s.graph_path, s.frame_start, s.frame_end
        if s.status:
            col.label(text=s.status)
        obj = context.active_object
        if obj is not None and obj.type == "MESH":
            col.separator()
            col.prop(obj, "eddy_collider", text="Eddy Collider: " + obj.name)


classes = (EddyPreferences, EddyParam, EddySettings, EDDY_OT_open_graph, EDDY_OT_import_graph, EDDY_PT_panel)


def register():
    for c in classes:
        bpy.utils.register_class(c)
    bpy.types.Scene.eddy = PointerProperty(type=EddySettings)
    bpy.types.Object.eddy_collider = BoolProperty(
        name="Eddy Collider", description="Exported each frame to the Eddy graph as a ColliderMesh the liquid meets")
    if scene.follow_frame not in bpy.app.handlers.frame_change_post:
        bpy.app.handlers.frame_change_post.append(scene.follow_frame)


@atexit.register
def _stop_cooking():
    """Blender is quitting: a cook in the background stops before Python does."""
    running = EDDY_OT_import_graph.running
    if running is not None:
        running[0].cancel()
        running[1].join(timeout=30)


def unregister():
    _stop_cooking()
    if scene.follow_frame in bpy.app.handlers.frame_change_post:
        bpy.app.handlers.frame_change_post.remove(scene.follow_frame)
    del bpy.types.Object.eddy_collider
    del bpy.types.Scene.eddy
    for c in reversed(classes):
        bpy.utils.unregister_class(c)
