"""Shared fixtures of the Python module's tests (run by `make test` through
ctest, with PYTHONPATH pointing at build/python)."""
import os

import pytest

import eddy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


def small_pbf(tmp_path, frames=(1, 4)):
    """A 10 cm block of water (r = 1 cm, 125 particles) falling in a box,
    built through the API."""
    g = eddy.Graph(frame_range=frames, fps=24)
    g.add("ColliderBox", "tank", mode="container", center=(0, 0.25, 0), size=(0.4, 0.5, 0.4))
    g.add("FluidBox", "water", center=(0, 0.15, 0), size=(0.1, 0.1, 0.1), particle_radius=0.01)
    g.add("PBFSolver", "solver", substeps=2)
    g.link("water.particles", "solver.particles")
    g.link("tank.colliders", "solver.colliders")
    g.output_dir = str(tmp_path / "out")
    return g


@pytest.fixture
def pbf(tmp_path):
    return small_pbf(tmp_path)
