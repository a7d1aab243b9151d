"""Graphs from Python: catalog, build, load, set, validate, save, cook."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import eddy
from conftest import EXAMPLES, ROOT, small_pbf


def test_nodes_and_specs_match_the_cli_catalog():
    types = eddy.nodes()
    cli = json.loads(subprocess.run([os.path.join(ROOT, "build", "bin", "eddy"), "nodes", "--json"],
                                    check=True, capture_output=True, text=True).stdout)
    assert set(s["type"] for s in cli) <= set(types)
    spec = eddy.node_spec("PBFSolver")
    assert spec == next(s for s in cli if s["type"] == "PBFSolver")
    substeps = next(p for p in spec["params"] if p["name"] == "substeps")
    assert substeps["type"] == "int" and substeps["default"] == 2 and substeps["min"] == 1
    assert [s["name"] for s in spec["outputs"]] == ["particles", "bodies"]
    with pytest.raises(eddy.GraphError, match='unknown node type "PbfSolver"; did you mean "PBFSolver"'):
        eddy.node_spec("PbfSolver")


def test_load_gives_the_file_as_written():
    g = eddy.load(os.path.join(EXAMPLES, "dam_break_pbf.eddy.json"))
    assert g.frame_range == (1, 120) and g.fps == 24
    assert ("solver", "PBFSolver") in g.nodes
    assert ("water.particles", "solver.particles") in g.links
    assert g.get("solver", "substeps") == 4
    assert g.get("water", "center") == [0.3, 0.6, 0.2]


def test_build_set_and_save_round_trip(tmp_path, pbf):
    pbf.set("solver", "gravity", (0, -5, 0))
    pbf.set("water", "velocity", [0, {"expr": "sin($T)"}, 0])
    pbf.set("solver", "iterations", {"keys": [[1, 2], [4, 8]], "interpolation": "linear"})
    pbf.set("solver", "device", "cpu")
    path = tmp_path / "g.eddy.json"
    pbf.save(path)
    again = eddy.load(path)
    assert again.get("solver", "gravity") == [0, -5, 0]
    assert again.get("water", "velocity")[1] == {"expr": "sin($T)"}
    assert again.get("solver", "iterations")["keys"] == [[1, 2], [4, 8]]
    assert json.loads(again.to_json())["nodes"] == json.loads(pbf.to_json())["nodes"]
    # The CLI reads what Python wrote.
    r = subprocess.run([os.path.join(ROOT, "build", "bin", "eddy"), "validate", str(path)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


def test_errors_name_the_place_as_the_cli_does(tmp_path, pbf):
    with pytest.raises(eddy.GraphError, match=r'unknown node type "FluidBx"; did you mean "FluidBox"'):
        pbf.add("FluidBx", "w2")
    with pytest.raises(eddy.GraphError, match='already has a node "water"'):
        pbf.add("FluidBox", "water")
    with pytest.raises(eddy.GraphError, match=r'PBFSolver "solver" has no parameter "substep"; did you mean "substeps"'):
        pbf.set("solver", "substep", 3)
    with pytest.raises(eddy.GraphError, match=r"substeps.*expected an integer in \[1, 1000\], got -3"):
        pbf.set("solver", "substeps", -3)
    # A node whose parameters fail is not added at all.
    with pytest.raises(eddy.GraphError):
        pbf.add("FluidBox", "w3", particle_radius=-1)
    assert "w3" not in [n for n, _ in pbf.nodes]
    with pytest.raises(eddy.GraphError, match=r'cannot connect "tank.colliders" \(colliders\) to "solver.particles"'):
        pbf.link("tank.colliders", "solver.particles")
    with pytest.raises(eddy.GraphError, match=r'already has a link'):
        pbf.link("water.particles", "solver.particles")
    assert len(pbf.links) == 2
    # validate() raises what `eddy validate` prints for the same file.
    pbf.add("PBFSolver", "lonely")
    pbf.remove("lonely")
    pbf.add("SDFToPrim", "mesher")
    path = tmp_path / "broken.eddy.json"
    with pytest.raises(eddy.GraphError) as err:
        pbf.validate()
    assert 'required input "sdf" (volumes) is not connected' in str(err.value)
    with open(path, "w") as f:
        f.write(pbf.to_json())
    cli = subprocess.run([os.path.join(ROOT, "build", "bin", "eddy"), "validate", str(path)], capture_output=True,
                         text=True)
    assert cli.returncode == 2
    with pytest.raises(eddy.GraphError) as loaded:
        eddy.load(path)
    assert str(loaded.value) in cli.stderr
    # save() refuses an invalid graph and leaves no file.
    bad = tmp_path / "never.eddy.json"
    with pytest.raises(eddy.GraphError):
        pbf.save(bad)
    assert not bad.exists()


def test_cook_gives_points_that_fall(pbf):
    first = pbf.cook("solver", 1)["particles"]
    last = pbf.cook("solver", 4)["particles"]
    assert len(first) == len(last) == 125
    assert set(["P", "v", "id", "density"]) <= set(last.attributes())
    p0, p1 = first["P"], last["P"]
    assert p0.shape == (125, 3) and p0.dtype == np.float32
    # Three frames of free fall from rest (the block starts 10 cm above the
    # floor and has not reached it by frame 4): the mean velocity is -g t,
    # exactly so for the solver's symplectic steps; the drop is g t^2 / 2
    # plus the first-order step error, g t^2 / 2 / n for n steps (n >= 2).
    t = 3 / 24
    assert first["v"][:, 1].mean() == pytest.approx(0.0, abs=1e-6)
    assert last["v"][:, 1].mean() == pytest.approx(-9.81 * t, rel=0.02)
    drop = p0[:, 1].mean() - p1[:, 1].mean()
    assert 9.81 * t * t / 2 < drop < 9.81 * t * t / 2 * 1.5
    assert last["id"].dtype == np.int32 and sorted(last["id"].tolist()) == list(range(125))


def test_cook_range_writes_the_frames_and_reports_progress(tmp_path):
    g = small_pbf(tmp_path, frames=(1, 3))
    g.add("WriteParticles", "cache", path="cache/p.$F4.ply")
    g.link("solver.particles", "cache.particles")
    calls = []
    g.cook_range(progress=lambda frame, fraction, message: calls.append((frame, fraction)))
    for f in (1, 2, 3):
        assert (tmp_path / "out" / "cache" / ("p.%04d.ply" % f)).exists()
    assert [c for c in calls if c[1] == pytest.approx(1.0)][-1][0] == 3
    fractions = [c[1] for c in calls]
    assert fractions == sorted(fractions) and 0 < fractions[0] <= 1


def test_cook_range_cancelled_from_a_callback(tmp_path):
    g = small_pbf(tmp_path, frames=(1, 6))
    g.add("WriteParticles", "cache", path="cache/p.$F4.ply")
    g.link("solver.particles", "cache.particles")
    seen = []

    def progress(frame, fraction, message):
        seen.append(frame)
        return frame < 2  # stop during frame 2

    with pytest.raises(eddy.Cancelled):
        g.cook_range(progress=progress)
    written = sorted(os.listdir(tmp_path / "out" / "cache"))
    assert written and written[0] == "p.0001.ply"
    assert "p.0006.ply" not in written and all(not w.startswith(".") for w in written)
    # A later cook goes on from where it stopped.
    g.cook_range()
    assert len(os.listdir(tmp_path / "out" / "cache")) == 6


def test_an_exception_in_a_callback_cancels_and_propagates(pbf):
    def progress(frame, fraction, message):
        raise KeyError("from the callback")
    with pytest.raises(KeyError, match="from the callback"):
        pbf.cook_range(progress=progress)


def test_cook_errors_name_the_node_and_frame(tmp_path):
    g = eddy.Graph()
    g.add("ReadMesh", "reader", path=str(tmp_path / "missing.obj"))
    with pytest.raises(eddy.CookError) as err:
        g.cook("reader", 1)
    assert err.value.node == "reader" and err.value.frame == 1
    assert "missing.obj" in str(err.value)


def test_the_gil_is_released_while_cooking(tmp_path):
    g = small_pbf(tmp_path, frames=(1, 24))
    started = threading.Event()
    done = threading.Event()

    def cook():
        try:
            g.cook_range(progress=lambda *a: started.set())
        finally:
            done.set()

    t = threading.Thread(target=cook)
    t.start()
    started.wait(60)
    spins = 0
    while not done.is_set():
        spins += 1
    t.join()
    # Python ran on this thread while C++ cooked on the other: with the GIL
    # held it would only run while the callback does (a few hundred spins).
    assert spins > 100000


def test_nodes_collapse_into_an_asset_that_cooks_as_they_did(pbf, tmp_path):
    before = pbf.cook("solver", 4)["particles"]["P"]
    path = tmp_path / "assets" / "falling_block.eddy.json"
    node = pbf.collapse(["water", "solver"], "PyFallingBlock", path, doc="a falling block",
                        promote=["water.particle_radius", "solver.substeps"])
    assert node == "py_falling_block"
    assert pbf.nodes == [("tank", "ColliderBox"), ("py_falling_block", "PyFallingBlock")]
    assert pbf.links == [("tank.colliders", "py_falling_block.colliders")]
    spec = eddy.node_spec("PyFallingBlock")
    assert [p["name"] for p in spec["params"]] == ["particle_radius", "substeps"] and spec["doc"] == "a falling block"
    assert pbf.get("py_falling_block", "substeps") == 2
    after = pbf.cook("py_falling_block", 4)["particles"]["P"]
    assert np.array_equal(before, after)  # bit for bit
    # The asset file edited (the block made twice as wide) and reloaded: the
    # same graph cooks the new contents.
    asset = json.loads(path.read_text())
    next(n for n in asset["nodes"] if n["id"] == "water")["params"]["size"] = [0.2, 0.1, 0.1]
    path.write_text(json.dumps(asset))
    eddy.reload_asset("PyFallingBlock")
    assert len(pbf.cook("py_falling_block", 4)["particles"]) == 250
    # Refused, nothing written: a taken type; a file that exists; an unknown node.
    with pytest.raises(eddy.GraphError, match="the node type exists already"):
        pbf.collapse(["tank"], "PyFallingBlock", tmp_path / "other.eddy.json")
    with pytest.raises(eddy.GraphError, match="exists already; choose another file"):
        pbf.collapse(["tank"], "PyTank", path)
    with pytest.raises(eddy.GraphError, match='the graph has no node "nope"'):
        pbf.collapse(["nope"], "PyNope", tmp_path / "nope.eddy.json")
    assert not (tmp_path / "other.eddy.json").exists() and not (tmp_path / "nope.eddy.json").exists()
    assert pbf.nodes == [("tank", "ColliderBox"), ("py_falling_block", "PyFallingBlock")]


def test_assets_beside_the_graph_are_node_types():
    g = eddy.load(os.path.join(EXAMPLES, "dam_break_sph.eddy.json"))
    assert ("surface", "LiquidSurface") in g.nodes
    spec = eddy.node_spec("LiquidSurface")
    assert spec["category"] == "Assets" and [s["name"] for s in spec["outputs"]] == ["mesh", "sdf"]
    g.set("water", "particle_radius", 0.04)  # a coarse, quick column
    g.set("surface", "voxel_size", 0.04)
    mesh = g.cook("surface", 1)["mesh"]
    assert len(mesh.vertices) > 0 and mesh.faces.max() < len(mesh.vertices)
