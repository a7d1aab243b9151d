"""Cooked values as numpy arrays over Eddy's memory; values built from arrays."""
import os

import numpy as np
import pytest

import eddy
from conftest import small_pbf


def test_point_arrays_view_eddys_memory(pbf):
    pts = pbf.cook("solver", 2)["particles"]
    p = pts["P"]
    # No copy: the array's data is the attribute's storage, owned by Eddy
    # (the base is Eddy's capsule), and a second view shares it.
    assert p.ctypes.data == pts.address("P")
    assert not p.flags.owndata and type(p.base).__name__ == "PyCapsule"
    assert pts["P"].ctypes.data == p.ctypes.data
    assert np.shares_memory(p, pts["P"])
    # Cooked values are shared (the cache holds them): read-only.
    assert not p.flags.writeable
    with pytest.raises(ValueError):
        p[0, 0] = 1.0
    # The view keeps the value alive after everything else lets go of it.
    again = pbf.cook("solver", 2)["particles"]
    assert again.address("P") == pts.address("P")  # the cached value, not a new cook
    before = p.copy()
    del pts, again
    pbf.set("solver", "substeps", 3)  # the cache entry for frame 2 is stale now
    pbf.cook("solver", 3)
    np.testing.assert_array_equal(p, before)
    # Scalars are (N,), vectors (N, 3).
    pts = pbf.cook("solver", 2)["particles"]
    assert pts["density"].shape == (125,) and pts["density"].dtype == np.float32
    assert pts.attribute_type("id") == "int" and pts.attribute_type("v") == "vec3"
    assert dict(pts.items()).keys() == set(pts.attributes())
    with pytest.raises(KeyError, match="no attribute 'Cd'"):
        pts["Cd"]


def test_points_from_arrays():
    P = np.random.default_rng(1).random((50, 3))
    pts = eddy.Points({"P": P, "mass": np.full(50, 2.0), "flag": np.arange(50) % 2}, radius=0.02)
    assert len(pts) == 50 and pts.radius == pytest.approx(0.02)
    np.testing.assert_allclose(pts["P"], P.astype(np.float32))
    assert pts.attribute_type("mass") == "float" and pts.attribute_type("flag") == "int"
    assert np.all(pts["v"] == 0)  # every particle set has a velocity
    with pytest.raises(eddy.Error, match=r'no "P" array'):
        eddy.Points({"v": P})
    with pytest.raises(eddy.Error, match=r'\["mass"\]: has 3 rows, "P" has 50'):
        eddy.Points({"P": P, "mass": np.ones(3)})
    with pytest.raises(eddy.Error, match=r'\["P"\]: expected shape \(N, 3\), got \(50, 2\)'):
        eddy.Points({"P": P[:, :2]})
    with pytest.raises(eddy.Error, match="does not fit a 32-bit int"):
        eddy.Points({"P": P, "big": np.full(50, 2**40)})


def test_mesh_and_volumes_from_the_surfacing_chain(tmp_path):
    g = small_pbf(tmp_path, frames=(1, 2))
    g.add("SmoothLiquidSDF", "liquid", velocity=True)
    g.add("SDFToPrim", "mesher")
    g.link("solver.particles", "liquid.particles")
    g.link("liquid.sdf", "mesher.sdf")
    mesh = g.cook("mesher", 2)["mesh"]
    v, f = mesh.vertices, mesh.faces
    assert v.shape[1] == 3 and v.dtype == np.float32 and f.shape[1] == 3 and f.dtype == np.int32
    assert f.min() >= 0 and f.max() < len(v)
    assert mesh.normals.shape == v.shape and mesh.velocities.shape == v.shape
    # The surface of a 10 cm cube of particles encloses about its volume:
    # (the surfacing tests hold the exact bounds; here, that the arrays are the mesh).
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    volume = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6
    assert 0.8e-3 < volume < 1.3e-3
    assert not v.flags.writeable
    vols = g.cook("liquid", 2)["sdf"]
    names = [d["name"] for d in vols.grids()]
    assert names == ["surface", "v"]
    path = str(tmp_path / "liquid.vdb")
    vols.save(path)
    back = eddy.read_vdb(path)
    assert [d["name"] for d in back.grids()] == names
    assert back.grids()[0]["active_voxels"] == vols.grids()[0]["active_voxels"]
    obj = str(tmp_path / "m.obj")
    mesh.save(obj)
    np.testing.assert_allclose(eddy.read_mesh(obj).vertices, v, atol=1e-5)
    with pytest.raises(eddy.Error, match="missing.vdb"):
        eddy.read_vdb(str(tmp_path / "missing.vdb"))


def test_mesh_from_arrays_checks_indices():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32)
    m = eddy.Mesh(vertices=v, faces=[[0, 1, 2]])
    assert m.faces.tolist() == [[0, 1, 2]] and m.quads.shape == (0, 4) and m.normals.shape == (0, 3)
    with pytest.raises(eddy.Error, match=r'\["faces"\]\[0\]: vertex index 3 is outside 0..2'):
        eddy.Mesh(vertices=v, faces=[[0, 1, 3]])
