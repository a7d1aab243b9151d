// The editor's model of a graph: the canvas's nodes and edges, and the
// conversions to and from the server's graph document.
import type { Edge, Node } from "@xyflow/react";
import type { Graph, NodeSpec } from "./api";

export type Badge = { state: "idle" | "cooking" | "cached" | "error"; message?: string; seconds?: number };
export type EddyNodeData = {
  spec: NodeSpec;
  params: Record<string, unknown>;
  badge: Badge;
  display: boolean;
  bypass: boolean;
};
export type EddyNode = Node<EddyNodeData, "eddy">;
export type Catalog = Map<string, NodeSpec>;
export type GraphMeta = { frame_range: [number, number]; fps: number; comment?: string };

export const toCatalog = (list: NodeSpec[]): Catalog => new Map(list.map((s) => [s.type, s]));

// Whether a node has an output of one of the types.
export const hasOutput = (n: EddyNode, ...types: string[]) => n.data.spec.outputs.some((o) => types.includes(o.type));

// The nodes with the data of one changed.
export const updateData = (ns: EddyNode[], id: string, change: (d: EddyNodeData) => Partial<EddyNodeData>) =>
  ns.map((n) => (n.id === id ? { ...n, data: { ...n.data, ...change(n.data) } } : n));

// The nodes with the display flag on the one node `id` (none when undefined).
export const withDisplay = (ns: EddyNode[], id: string | undefined) =>
  ns.map((n) => ({ ...n, data: { ...n.data, display: n.id === id } }));

// The first of prefix1, prefix2, ... that no node has as its id.
export function freshId(ns: EddyNode[], prefix: string) {
  let k = 1;
  while (ns.some((n) => n.id === `${prefix}${k}`)) k++;
  return `${prefix}${k}`;
}

// An input (out false) or output socket of a node.
export function findSocket(ns: EddyNode[], node: string | null | undefined, socket: string | null | undefined, out: boolean) {
  const n = ns.find((x) => x.id === node);
  const list = out ? n?.data.spec.outputs : n?.data.spec.inputs;
  return list?.find((s) => s.name === socket);
}

// A new node of a type, with its parameters at their defaults.
export function newNode(spec: NodeSpec, ns: EddyNode[]): EddyNode {
  const params: Record<string, unknown> = {};
  for (const p of spec.params) params[p.name] = p.default;
  return {
    id: freshId(ns, spec.type.replace(/[^A-Za-z0-9]/g, "").toLowerCase()),
    type: "eddy",
    position: { x: 80 + 30 * (ns.length % 10), y: 60 + 30 * (ns.length % 10) },
    data: { spec, params, badge: { state: "idle" }, display: false, bypass: false },
  };
}

// A copy of a node, offset from it, under a fresh id.
export function copyOf(src: EddyNode, ns: EddyNode[]): EddyNode {
  return {
    ...src,
    id: freshId(ns, `${src.id}_copy`),
    position: { x: src.position.x + 40, y: src.position.y + 40 },
    selected: false,
    data: { ...src.data, badge: { state: "idle" }, display: false },
  };
}

// The canvas's view of a graph document (nodes of unknown types left out),
// and the node to display: the last that outputs points, as Houdini shows
// the last SOP.
export function fromGraph(g: Graph, catalog: Catalog) {
  const ns: EddyNode[] = g.nodes
    .filter((n) => catalog.has(n.type))
    .map((n) => ({
      id: n.id,
      type: "eddy",
      position: { x: n.position[0], y: n.position[1] },
      data: {
        spec: catalog.get(n.type)!,
        params: n.params,
        badge: { state: "idle" },
        display: false,
        bypass: !!n.bypass,
      },
    }));
  const edges: Edge[] = g.links.map((l) => {
    const [sn, ss] = l.from.split(".");
    const [tn, ts] = l.to.split(".");
    return { id: `${l.from}->${l.to}`, source: sn, sourceHandle: ss, target: tn, targetHandle: ts };
  });
  const shown = [...ns].reverse().find((n) => hasOutput(n, "points"))?.id;
  return { nodes: withDisplay(ns, shown), edges, display: shown ?? null };
}

// Animated values (docs/graph-format.md, "Animated parameters"): a number,
// or an expression or keyframes in its place (a vec3 component each).
export type Keys = { keys: [number, number][]; interpolation?: "linear" | "smooth" | "constant" };
export type Animated = number | boolean | { expr: string } | Keys;
export const isExpr = (v: unknown): v is { expr: string } => typeof v === "object" && v !== null && "expr" in v;
export const isKeys = (v: unknown): v is Keys => typeof v === "object" && v !== null && "keys" in v;

// Keyframes' value at a frame, as the graph format interpolates them
// (linear and constant exactly; smooth shown as linear between keys).
export function keysAt(k: Keys, frame: number): number {
  const ks = k.keys;
  if (frame <= ks[0][0]) return ks[0][1];
  if (frame >= ks[ks.length - 1][0]) return ks[ks.length - 1][1];
  let i = 0;
  while (ks[i + 1][0] <= frame) i++;
  const [f0, v0] = ks[i], [f1, v1] = ks[i + 1];
  return k.interpolation === "constant" ? v0 : v0 + ((frame - f0) / (f1 - f0)) * (v1 - v0);
}

// A value with a key set at `frame` to `value` (keys added to, or made).
export function withKey(v: Animated, frame: number, value: number): Keys {
  const keys = isKeys(v) ? v.keys.filter(([f]) => f !== frame) : [];
  keys.push([frame, value]);
  keys.sort((a, b) => a[0] - b[0]);
  return { keys, interpolation: isKeys(v) ? v.interpolation ?? "linear" : "linear" };
}

// The frames at which a node's parameters have keys.
export function keyFrames(params: Record<string, unknown>): number[] {
  const frames = new Set<number>();
  for (const v of Object.values(params))
    for (const c of Array.isArray(v) ? v : [v]) if (isKeys(c)) c.keys.forEach(([f]) => frames.add(f));
  return [...frames].sort((a, b) => a - b);
}

export const toGraph = (ns: EddyNode[], es: Edge[], meta: GraphMeta): Graph => ({
  format: "eddy-graph",
  // 2 reads both forms; the server writes 1 when no parameter is animated.
  version: 2,
  comment: meta.comment,
  frame_range: meta.frame_range,
  fps: meta.fps,
  nodes: ns.map((n) => ({
    id: n.id,
    type: n.data.spec.type,
    params: n.data.params,
    position: [Math.round(n.position.x), Math.round(n.position.y)],
    ...(n.data.bypass ? { bypass: true } : {}),
  })),
  links: es.map((e) => ({ from: `${e.source}.${e.sourceHandle}`, to: `${e.target}.${e.targetHandle}` })),
});
