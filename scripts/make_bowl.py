#!/usr/bin/env python3
"""Writes examples/assets/bowl.obj, the bowl of the tap_into_bowl example, and
examples/assets/mould.obj, the thick-walled mould of the mpm_extruder example (MPM holds
material back at the grid nodes inside a collider, so its walls need several cells).

Each is a bowl with a rounded square plan and a wall of thickness T: its outer surface is the
lower half of a superellipsoid, x and z on the superellipse |x|^4 + |z|^4 = R^4 scaled by
sin(theta), y = -D cos(theta) for theta from the bottom (0) to the rim (pi/2); the inner
surface the same with R - T and D - T; a flat rim joins the two at y = 0. The square plan
makes a turning bowl push its water round, as a round one would only by friction. A closed
solid, faces wound counter-clockwise seen from outside the solid. Units: metres.
"""
import math
import pathlib

# name: half width R, depth D, wall T (m)
SHAPES = {"bowl": (0.2, 0.12, 0.025), "mould": (0.2, 0.16, 0.06)}
RINGS, SEGMENTS = 16, 64


def plan(phi, r):
    c, s = math.cos(phi), math.sin(phi)
    return r / (c ** 4 + s ** 4) ** 0.25


def write(name, R, D, T):
    pts, faces = [], []

    def surface(r, d):
        """A pole and RINGS rings from the bottom to the rim; returns (pole, ring index function)."""
        pole = len(pts)
        pts.append((0.0, -d, 0.0))
        first = len(pts)
        for i in range(1, RINGS + 1):
            th = 0.5 * math.pi * i / RINGS
            for j in range(SEGMENTS):
                phi = 2.0 * math.pi * j / SEGMENTS
                rho = plan(phi, r) * math.sin(th)
                pts.append((rho * math.cos(phi), -d * math.cos(th), rho * math.sin(phi)))
        return pole, lambda i, j: first + (i - 1) * SEGMENTS + (j % SEGMENTS)

    def normal(face):
        a, b, c = (pts[k] for k in face[:3])
        u = [b[m] - a[m] for m in range(3)]
        v = [c[m] - a[m] for m in range(3)]
        return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])

    def add(face, outward):
        """Adds the face wound so that its normal has a positive component along outward(centre)."""
        centre = [sum(pts[k][m] for k in face) / len(face) for m in range(3)]
        n = normal(face)
        if sum(n[m] * outward(centre)[m] for m in range(3)) < 0:
            face = tuple(reversed(face))
        faces.append(face)

    away = lambda p: p                       # the outer surface faces away from the bowl's middle
    into = lambda p: tuple(-x for x in p)    # the inner one into the hollow
    up = lambda p: (0.0, 1.0, 0.0)           # the rim faces up
    for (r, d, out) in ((R, D, away), (R - T, D - T, into)):
        pole, ring = surface(r, d)
        for j in range(SEGMENTS):
            add((pole, ring(1, j), ring(1, j + 1)), out)
        for i in range(1, RINGS):
            for j in range(SEGMENTS):
                add((ring(i, j), ring(i, j + 1), ring(i + 1, j + 1), ring(i + 1, j)), out)
        if out is away:
            outer_rim = [ring(RINGS, j) for j in range(SEGMENTS)]
        else:
            inner_rim = [ring(RINGS, j) for j in range(SEGMENTS)]
    for j in range(SEGMENTS):
        k = (j + 1) % SEGMENTS
        add((outer_rim[j], outer_rim[k], inner_rim[k], inner_rim[j]), up)

    # The solid's volume, by the divergence theorem: positive when every face is wound outward.
    volume = 0.0
    for f in faces:
        for m in range(1, len(f) - 1):
            a, b, c = pts[f[0]], pts[f[m]], pts[f[m + 1]]
            volume += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                       + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0
    assert volume > 0, volume
    out = pathlib.Path(__file__).resolve().parent.parent / "examples" / "assets" / (name + ".obj")
    with open(out, "w") as f:
        f.write("# Eddy example asset: a %s %.2f m wide, %.2f m deep, walls %.3f m (scripts/make_bowl.py)\n"
                % (name, 2 * R, D, T))
        for p in pts:
            f.write("v %.6f %.6f %.6f\n" % p)
        for face in faces:
            f.write("f " + " ".join(str(k + 1) for k in face) + "\n")
    print("wrote", out, len(pts), "points,", len(faces), "faces, %.6f m^3" % volume)


def main():
    for name, (r, d, t) in SHAPES.items():
        write(name, r, d, t)


if __name__ == "__main__":
    main()
