"""The Blender add-on, headless in Debian's Blender (run by run.sh from
`make test`): enable it, cook the PBF dam break for frames 1-2 into
objects that follow the scene frame, then mark a cube as an Eddy Collider
and check the liquid keeps out of it."""
import os
import sys
import shutil
import tempfile
import traceback

import addon_utils
import bpy
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
GRAPH = os.path.join(ROOT, "examples", "dam_break_pbf.eddy.json")


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def positions(obj):
    co = np.empty(len(obj.data.vertices) * 3, dtype=np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)  # Eddy's axes: the object carries the turn to Blender's


def inside(P, center, half):
    return np.all(np.abs(P - np.array(center)) < np.array(half), axis=1)


def main():
    mod = addon_utils.enable("eddy_blender", default_set=True, handle_error=None)
    check(mod is not None, "the add-on did not enable")
    scene = bpy.context.scene
    work = tempfile.mkdtemp(prefix="eddy-blender-")

    r = bpy.ops.eddy.import_graph(filepath=GRAPH, frame_start=1, frame_end=2, cache_dir=os.path.join(work, "a"))
    check(r == {"FINISHED"}, "import_graph: %s" % r)
    surface, particles, vdb = (bpy.data.objects.get(n) for n in ("write_mesh", "cache", "write_vdb"))
    check(surface is not None and particles is not None and vdb is not None,
          "objects named by the output nodes: %s" % [o.name for o in bpy.data.objects])
    scene.frame_set(1)
    n1, faces1 = len(surface.data.vertices), len(surface.data.polygons)
    scene.frame_set(2)
    n2 = len(surface.data.vertices)
    check(n1 > 0 and faces1 > 0 and n2 > 0, "the liquid mesh has vertices (%d, %d)" % (n1, n2))
    check(n1 != n2, "the mesh follows the frame: %d vertices at frame 1 and at frame 2" % n1)
    check(len(particles.data.vertices) == 36000, "particles: %d" % len(particles.data.vertices))
    check("v" in particles.data.attributes and "density" in particles.data.attributes, "particle attributes")
    check(vdb.type == "VOLUME" and os.path.exists(bpy.path.abspath(vdb.data.filepath)), "the VDB sequence")
    # Frames past the cooked range hold the last one.
    scene.frame_set(5)
    check(len(surface.data.vertices) == n2, "frame 5 shows frame 2")

    # A cube in the column's way, marked as a collider: the cube spans Eddy's
    # (0.2..0.4, 0.2..0.4, 0.1..0.3); Blender's location is Eddy's (x, -z, y).
    # Frames 2-3: the solver cooks from the graph's frame 1, which needs the
    # collider too.
    center, half = (0.3, 0.3, 0.2), (0.1, 0.1, 0.1)
    scene.frame_set(2)
    before = inside(positions(particles), center, half).sum()
    check(before > 100, "without the cube, %d particles are where it will be" % before)
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=(center[0], -center[2], center[1]))
    cube = bpy.context.active_object
    cube.eddy_collider = True
    folder_b = os.path.join(work, "b")
    r = bpy.ops.eddy.import_graph(filepath=GRAPH, frame_start=2, frame_end=3, cache_dir=folder_b)
    check(r == {"FINISHED"}, "import_graph with a collider: %s" % r)
    particles = bpy.data.objects["cache"]
    for f in (2, 3):
        scene.frame_set(f)
        P = positions(particles)
        shrunk = tuple(h - 0.01 for h in half)  # one particle radius of contact
        n_in = inside(P, center, shrunk).sum()
        check(n_in == 0, "frame %d: %d particles inside the collider cube" % (f, n_in))
        check(len(P) > 30000, "frame %d: the rest of the column is there (%d particles)" % (f, len(P)))
        # The VDB sequence shows the file of the scene frame.
        vol = bpy.data.objects["write_vdb"].data
        vol.grids.load()
        check(vol.grids.frame_filepath.endswith("write_vdb.%04d.vdb" % f) and len(vol.grids) > 0,
              "frame %d: the volume shows %r" % (f, vol.grids.frame_filepath))

    # The panel's way: open the graph, change a parameter, cook again into
    # the same cache folder: the objects show the new cook, not the old frames.
    cube.eddy_collider = False
    r = bpy.ops.eddy.open_graph(filepath=GRAPH)
    check(r == {"FINISHED"}, "open_graph: %s" % r)
    settings = scene.eddy
    check((settings.frame_start, settings.frame_end) == (1, 120), "the graph's frame range")
    radius = next(p for p in settings.params if p.node == "water" and p.name == "particle_radius")
    check(abs(radius.float_value - 0.01) < 1e-9 and radius.unit == "m" and not radius.edited, "water.particle_radius")
    radius.float_value = 0.02
    check(radius.edited, "an edit is marked")
    r = bpy.ops.eddy.import_graph(filepath=GRAPH, frame_start=2, frame_end=3, cache_dir=folder_b)
    check(r == {"FINISHED"}, "import_graph after the edit: %s" % r)
    for f in (2, 3):
        scene.frame_set(f)
        n = len(bpy.data.objects["cache"].data.vertices)
        check(n == 36000 // 8, "frame %d: particle_radius 0.02 fills the column with 8 times fewer particles: %d"
              % (f, n))
    # Frame changes reuse the meshes read once (no new data-blocks).
    count = len(bpy.data.meshes)
    for f in (2, 3, 2, 3):
        scene.frame_set(f)
    check(len(bpy.data.meshes) == count, "meshes: %d, then %d" % (count, len(bpy.data.meshes)))
    shutil.rmtree(work)
    print("eddy_blender: all checks passed")


try:
    main()
except Exception:
    traceback.print_exc()
    sys.exit(1)
