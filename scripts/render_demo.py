"""Renders one frame of the lemon demo headless with Blender's Cycles (CPU).

    blender -b --python scripts/render_demo.py -- OUT_DIR FRAME PNG

OUT_DIR is the demo's output folder (out/demo/water_hits_lemon), FRAME the
frame number, PNG the image to write. The liquid mesh is Eddy's OBJ of that
frame; the lemon is examples/assets/lemon.obj placed as the graph's
ColliderMesh places it (origin at (0, 0.044, 0) m, 25 degrees about +Y); the
glass box is drawn as a thin transparent shell. Eddy's files are Y-up; the
OBJ importer turns them Z-up, so Eddy's (x, y, z) is Blender's (x, -z, y).
"""
import math
import os
import sys

import bpy

argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
if len(argv) != 3:
    sys.exit("usage: blender -b --python scripts/render_demo.py -- OUT_DIR FRAME PNG")
out_dir, frame, png = argv[0], int(argv[1]), argv[2]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene


def import_obj(path):
    before = set(bpy.data.objects)
    bpy.ops.wm.obj_import(filepath=path)
    (obj,) = set(bpy.data.objects) - before
    return obj


def material(name, color, transmission=0.0, roughness=0.3, ior=1.45):
    m = bpy.data.materials.new(name)
    m.use_nodes = True
    bsdf = m.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (*color, 1.0)
    bsdf.inputs["Roughness"].default_value = roughness
    # "Transmission" in Blender 3.x, "Transmission Weight" from 4.0.
    (bsdf.inputs.get("Transmission Weight") or bsdf.inputs["Transmission"]).default_value = transmission
    bsdf.inputs["IOR"].default_value = ior
    return m


water = import_obj(os.path.join(out_dir, "surface.%04d.obj" % frame))
water.data.materials.append(material("water", (0.8, 0.9, 1.0), transmission=1.0, roughness=0.02, ior=1.33))
for poly in water.data.polygons:
    poly.use_smooth = True

lemon = import_obj(os.path.join(root, "examples", "assets", "lemon.obj"))
lemon.location = (0.0, 0.0, 0.044)
lemon.rotation_euler[2] = math.radians(25.0)  # about Blender's Z, Eddy's Y; the importer's X turn kept
lemon.data.materials.append(material("lemon", (0.95, 0.75, 0.05), roughness=0.45))
for poly in lemon.data.polygons:
    poly.use_smooth = True

# The floor the glass box stands on, and the box's back and side walls
# (0.4 x 0.26 m, 0.5 m high, centred on the origin).
bpy.ops.mesh.primitive_plane_add(size=3.0, location=(0.0, 0.0, 0.0))
bpy.context.object.data.materials.append(material("floor", (0.55, 0.55, 0.58), roughness=0.6))
glass = material("glass", (1.0, 1.0, 1.0), transmission=1.0, roughness=0.0, ior=1.5)
for loc, scale in (((0.0, 0.13, 0.25), (0.2, 0.002, 0.25)), ((-0.2, 0.0, 0.25), (0.002, 0.13, 0.25)),
                   ((0.2, 0.0, 0.25), (0.002, 0.13, 0.25))):
    bpy.ops.mesh.primitive_cube_add(location=loc, scale=scale)
    bpy.context.object.data.materials.append(glass)

world = bpy.data.worlds.new("world")
world.use_nodes = True
world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.75, 0.8, 0.9, 1.0)
world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.6
scene.world = world
bpy.ops.object.light_add(type="SUN", rotation=(math.radians(40), math.radians(15), math.radians(30)))
bpy.context.object.data.energy = 4.0
bpy.context.object.data.angle = math.radians(8)

bpy.ops.object.camera_add(location=(0.42, -0.62, 0.34))
cam = bpy.context.object
target = (0.0, 0.0, 0.09)
d = [t - c for t, c in zip(target, cam.location)]
cam.rotation_euler = (math.atan2(math.hypot(d[0], d[1]), -d[2]), 0.0, math.atan2(d[1], d[0]) - math.pi / 2)
cam.data.lens = 42
scene.camera = cam

scene.render.engine = "CYCLES"
scene.cycles.device = "CPU"
scene.cycles.samples = int(os.environ.get("EDDY_RENDER_SAMPLES", "48"))
scene.cycles.use_denoising = False  # Debian builds Blender without OpenImageDenoise
scene.render.resolution_x, scene.render.resolution_y = 960, 540
scene.render.image_settings.file_format = "PNG"
scene.render.filepath = os.path.abspath(png)
bpy.ops.render.render(write_still=True)
print("render: wrote", scene.render.filepath)
