"""Python node types for the tests (a module a graph file names in
"python_modules")."""
import numpy as np

import eddy


@eddy.node("TestScaleVelocity", inputs={"points": "points"}, outputs={"points": "points"},
           params={"factor": eddy.Param(2.0, min=0.0, doc="Velocity scale")}, doc="Scales v.")
def scale_velocity(ctx, points, factor):
    arrays = dict(points.items())
    arrays["v"] = points["v"] * factor
    arrays["frame"] = np.full(len(points), ctx.frame, dtype=np.int32)
    return arrays


@eddy.node("TestLift", inputs={"points": "points"}, outputs={"points": "points", "count": "points"},
           params={"offset": (0.0, 1.0, 0.0), "mode": eddy.Param("add", items=["add", "set"])})
def lift(ctx, points, offset, mode):
    P = points["P"] + np.array(offset, dtype=np.float32) if mode == "add" else np.tile(offset, (len(points), 1))
    out = eddy.Points({"P": P, "v": points["v"]}, radius=points.radius)
    return {"points": out, "count": {"P": np.zeros((1, 3))}}


@eddy.node("TestFails", inputs={"points": "points"}, outputs={"points": "points"})
def fails(ctx, points):
    raise ValueError("this node always fails")
