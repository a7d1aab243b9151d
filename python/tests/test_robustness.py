"""What the module refuses: bad arrays, bad node declarations, a graph
changed or cooked twice while it cooks, a context kept past its cook."""
import threading

import numpy as np
import pytest

import eddy
from conftest import small_pbf


def test_bad_arrays_are_refused_naming_the_place():
    with pytest.raises(eddy.Error, match=r'eddy.Points\["P"\]: expected an array, got list \(a ragged list'):
        eddy.Points({"P": [[1, 2, 3], [4, 5]]})
    with pytest.raises(eddy.Error, match=r'eddy.Points\["P"\]: expected shape \(N, 3\), got \(\)'):
        eddy.Points({"P": 5})
    with pytest.raises(eddy.Error, match=r"eddy.Points\[\"v\"\]: points attribute 'v' exists as vec3, cannot add"):
        eddy.Points({"P": np.zeros((2, 3)), "v": np.zeros(2)})
    v = np.zeros((3, 3))
    with pytest.raises(eddy.Error, match=r'eddy.Mesh: unknown key "face"'):
        eddy.Mesh(vertices=v, face=[[0, 1, 2]])
    with pytest.raises(eddy.Error, match=r'eddy.Mesh\["faces"\]: expected integers, got an array of float64'):
        eddy.Mesh(vertices=v, faces=np.array([[0, 1, 2.5]]))
    # Empty arrays are read-only like the others.
    assert not eddy.Mesh(vertices=v).normals.flags.writeable


def test_node_declarations_are_checked():
    with pytest.raises(eddy.Error, match=r'eddy.node\("FluidBox"\): node type \'FluidBox\' exists already'):
        eddy.node("FluidBox", outputs={"particles": "points"})(lambda ctx: None)
    with pytest.raises(eddy.Error, match=r"parameter 'points' is named like the context or another input"):
        eddy.node("ClashA", inputs={"points": "points"}, outputs={"points": "points"},
                  params={"points": 1.0})(lambda ctx, points: points)
    with pytest.raises(eddy.Error, match=r"input 'ctx' is named like the context"):
        eddy.node("ClashB", inputs={"ctx": "points"}, outputs={"points": "points"})(lambda ctx: None)
    with pytest.raises(eddy.Error, match=r"socket 'p' has the unknown type 'pointz' \(types: .*points"):
        eddy.node("ClashC", inputs={"p": "pointz"}, outputs={"points": "points"})(lambda ctx, p: p)
    with pytest.raises(eddy.Error, match=r"default 5 of parameter 'n' is outside its range"):
        eddy.node("ClashD", outputs={"points": "points"}, params={"n": eddy.Param(5, min=0, max=3)})(lambda ctx, n: 0)
    assert not {"ClashA", "ClashB", "ClashC", "ClashD"} & set(eddy.nodes())


def test_a_python_node_defined_again_replaces_itself(tmp_path):
    def define(factor):
        @eddy.node("Redefined", inputs={"points": "points"}, outputs={"points": "points"})
        def f(ctx, points):
            return {"P": points["P"] * factor, "v": points["v"]}
    define(2.0)
    g = small_pbf(tmp_path)
    g.add("Redefined", "r")
    g.link("solver.particles", "r.points")
    src = g.cook("solver", 1)["particles"]["P"]
    np.testing.assert_allclose(g.cook("r", 1)["points"]["P"], src * 2)
    define(3.0)  # a module reloaded: the node, cooked again, runs the new function
    np.testing.assert_allclose(g.cook("r", 2)["points"]["P"], g.cook("solver", 2)["particles"]["P"] * 3)


def test_a_graph_is_not_changed_or_cooked_again_while_it_cooks(tmp_path):
    g = small_pbf(tmp_path, frames=(1, 24))
    # From a progress callback: refused (and the refusal ends the cook).
    with pytest.raises(eddy.Error, match=r"Graph.set: the graph is cooking"):
        g.cook_range(progress=lambda *a: g.set("solver", "substeps", 3))
    # From another thread: refused while the first cook goes on.
    started, refused = threading.Event(), []

    def cook():
        g.cook_range(progress=lambda *a: started.set())

    t = threading.Thread(target=cook)
    t.start()
    started.wait(60)
    for call in (lambda: g.cook("solver", 3), lambda: g.set("solver", "substeps", 3),
                 lambda: g.link("tank.colliders", "water.colliders")):
        try:
            call()
        except eddy.Error as e:
            refused.append(str(e))
    t.join()
    assert len(refused) == 3 and all("the graph is cooking" in r for r in refused)
    # A graph still being built refuses a cycle even with inputs left unconnected elsewhere.
    g.add("SDFToPrim", "unlinked")
    g.add("Transform", "a")
    g.add("Transform", "b")
    g.link("a.points", "b.points")
    with pytest.raises(eddy.GraphError, match=r"the graph has a cycle: a -> b -> a"):
        g.link("b.points", "a.points")


def test_cancel_between_cooks_is_not_lost(pbf):
    pbf.cancel()
    with pytest.raises(eddy.Cancelled):
        pbf.cook("solver", 2)
    assert len(pbf.cook("solver", 2)["particles"]) == 125  # the cancel was used up


def test_the_context_is_for_the_cook_only(tmp_path):
    kept = []

    @eddy.node("KeepsContext", inputs={"points": "points"}, outputs={"points": "points"})
    def keeps(ctx, points):
        kept.append(ctx)
        assert ctx.frame == 2
        return points

    g = small_pbf(tmp_path)
    g.add("KeepsContext", "k")
    g.link("solver.particles", "k.points")
    g.cook("k", 2)
    with pytest.raises(eddy.Error, match="the CookContext of node 'k' was used after its cook returned"):
        kept[0].frame
    assert kept[0].node_id == "k"


def test_check_cancel_in_a_python_node_cancels_the_cook(tmp_path):
    g = small_pbf(tmp_path)

    @eddy.node("CancelsItself", inputs={"points": "points"}, outputs={"points": "points"})
    def cancels(ctx, points):
        g.cancel()
        ctx.check_cancel()
        return points

    g.add("CancelsItself", "c")
    g.link("solver.particles", "c.points")
    with pytest.raises(eddy.Cancelled):
        g.cook("c", 1)


def test_nodes_of_a_script_are_not_saved(tmp_path):
    @eddy.node("ScriptNode", inputs={"points": "points"}, outputs={"points": "points"})
    def script_node(ctx, points):
        return points
    eddy._python_types["ScriptNode"] = "__main__"  # as when defined in a script run with python3 script.py
    g = small_pbf(tmp_path)
    g.add("ScriptNode", "s")
    g.link("solver.particles", "s.points")
    with pytest.raises(eddy.GraphError, match=r"ScriptNode is defined in a script \(__main__\)"):
        g.save(tmp_path / "never.eddy.json")
    assert not (tmp_path / "never.eddy.json").exists()
