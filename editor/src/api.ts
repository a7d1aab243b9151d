// The HTTP API of `eddy serve` (app/src/server.h), typed.

export interface SocketSpec {
  name: string;
  type: string;
  doc: string;
  optional: boolean;
  multi: boolean;
}
export interface ParamSpec {
  name: string;
  type: string; // float, int, bool, string, path, enum, vec3
  default: unknown;
  unit: string;
  doc: string;
  min?: number;
  max?: number;
  items?: string[];
}
export interface NodeSpec {
  type: string;
  category: string;
  doc: string;
  inputs: SocketSpec[];
  outputs: SocketSpec[];
  params: ParamSpec[];
  asset?: boolean;  // a subnetwork: its contents come from api.asset
}
export interface GraphNode {
  id: string;
  type: string;
  params: Record<string, unknown>;
  position: [number, number];
  bypass?: boolean;
}
export interface Graph {
  format: string;
  version: number;
  comment?: string;
  frame_range: [number, number];
  fps: number;
  nodes: GraphNode[];
  links: { from: string; to: string }[];
}
export interface AssetContents {
  type: string;
  file: string;  // the asset file (under the served folder when it is there)
  graph: Graph;
  inputs: { name: string; to: string[] }[];
  outputs: { name: string; from: string }[];
  params: { name: string; drives: string[] }[];
}
export interface GraphFile {
  path: string;
  comment?: string;
}
export interface Status {
  running: { job: number; node: string } | null;
  queued: number;
  cached?: Record<string, [number, number][]>;
  frame_range?: [number, number];
}
export type CookEvent = { event: string; [key: string]: unknown };

export class ApiError extends Error {
  constructor(
    public status: number,
    message: string,
    public node?: string,
  ) {
    super(message);
  }
}

// The per-run token of `eddy serve` (in the URL it prints, ?token=...):
// taken from the address on the first load, kept in the tab's session
// storage so that a reload keeps it, dropped from the address bar, and sent
// with every request as the header X-Eddy-Token.
const TOKEN_KEY = "eddy-token";
function takeToken(): string {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get("token");
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete("token");
    window.history.replaceState(null, "", url.toString());
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}
const token = takeToken();
const tokenHeader = (): Record<string, string> => (token ? { "X-Eddy-Token": token } : {});

async function call<T>(method: string, url: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? tokenHeader() : { ...tokenHeader(), "Content-Type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) {
    let message = text;
    let node: string | undefined;
    try {
      const j = JSON.parse(text);
      message = j.error ?? text;
      node = j.node;
    } catch {
      /* plain text */
    }
    throw new ApiError(res.status, message, node);
  }
  return (text ? JSON.parse(text) : {}) as T;
}

export const api = {
  catalog: () => call<NodeSpec[]>("GET", "/api/catalog"),
  graphs: () => call<GraphFile[]>("GET", "/api/graphs"),
  asset: (type: string) => call<AssetContents>("GET", `/api/asset?type=${encodeURIComponent(type)}`),
  // The selected nodes into a new asset type (its file written under assets/), in their place in the graph.
  collapse: (nodes: string[], type: string, doc: string, promote: string[]) =>
    call<Graph>("POST", "/api/asset/collapse", { nodes, type, doc, promote }),
  // An asset's file read again after it was edited; the graph recooks what changed.
  reloadAsset: (type: string) => call<Graph>("POST", "/api/asset/reload", { type }),
  // New contents (nodes, links) written into an asset's file; the graph recooks what changed.
  editAsset: (type: string, graph: Graph) => call<Graph>("PUT", "/api/asset", { type, graph }),
  open: (path: string) => call<Graph>("POST", "/api/graph/open", { path }),
  graph: () => call<Graph>("GET", "/api/graph"),
  put: (g: Graph) => call<Graph>("PUT", "/api/graph", g),
  save: (path: string) => call<{ saved: string }>("POST", "/api/graph/save", { path }),
  cook: (node: string, frames: [number, number]) => call<{ job: number }>("POST", "/api/cook", { node, frames }),
  cancel: () => call<unknown>("POST", "/api/cancel", {}),
  status: () => call<Status>("GET", "/api/status"),
  exportFiles: (node: string, frames: [number, number], path: string) =>
    call<{ files: string[]; folder: string }>("POST", "/api/export", { node, frames, path }),
  // One output of a node at a frame (the first output unless `output` names another).
  async geometry(node: string, frame: number, attributes: string[], output = ""): Promise<ArrayBuffer> {
    const q = new URLSearchParams({ node, frame: String(frame), attributes: attributes.join(",") });
    if (output) q.set("output", output);
    const res = await fetch(`/api/geometry?${q}`, { headers: tokenHeader() });
    if (!res.ok) {
      const j = await res.json().catch(() => ({ error: res.statusText }));
      throw new ApiError(res.status, j.error ?? res.statusText, j.node);
    }
    return res.arrayBuffer();
  },
  events(onEvent: (e: CookEvent) => void): EventSource {
    const es = new EventSource("/api/events");
    es.onmessage = (m) => onEvent(JSON.parse(m.data));
    return es;
  },
};
