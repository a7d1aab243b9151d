"""The add-on's interactive cook, in Blender with a window (run by run.sh
under Xvfb when it is installed): Cook runs in a background thread while
Blender's event loop goes on, the progress bar ends, the objects appear;
a second cook cancelled after its first frame keeps the frames done."""
import os
import shutil
import sys
import tempfile
import time
import traceback

import addon_utils
import bpy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
GRAPH = os.path.join(ROOT, "examples", "dam_break_pbf.eddy.json")
work = tempfile.mkdtemp(prefix="eddy-blender-modal-")
state = {"step": "start", "ticks": 0, "t0": time.time()}


def finish(code, message):
    print(message)
    sys.stdout.flush()
    shutil.rmtree(work, ignore_errors=True)
    os._exit(code)


def invoke(**kw):
    win = bpy.context.window_manager.windows[0]
    area = next(a for a in win.screen.areas if a.type == "VIEW_3D")
    with bpy.context.temp_override(window=win, area=area):
        return bpy.ops.eddy.import_graph("INVOKE_DEFAULT", filepath=GRAPH, **kw)


def tick():
    try:
        op = sys.modules["eddy_blender"].EDDY_OT_import_graph
        state["ticks"] += 1
        if time.time() - state["t0"] > 300:
            finish(1, "eddy_blender modal: timed out in step %s" % state["step"])
        if state["step"] == "start":
            r = invoke(frame_start=1, frame_end=3, cache_dir=os.path.join(work, "a"))
            if r != {"RUNNING_MODAL"}:
                finish(1, "eddy_blender modal: invoke gave %s" % r)
            state["step"], state["ticks_at_start"] = "cooking", state["ticks"]
        elif state["step"] == "cooking":
            if op.running is not None:
                return 0.05  # the event loop runs while the thread cooks
            obj = bpy.data.objects.get("write_mesh")
            if obj is None or len(obj.data.vertices) == 0:
                finish(1, "eddy_blender modal: no mesh object after the cook (%s)" % bpy.context.scene.eddy.status)
            if state["ticks"] - state["ticks_at_start"] < 3:
                finish(1, "eddy_blender modal: the event loop did not run during the cook")
            r = invoke(frame_start=1, frame_end=120, cache_dir=os.path.join(work, "b"))
            state["step"] = "cancelling"
        elif state["step"] == "cancelling":
            if op.running is None:
                finish(1, "eddy_blender modal: the long cook ended before it could be cancelled")
            cooker = op.running[0]
            if cooker.done >= 1:
                cooker.cancel()  # what Esc does
                state["step"] = "cancelled"
        elif state["step"] == "cancelled":
            if op.running is not None:
                return 0.05
            status = bpy.context.scene.eddy.status
            last = bpy.data.objects["write_mesh"]["eddy_last"]
            if "(cancelled)" not in status or not 1 <= last < 120:
                finish(1, "eddy_blender modal: after the cancel: %r, last frame %d" % (status, last))
            finish(0, "eddy_blender modal: all checks passed (%s)" % status)
    except Exception:
        traceback.print_exc()
        finish(1, "eddy_blender modal: failed")
    return 0.05


addon_utils.enable("eddy_blender", default_set=True, handle_error=None)
bpy.app.timers.register(tick, first_interval=1.0)
