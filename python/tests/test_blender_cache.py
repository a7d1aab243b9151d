"""The Blender add-on's cook-and-cache part, which has no Blender in it:
cooked frames land on disk atomically, a cancel from another thread keeps
the finished frames."""
import importlib.util
import json
import os
import threading

import numpy as np

import eddy
from conftest import ROOT, small_pbf

# The package's __init__ needs bpy; its cache module does not.
_spec = importlib.util.spec_from_file_location("eddy_blender_cache",
                                               os.path.join(ROOT, "dcc", "blender", "eddy_blender", "cache.py"))
cache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cache)


def surfaced(tmp_path, frames):
    g = small_pbf(tmp_path, frames=frames)
    g.add("SmoothLiquidSDF", "liquid")
    g.add("SDFToPrim", "mesher")
    g.link("solver.particles", "liquid.particles")
    g.link("liquid.sdf", "mesher.sdf")
    g.add("WriteParticles", "particles", path="p.$F4.ply")
    g.link("solver.particles", "particles.particles")
    return g


def test_cooker_caches_every_output_node(tmp_path):
    g = surfaced(tmp_path, (1, 2))
    c = cache.Cooker(eddy, g, str(tmp_path / "cache"), 1, 2)
    assert sorted(c.outputs) == [("mesher", "mesh", "mesh"), ("particles", "particles", "points")]
    c.run()
    assert c.error is None and c.done == 2 and not c.cancelled
    m = cache.load(cache.frame_file(c.folder, "mesher", 2, "npz"))
    mesh = g.cook("mesher", 2)["mesh"]
    np.testing.assert_array_equal(m["vertices"], mesh.vertices)
    np.testing.assert_array_equal(m["faces"], mesh.faces)
    p = cache.load(cache.frame_file(c.folder, "particles", 1, "npz"))
    assert p["P"].shape == (125, 3) and p["id"].dtype == np.int32 and float(p["__radius__"]) == np.float32(0.01)
    manifest = json.load(open(os.path.join(c.folder, "manifest.json")))
    assert manifest == {"cook": c.cook_id, "first": 1, "last": 2, "nodes": {"mesher": {"socket": "mesh", "kind": "mesh"},
                                                        "particles": {"socket": "particles", "kind": "points"}}}
    assert not [f for f in os.listdir(c.folder) if f.startswith(".")]


def test_cooker_cancelled_from_another_thread_keeps_finished_frames(tmp_path):
    g = surfaced(tmp_path, (1, 48))
    c = cache.Cooker(eddy, g, str(tmp_path / "cache"), 1, 48)
    t = threading.Thread(target=c.run)
    t.start()
    while c.done < 1 and not c.finished:
        pass
    c.cancel()
    t.join()
    assert c.cancelled and c.error is None and 1 <= c.done < 48
    manifest = json.load(open(os.path.join(c.folder, "manifest.json")))
    assert manifest["last"] == c.done  # the manifest names only complete frames
    for f in range(1, c.done + 1):
        assert os.path.exists(cache.frame_file(c.folder, "mesher", f, "npz"))
    assert not [f for f in os.listdir(c.folder) if f.startswith(".")]


def test_cooker_reports_a_graph_without_outputs(tmp_path):
    g = eddy.Graph()
    g.add("ColliderBox", "box")
    c = cache.Cooker(eddy, g, str(tmp_path / "cache"), 1, 1)
    c.run()
    assert isinstance(c.error, eddy.GraphError) and "no output node" in str(c.error)
