// Decodes the binary geometry of GET /api/geometry (layout: app/src/geometry.h).

export interface PointsGeometry {
  kind: "points";
  count: number;
  radius: number;
  P: Float32Array;
  attributes: Map<string, { type: "float" | "int" | "vec3"; data: Float32Array | Int32Array }>;
}
export interface MeshGeometry {
  kind: "mesh";
  P: Float32Array;
  N: Float32Array | null;
  indices: Uint32Array;
}
export interface ColliderShape {
  type: number; // 0 plane, 1 box, 2 sphere, 3 ellipsoid, 4 capsule, 5 sampled grid
  inside: boolean;
  center: number[];
  rotation: number[]; // 9, rows, local to world
  size: number[];
  velocity: number[];
  angularVelocity: number[]; // rad/s, world axes, about the centre
  gridOrigin: number[];
  gridDx: number;
  gridDims: number[];
}
export interface CollidersGeometry {
  kind: "colliders";
  shapes: ColliderShape[];
}
export type Geometry = PointsGeometry | MeshGeometry | CollidersGeometry;

export function decodeGeometry(buf: ArrayBuffer): Geometry {
  const u32 = new Uint32Array(buf);
  const magic = new TextDecoder().decode(new Uint8Array(buf, 0, 4));
  if (magic !== "EDGY" || u32[1] !== 1) throw new Error("not Eddy geometry (version 1)");
  if (u32[2] === 1) {
    const count = u32[3];
    const radius = new Float32Array(buf, 16, 1)[0];
    const nattr = u32[5];
    let off = 24;
    const P = new Float32Array(buf, off, count * 3);
    off += count * 12;
    const attributes: PointsGeometry["attributes"] = new Map();
    for (let a = 0; a < nattr; a++) {
      const len = new Uint32Array(buf, off, 1)[0];
      off += 4;
      const name = new TextDecoder().decode(new Uint8Array(buf, off, len));
      off += Math.ceil(len / 4) * 4;
      const t = new Uint32Array(buf, off, 1)[0];
      off += 4;
      const comps = t === 2 ? 3 : 1;
      const data = t === 1 ? new Int32Array(buf, off, count) : new Float32Array(buf, off, count * comps);
      off += count * comps * 4;
      attributes.set(name, { type: t === 0 ? "float" : t === 1 ? "int" : "vec3", data });
    }
    return { kind: "points", count, radius, P, attributes };
  }
  if (u32[2] === 3) {
    const shapes: ColliderShape[] = [];
    const f = new Float32Array(buf);
    const i32 = new Int32Array(buf);
    for (let k = 0; k < u32[3]; k++) {
      const o = 4 + 30 * k;
      shapes.push({
        type: u32[o],
        inside: u32[o + 1] === 1,
        center: Array.from(f.subarray(o + 2, o + 5)),
        rotation: Array.from(f.subarray(o + 5, o + 14)),
        size: Array.from(f.subarray(o + 14, o + 17)),
        velocity: Array.from(f.subarray(o + 17, o + 20)),
        gridOrigin: Array.from(f.subarray(o + 20, o + 23)),
        gridDx: f[o + 23],
        gridDims: Array.from(i32.subarray(o + 24, o + 27)),
        angularVelocity: Array.from(f.subarray(o + 27, o + 30)),
      });
    }
    return { kind: "colliders", shapes };
  }
  const np = u32[3];
  const nt = u32[4];
  const hasN = u32[5] === 1;
  let off = 24;
  const P = new Float32Array(buf, off, np * 3);
  off += np * 12;
  let N: Float32Array | null = null;
  if (hasN) {
    N = new Float32Array(buf, off, np * 3);
    off += np * 12;
  }
  const indices = new Uint32Array(buf, off, nt * 3);
  return { kind: "mesh", P, N, indices };
}
