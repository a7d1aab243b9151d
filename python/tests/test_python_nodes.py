"""Node types written in Python, in graphs built or loaded from Python."""
import json
import os
import subprocess

import numpy as np
import pytest

import eddy
import eddy_test_nodes  # noqa: F401  (registers the Test* node types)
from conftest import ROOT, small_pbf


def test_python_nodes_are_listed_with_their_specs():
    assert "TestScaleVelocity" in eddy.nodes()
    spec = eddy.node_spec("TestScaleVelocity")
    assert spec["category"] == "Python" and spec["doc"] == "Scales v."
    assert spec["python_module"] == "eddy_test_nodes"
    assert spec["params"] == [{"name": "factor", "type": "float", "default": 2.0, "min": 0.0, "unit": "",
                               "doc": "Velocity scale"}]
    lift = eddy.node_spec("TestLift")
    assert [p["type"] for p in lift["params"]] == ["vec3", "enum"]
    assert [s["name"] for s in lift["outputs"]] == ["points", "count"]


def test_a_python_node_in_a_graph(tmp_path):
    g = small_pbf(tmp_path)
    g.add("TestScaleVelocity", "scale", factor=3.0)
    g.link("solver.particles", "scale.points")
    src = g.cook("solver", 3)["particles"]
    out = g.cook("scale", 3)["points"]
    np.testing.assert_allclose(out["v"], src["v"] * 3.0, rtol=1e-6)
    np.testing.assert_array_equal(out["P"], src["P"])
    assert out.radius == src.radius and np.all(out["frame"] == 3)
    assert out["id"].dtype == np.int32
    # Animated parameters reach the function at the frame.
    g.set("scale", "factor", {"expr": "$F"})
    np.testing.assert_allclose(g.cook("scale", 4)["points"]["v"], g.cook("solver", 4)["particles"]["v"] * 4,
                               rtol=1e-6)
    # Python output feeds C++ nodes.
    g.add("TestLift", "lift", offset=(0, 1, 0))
    g.add("WriteParticles", "write", path="lifted.$F4.ply")
    g.link("scale.points", "lift.points")
    g.link("lift.points", "write.particles")
    g.cook_range(1, 2)
    assert (tmp_path / "out" / "lifted.0002.ply").exists()
    lifted = g.cook("lift", 2)
    np.testing.assert_allclose(lifted["points"]["P"][:, 1], g.cook("solver", 2)["particles"]["P"][:, 1] + 1, atol=1e-6)
    assert len(lifted["count"]) == 1


def test_python_node_errors_name_the_node(tmp_path):
    g = small_pbf(tmp_path)
    g.add("TestFails", "bad")
    g.link("solver.particles", "bad.points")
    with pytest.raises(eddy.CookError) as err:
        g.cook("bad", 1)
    assert err.value.node == "bad" and err.value.frame == 1
    assert "ValueError: this node always fails" in str(err.value)
    assert "node 'bad' (TestFails), frame 1" in str(err.value)
    with pytest.raises(eddy.GraphError, match=r"set\(\"neg\", \"factor\"\): expected a number >= 0, got -1.0"):
        g.add("TestScaleVelocity", "neg", factor=-1.0)


def test_graph_files_name_the_python_module(tmp_path):
    g = small_pbf(tmp_path)
    g.add("TestScaleVelocity", "scale")
    g.link("solver.particles", "scale.points")
    path = tmp_path / "py.eddy.json"
    g.save(path)
    assert json.loads(path.read_text())["python_modules"] == ["eddy_test_nodes"]
    # Loaded from Python, the module is imported (it already is here) and the graph cooks.
    again = eddy.load(path)
    assert len(again.cook("scale", 2)["points"]) == 125
    # The CLI cannot run Python nodes: it says which module and how.
    r = subprocess.run([os.path.join(ROOT, "build", "bin", "eddy"), "validate", str(path)], capture_output=True,
                       text=True)
    assert r.returncode == 2
    assert 'unknown node type "TestScaleVelocity"' in r.stderr and "eddy_test_nodes" in r.stderr
    assert "eddy.load" in r.stderr


def test_load_imports_the_module_beside_the_graph(tmp_path):
    (tmp_path / "beside_nodes.py").write_text(
        "import eddy\n"
        "@eddy.node('BesideDouble', inputs={'points': 'points'}, outputs={'points': 'points'},\n"
        "           time_dependent=False)\n"
        "def double(ctx, points):\n"
        "    return {'P': points['P'] * 2, 'v': points['v']}\n")
    g = small_pbf(tmp_path)
    g.add("TestScaleVelocity", "scale")  # placeholder: rewritten to BesideDouble in the file below
    g.link("solver.particles", "scale.points")
    text = g.to_json().replace('"TestScaleVelocity"', '"BesideDouble"').replace('"factor": 2.0', "")
    doc = json.loads(text.replace(",\n        \n", "\n"))
    doc["python_modules"] = ["beside_nodes"]
    for n in doc["nodes"]:
        if n["id"] == "scale":
            n["params"] = {}
    path = tmp_path / "beside.eddy.json"
    path.write_text(json.dumps(doc))
    loaded = eddy.load(path)
    src = loaded.cook("solver", 1)["particles"]
    np.testing.assert_allclose(loaded.cook("scale", 1)["points"]["P"], src["P"] * 2)
