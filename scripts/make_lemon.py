#!/usr/bin/env python3
"""Writes examples/assets/lemon.obj, the lemon of the water_hits_lemon example.

A surface of revolution about the x axis: half length a, radius b and a
profile rho(t) = b (1 - t^2)^0.8 for t = x / a in [-1, 1], whose exponent
above 1/2 (an ellipse) draws the two ends out into the pointed tips of a
lemon. Faces are wound counter-clockwise seen from outside. Units: metres.
"""
import math
import pathlib

A, B = 0.07, 0.045      # half length and radius, m: a kitchen lemon
RINGS, SEGMENTS = 48, 64


def main():
    pts = [(-A, 0.0, 0.0)]
    for i in range(1, RINGS):
        # Rings bunch towards the tips (t = -cos), where the curvature is.
        t = -math.cos(math.pi * i / RINGS)
        rho = B * (1.0 - t * t) ** 0.8
        for j in range(SEGMENTS):
            phi = 2.0 * math.pi * j / SEGMENTS
            pts.append((A * t, rho * math.cos(phi), rho * math.sin(phi)))
    pts.append((A, 0.0, 0.0))
    last = len(pts) - 1

    def ring(i, j):  # 1-based OBJ index of ring i (1..RINGS-1), segment j
        return 2 + (i - 1) * SEGMENTS + (j % SEGMENTS)

    faces = []
    for j in range(SEGMENTS):
        faces.append((1, ring(1, j + 1), ring(1, j)))
    for i in range(1, RINGS - 1):
        for j in range(SEGMENTS):
            faces.append((ring(i, j), ring(i, j + 1), ring(i + 1, j + 1), ring(i + 1, j)))
    for j in range(SEGMENTS):
        faces.append((last + 1, ring(RINGS - 1, j), ring(RINGS - 1, j + 1)))
    out = pathlib.Path(__file__).resolve().parent.parent / "examples" / "assets" / "lemon.obj"
    with open(out, "w") as f:
        f.write("# Eddy example asset: a lemon, %.3f m long (scripts/make_lemon.py)\n" % (2 * A))
        for p in pts:
            f.write("v %.6f %.6f %.6f\n" % p)
        for face in faces:
            f.write("f " + " ".join(str(k) for k in face) + "\n")
    print("wrote", out, len(pts), "points,", len(faces), "faces")


if __name__ == "__main__":
    main()
