// The editor: library panel, node canvas, parameter panel, viewport,
// timeline and export, over the API of `eddy serve`.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  ReactFlow,
  Background,
  Controls,
  Handle,
  Position,
  applyNodeChanges,
  applyEdgeChanges,
  type Connection,
  type Edge,
  type Node,
  type NodeChange,
  type EdgeChange,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { api, ApiError, type Graph, type GraphFile, type NodeSpec, type ParamSpec, type Status } from "./api";
import { decodeGeometry, type ColliderShape, type Geometry } from "./geometry";
import { Viewport } from "./Viewport";

// Socket colours by type.
const SOCKET_COLORS: Record<string, string> = {
  points: "#4fc3f7",
  colliders: "#ffb74d",
  volumes: "#ba68c8",
  mesh: "#81c784",
};
const socketColor = (t: string) => SOCKET_COLORS[t] ?? "#bbbbbb";

type Badge = { state: "idle" | "cooking" | "cached" | "error"; message?: string; seconds?: number };
type EddyNodeData = {
  spec: NodeSpec;
  params: Record<string, unknown>;
  badge: Badge;
  display: boolean;
  bypass: boolean;
};
type EddyNode = Node<EddyNodeData, "eddy">;

function EddyNodeView({ id, data, selected }: NodeProps<EddyNode>) {
  const { spec, badge, display } = data;
  const rows = Math.max(spec.inputs.length, spec.outputs.length);
  return (
    <div
      className={`eddy-node${selected ? " selected" : ""}${display ? " display" : ""}${data.bypass ? " bypassed" : ""}`}
      data-testid={`node-${id}`}
    >
      <div className="eddy-node-title">
        <span className="eddy-node-id">{id}</span>
        <span className="eddy-node-type">{spec.type}</span>
        <span
          className={`badge badge-${badge.state}`}
          data-testid={`badge-${id}`}
          data-state={badge.state}
          title={badge.message ?? badge.state}
        >
          {badge.state === "cooking" ? "…" : badge.state === "error" ? "!" : badge.state === "cached" ? "✓" : ""}
          {badge.seconds !== undefined && badge.state !== "error" ? ` ${badge.seconds.toFixed(2)}s` : ""}
        </span>
      </div>
      <div className="eddy-node-body" style={{ height: rows * 22 + 6 }}>
        {spec.inputs.map((s, i) => (
          <div key={`i-${s.name}`} className="socket-label in" style={{ top: i * 22 + 4 }}>
            <Handle
              type="target"
              position={Position.Left}
              id={s.name}
              data-testid={`in-${id}-${s.name}`}
              data-socket-type={s.type}
              style={{ background: socketColor(s.type), top: 10 }}
              title={`${s.name}: ${s.type}${s.multi ? " (many)" : ""} — ${s.doc}`}
            />
            {s.name}
          </div>
        ))}
        {spec.outputs.map((s, i) => (
          <div key={`o-${s.name}`} className="socket-label out" style={{ top: i * 22 + 4 }}>
            {s.name}
            <Handle
              type="source"
              position={Position.Right}
              id={s.name}
              data-testid={`out-${id}-${s.name}`}
              data-socket-type={s.type}
              style={{ background: socketColor(s.type), top: 10 }}
              title={`${s.name}: ${s.type} — ${s.doc}`}
            />
          </div>
        ))}
      </div>
    </div>
  );
}
const nodeTypes = { eddy: EddyNodeView };

interface Snapshot {
  nodes: EddyNode[];
  edges: Edge[];
}

export function App() {
  const [catalog, setCatalog] = useState<Map<string, NodeSpec>>(new Map());
  const [files, setFiles] = useState<GraphFile[]>([]);
  const [nodes, setNodes] = useState<EddyNode[]>([]);
  const [edges, setEdges] = useState<Edge[]>([]);
  const [meta, setMeta] = useState<{ frame_range: [number, number]; fps: number; comment?: string }>({
    frame_range: [1, 24],
    fps: 24,
  });
  const [selected, setSelected] = useState<string | null>(null);
  const [displayNode, setDisplayNode] = useState<string | null>(null);
  const [frame, setFrame] = useState(1);
  const [cookRange, setCookRange] = useState<[number, number]>([1, 3]);
  const [status, setStatus] = useState<Status | null>(null);
  const [message, setMessage] = useState("");
  const [geometry, setGeometry] = useState<Geometry | null>(null);
  const [viewMessage, setViewMessage] = useState("");
  const [colliders, setColliders] = useState<ColliderShape[]>([]);
  const [renderMode, setRenderMode] = useState<"spheres" | "fluid">("spheres");
  const [colorBy, setColorBy] = useState("speed");
  const [search, setSearch] = useState("");
  const [playing, setPlaying] = useState(false);
  const [exportPath, setExportPath] = useState("export/$OS.$F4.ply");
  const [exportNode, setExportNode] = useState("");  // empty: the displayed node
  const [exported, setExported] = useState<string[]>([]);
  const [savePath, setSavePath] = useState("my_graph.eddy.json");
  const [graphPath, setGraphPath] = useState("");
  const undo = useRef<Snapshot[]>([]);
  const redo = useRef<Snapshot[]>([]);
  const pushTimer = useRef<number | undefined>(undefined);
  const clipboard = useRef<EddyNode | null>(null);

  // ---- load (a graph opened before the catalog arrives waits for it)
  const catalogReady = useRef<Promise<Map<string, NodeSpec>> | null>(null);
  useEffect(() => {
    catalogReady.current = api.catalog().then((list) => {
      const m = new Map(list.map((s) => [s.type, s]));
      setCatalog(m);
      return m;
    });
    api.graphs().then(setFiles);
  }, []);

  const badgeOf = (id: string, state: Badge["state"], extra: Partial<Badge> = {}) =>
    setNodes((ns) => ns.map((n) => (n.id === id ? { ...n, data: { ...n.data, badge: { state, ...extra } } } : n)));

  const fromGraph = useCallback(
    (g: Graph, catalog: Map<string, NodeSpec>) => {
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
      const es: Edge[] = g.links.map((l) => {
        const [sn, ss] = l.from.split(".");
        const [tn, ts] = l.to.split(".");
        return { id: `${l.from}->${l.to}`, source: sn, sourceHandle: ss, target: tn, targetHandle: ts };
      });
      // Display the last node that outputs points or a mesh, as Houdini shows the last SOP.
      const shown = [...ns].reverse().find((n) => n.data.spec.outputs.some((o) => o.type === "points"));
      setNodes(ns.map((n) => ({ ...n, data: { ...n.data, display: n.id === shown?.id } })));
      setEdges(es);
      setDisplayNode(shown?.id ?? null);
      setMeta({ frame_range: g.frame_range, fps: g.fps, comment: g.comment });
      setFrame(g.frame_range[0]);
      setCookRange([g.frame_range[0], Math.min(g.frame_range[1], g.frame_range[0] + 2)]);
      undo.current = [];
      redo.current = [];
    },
    [],
  );

  const toGraph = useCallback(
    (ns: EddyNode[], es: Edge[]): Graph => ({
      format: "eddy-graph",
      version: 1,
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
    }),
    [meta],
  );

  // Every edit goes to the server (validated there); an invalid parameter
  // shows as an error badge on its node.
  const push = useCallback(
    (ns: EddyNode[], es: Edge[]) => {
      window.clearTimeout(pushTimer.current);
      pushTimer.current = window.setTimeout(async () => {
        try {
          await api.put(toGraph(ns, es));
          setMessage("graph updated");
          setNodes((cur) =>
            cur.map((n) =>
              n.data.badge.state === "error" && n.data.badge.message?.startsWith("invalid:")
                ? { ...n, data: { ...n.data, badge: { state: "idle" } } }
                : n,
            ),
          );
        } catch (e) {
          const msg = (e as Error).message;
          setMessage(msg);
          const m = /nodes\[(\d+)\]/.exec(msg);
          if (m) {
            const bad = ns[Number(m[1])];
            if (bad) badgeOf(bad.id, "error", { message: `invalid: ${msg}` });
          }
        }
      }, 120);
    },
    [toGraph],
  );

  const remember = () => {
    undo.current.push({ nodes, edges });
    if (undo.current.length > 100) undo.current.shift();
    redo.current = [];
  };
  const restore = (s: Snapshot) => {
    setNodes(s.nodes);
    setEdges(s.edges);
    push(s.nodes, s.edges);
  };

  // ---- events
  // A status taken while a frame cooks has no cache listing: keep the last one.
  const refreshStatus = useCallback(
    () =>
      api
        .status()
        .then((s) => setStatus((old) => (s.cached ? s : { ...s, cached: old?.cached, frame_range: old?.frame_range })))
        .catch(() => undefined),
    [],
  );
  useEffect(() => {
    const es = api.events((e) => {
      const node = e.node as string | undefined;
      if (e.event === "node_started" && node) badgeOf(node, "cooking");
      if (e.event === "node_finished" && node) badgeOf(node, "cached", { seconds: e.seconds as number });
      if (e.event === "node_cached" && node) badgeOf(node, "cached");
      if (e.event === "error" && node) {
        badgeOf(node, "error", { message: e.message as string });
        setMessage(`${node}: ${e.message}`);
      }
      if (e.event === "frame_done") {
        setMessage(`cooked frame ${e.frame}`);
        refreshStatus();
        if (e.frame === frameRef.current) setReload((r) => r + 1);
      }
      if (e.event === "job_finished") {
        setMessage(e.cancelled ? "cook cancelled" : e.failed ? "cook failed" : "cook finished");
        refreshStatus();
      }
    });
    return () => es.close();
  }, [refreshStatus]);

  // ---- viewport geometry of the display node at the current frame
  const frameRef = useRef(frame);
  frameRef.current = frame;
  const [reload, setReload] = useState(0);
  const isCached = (node: string | null, f: number) =>
    !!node && !!status?.cached?.[node]?.some(([a, b]) => f >= a && f <= b);
  useEffect(() => {
    if (!displayNode || !isCached(displayNode, frame)) {
      if (displayNode) setViewMessage(`frame ${frame} of ${displayNode} is not cooked yet`);
      return;
    }
    let live = true;
    const attrs = colorBy === "speed" ? ["v"] : ["v", colorBy];
    api
      .geometry(displayNode, frame, attrs)
      .catch((e: ApiError) => {
        // Points without the attribute (or a mesh): fall back to what every output has.
        if (e.status === 400 && colorBy !== "speed") return api.geometry(displayNode, frame, ["v"]);
        throw e;
      })
      .catch((e: ApiError) => {
        if (e.status === 400) return api.geometry(displayNode, frame, []);
        throw e;
      })
      .then((buf) => {
        if (!live) return;
        setGeometry(decodeGeometry(buf));
        setViewMessage("");
      })
      .catch((e: ApiError) => live && setViewMessage(e.message));
    return () => {
      live = false;
    };
  }, [displayNode, frame, reload, status, colorBy]);

  // The colliders of the graph as wireframes: every collider node that no
  // MergeColliders gathers (the merge draws its inputs already).
  const colliderNodes = useMemo(
    () =>
      nodes
        .filter((n) => n.data.spec.outputs.some((o) => o.type === "colliders") && n.data.spec.type !== "MergeColliders")
        .map((n) => n.id)
        .join(","),
    [nodes.length],
  );
  useEffect(() => {
    const ids = colliderNodes ? colliderNodes.split(",") : [];
    let live = true;
    Promise.all(
      ids.map((id) =>
        api
          .geometry(id, frame, [])
          .then((b) => decodeGeometry(b))
          .catch(() => null),
      ),
    ).then((gs) => {
      if (!live) return;
      setColliders(gs.flatMap((g) => (g && g.kind === "colliders" ? g.shapes : [])));
    });
    return () => {
      live = false;
    };
  }, [colliderNodes, graphPath]);

  // ---- playback through the cooked frames
  useEffect(() => {
    if (!playing) return;
    const t = window.setInterval(() => {
      setFrame((f) => (f >= meta.frame_range[1] ? meta.frame_range[0] : f + 1));
    }, 1000 / meta.fps);
    return () => window.clearInterval(t);
  }, [playing, meta]);

  // ---- canvas callbacks
  const onNodesChange = useCallback(
    (changes: NodeChange<EddyNode>[]) => {
      const structural = changes.some((c) => c.type === "remove" || (c.type === "position" && !c.dragging));
      setNodes((ns) => {
        const next = applyNodeChanges(changes, ns);
        if (structural) push(next, edges.filter((e) => next.some((n) => n.id === e.source) && next.some((n) => n.id === e.target)));
        return next;
      });
      for (const c of changes) if (c.type === "select" && c.selected) setSelected(c.id);
    },
    [edges, push],
  );
  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      setEdges((es) => {
        const next = applyEdgeChanges(changes, es);
        if (changes.some((c) => c.type === "remove")) push(nodes, next);
        return next;
      });
    },
    [nodes, push],
  );
  const socketType = (node: string | null | undefined, socket: string | null | undefined, out: boolean) => {
    const n = nodes.find((x) => x.id === node);
    const list = out ? n?.data.spec.outputs : n?.data.spec.inputs;
    return list?.find((s) => s.name === socket);
  };
  const isValidConnection = useCallback(
    (c: Connection | Edge) => {
      const from = socketType(c.source, c.sourceHandle, true);
      const to = socketType(c.target, c.targetHandle, false);
      return !!from && !!to && from.type === to.type && c.source !== c.target;
    },
    [nodes],
  );
  const onConnect = useCallback(
    (c: Connection) => {
      if (!isValidConnection(c)) {
        setMessage("link refused: the socket types differ");
        return;
      }
      remember();
      const to = socketType(c.target, c.targetHandle, false);
      // A single input takes one link: a new one replaces the old.
      const kept = edges.filter((e) => to?.multi || !(e.target === c.target && e.targetHandle === c.targetHandle));
      const next = [
        ...kept,
        { id: `${c.source}.${c.sourceHandle}->${c.target}.${c.targetHandle}`, ...c } as Edge,
      ];
      setEdges(next);
      push(nodes, next);
    },
    [edges, nodes, isValidConnection, push],
  );

  const addNode = (spec: NodeSpec) => {
    remember();
    let k = 1;
    const base = spec.type.replace(/[^A-Za-z0-9]/g, "").toLowerCase();
    while (nodes.some((n) => n.id === `${base}${k}`)) k++;
    const params: Record<string, unknown> = {};
    for (const p of spec.params) params[p.name] = p.default;
    const node: EddyNode = {
      id: `${base}${k}`,
      type: "eddy",
      position: { x: 80 + 30 * (nodes.length % 10), y: 60 + 30 * (nodes.length % 10) },
      data: { spec, params, badge: { state: "idle" }, display: false, bypass: false },
    };
    const next = [...nodes, node];
    setNodes(next);
    setSelected(node.id);
    push(next, edges);
  };

  const setParam = (id: string, name: string, value: unknown) => {
    remember();
    const next = nodes.map((n) => (n.id === id ? { ...n, data: { ...n.data, params: { ...n.data.params, [name]: value } } } : n));
    setNodes(next);
    push(next, edges);
  };

  const toggleBypass = (id: string) => {
    remember();
    const next = nodes.map((n) => (n.id === id ? { ...n, data: { ...n.data, bypass: !n.data.bypass } } : n));
    setNodes(next);
    push(next, edges);
  };

  const setDisplay = (id: string) => {
    setDisplayNode(id);
    setNodes((ns) => ns.map((n) => ({ ...n, data: { ...n.data, display: n.id === id } })));
  };

  // Keys: undo/redo, copy/paste, delete is the canvas's own.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).tagName === "INPUT" || (e.target as HTMLElement).tagName === "SELECT") return;
      const mod = e.ctrlKey || e.metaKey;
      if (mod && e.key.toLowerCase() === "z" && !e.shiftKey && undo.current.length) {
        redo.current.push({ nodes, edges });
        restore(undo.current.pop()!);
      } else if (mod && (e.key.toLowerCase() === "y" || (e.key.toLowerCase() === "z" && e.shiftKey)) && redo.current.length) {
        undo.current.push({ nodes, edges });
        restore(redo.current.pop()!);
      } else if (mod && e.key.toLowerCase() === "c" && selected) {
        clipboard.current = nodes.find((n) => n.id === selected) ?? null;
      } else if (mod && e.key.toLowerCase() === "v" && clipboard.current) {
        const src = clipboard.current;
        remember();
        let k = 1;
        while (nodes.some((n) => n.id === `${src.id}_copy${k}`)) k++;
        const copy: EddyNode = {
          ...src,
          id: `${src.id}_copy${k}`,
          position: { x: src.position.x + 40, y: src.position.y + 40 },
          selected: false,
          data: { ...src.data, badge: { state: "idle" }, display: false },
        };
        const next = [...nodes, copy];
        setNodes(next);
        push(next, edges);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  const openGraph = async (path: string) => {
    try {
      const [g, specs] = await Promise.all([api.open(path), catalogReady.current ?? api.catalog().then((l) => new Map(l.map((s) => [s.type, s])))]);
      fromGraph(g, specs);
      setGraphPath(path);
      setGeometry(null);
      setMessage(`opened ${path}`);
      refreshStatus();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };

  const cook = async () => {
    // Before the request: a cached frame's events can arrive before its reply.
    setMessage(`cooking frames ${cookRange[0]}-${cookRange[1]}`);
    try {
      await api.cook(displayNode ?? "", cookRange);
    } catch (e) {
      setMessage((e as Error).message);
    }
  };

  const doExport = async () => {
    const node = exportNode || displayNode;
    if (!node) return;
    try {
      const r = await api.exportFiles(node, cookRange, exportPath);
      setExported(r.files);
      setMessage(`exported ${r.files.length} file(s) to ${r.folder}`);
    } catch (e) {
      setMessage((e as Error).message);
    }
  };

  const selectedNode = nodes.find((n) => n.id === selected);
  const library = useMemo(() => {
    const q = search.trim().toLowerCase();
    const groups = new Map<string, NodeSpec[]>();
    for (const s of catalog.values()) {
      if (q && !s.type.toLowerCase().includes(q) && !s.category.toLowerCase().includes(q)) continue;
      if (!groups.has(s.category)) groups.set(s.category, []);
      groups.get(s.category)!.push(s);
    }
    return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
  }, [catalog, search]);

  const [f0, f1] = meta.frame_range;
  const span = Math.max(1, f1 - f0 + 1);
  const cachedRanges = (displayNode && status?.cached?.[displayNode]) || [];

  return (
    <div className="app">
      <aside className="library">
        <h3>Examples</h3>
        <ul className="examples">
          {files.map((f) => (
            <li key={f.path}>
              <button data-testid={`example-${f.path}`} title={f.comment} onClick={() => openGraph(f.path)}>
                {f.path}
              </button>
            </li>
          ))}
        </ul>
        <h3>Nodes</h3>
        <input
          data-testid="library-search"
          placeholder="search by name or category"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
        {library.map(([cat, specs]) => (
          <div key={cat}>
            <div className="category">{cat}</div>
            {specs.map((s) => (
              <button key={s.type} className="lib-node" data-testid={`lib-${s.type}`} title={s.doc} onClick={() => addNode(s)}>
                {s.type}
              </button>
            ))}
          </div>
        ))}
      </aside>
      <main className="canvas" data-testid="canvas">
        <ReactFlow
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          onNodesChange={onNodesChange}
          onEdgesChange={onEdgesChange}
          onConnect={onConnect}
          isValidConnection={isValidConnection}
          onNodeDoubleClick={(_, n) => setDisplay(n.id)}
          // Clicking the canvas leaves any text field, so the shortcuts (undo, copy, paste) act on the graph.
          onPaneClick={() => (document.activeElement as HTMLElement | null)?.blur()}
          onNodeClick={() => (document.activeElement as HTMLElement | null)?.blur()}
          fitView
          deleteKeyCode={["Delete", "Backspace"]}
        >
          <Background />
          <Controls />
        </ReactFlow>
      </main>
      <section className="side">
        <Viewport
          geometry={geometry}
          colliders={colliders}
          time={(frame - meta.frame_range[0]) / meta.fps}
          mode={renderMode}
          colorBy={colorBy}
          message={viewMessage}
        />
        <select
          className="color-by"
          data-testid="color-by"
          title="Colour particles by speed or by a float attribute"
          value={colorBy}
          onChange={(e) => setColorBy(e.target.value)}
        >
          {["speed", "density", "pressure", "J", "Jp"].map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
        <button
          className="render-mode"
          data-testid="render-mode"
          title="Particles as shaded spheres, or as a screen-space liquid surface"
          onClick={() => setRenderMode((m) => (m === "spheres" ? "fluid" : "spheres"))}
        >
          {renderMode === "spheres" ? "spheres" : "fluid"}
        </button>
        <div className="params" data-testid="params">
          {selectedNode ? (
            <>
              <h3>
                {selectedNode.id} <small>{selectedNode.data.spec.type}</small>
                <button data-testid="display-flag" className={selectedNode.data.display ? "on" : ""} onClick={() => setDisplay(selectedNode.id)}>
                  display
                </button>
                <button
                  data-testid="bypass-flag"
                  className={selectedNode.data.bypass ? "on" : ""}
                  title="Bypass: the node does not cook; each output passes on its first input of the same type"
                  onClick={() => toggleBypass(selectedNode.id)}
                >
                  bypass
                </button>
              </h3>
              <p className="doc">{selectedNode.data.spec.doc}</p>
              {selectedNode.data.spec.params.map((p) => (
                <ParamField
                  key={p.name}
                  spec={p}
                  value={selectedNode.data.params[p.name]}
                  onChange={(v) => setParam(selectedNode.id, p.name, v)}
                />
              ))}
            </>
          ) : (
            <p className="doc">Select a node to edit its parameters; double-click one to display it.</p>
          )}
        </div>
      </section>
      <footer className="timeline">
        <button data-testid="play" onClick={() => setPlaying((p) => !p)}>{playing ? "pause" : "play"}</button>
        <div className="slider">
          <div className="cached-bar" data-testid="cached-bar">
            {cachedRanges.map(([a, b]) => (
              <div
                key={`${a}-${b}`}
                className="cached"
                style={{ left: `${((a - f0) / span) * 100}%`, width: `${((b - a + 1) / span) * 100}%` }}
              />
            ))}
          </div>
          <input
            type="range"
            data-testid="frame-slider"
            min={f0}
            max={f1}
            value={frame}
            onChange={(e) => setFrame(Number(e.target.value))}
          />
        </div>
        <span data-testid="frame">frame {frame}</span>
        <label>
          cook
          <input type="number" data-testid="cook-first" value={cookRange[0]} onChange={(e) => setCookRange([Number(e.target.value), cookRange[1]])} />
          -
          <input type="number" data-testid="cook-last" value={cookRange[1]} onChange={(e) => setCookRange([cookRange[0], Number(e.target.value)])} />
        </label>
        <button data-testid="cook" onClick={cook}>cook</button>
        <button onClick={() => api.cancel()}>cancel</button>
        <select data-testid="export-node" value={exportNode} onChange={(e) => setExportNode(e.target.value)} title="Node to export">
          <option value="">(displayed node)</option>
          {nodes
            .filter((n) => n.data.spec.outputs.some((o) => o.type === "points" || o.type === "mesh" || o.type === "volumes"))
            .map((n) => (
              <option key={n.id} value={n.id}>
                {n.id}
              </option>
            ))}
        </select>
        <input data-testid="export-path" value={exportPath} onChange={(e) => setExportPath(e.target.value)} />
        <button data-testid="export" onClick={doExport}>export</button>
        <input value={savePath} onChange={(e) => setSavePath(e.target.value)} />
        <button onClick={() => api.save(savePath).then(() => setMessage(`saved ${savePath}`)).catch((e: Error) => setMessage(e.message))}>
          save
        </button>
        <span className="message" data-testid="message">{message}</span>
        {exported.length > 0 && <span className="exported" data-testid="exported">{exported.join(", ")}</span>}
        {graphPath && <span className="graph-path">{graphPath}</span>}
      </footer>
    </div>
  );
}

function ParamField({ spec, value, onChange }: { spec: ParamSpec; value: unknown; onChange: (v: unknown) => void }) {
  const title = `${spec.doc}${spec.unit ? ` (${spec.unit})` : ""}${spec.min !== undefined ? ` min ${spec.min}` : ""}${
    spec.max !== undefined ? ` max ${spec.max}` : ""
  }`;
  const label = (
    <span className="param-name" title={title}>
      {spec.name}
      {spec.unit && <small> {spec.unit}</small>}
    </span>
  );
  const [text, setText] = useState(String(value ?? ""));
  useEffect(() => setText(Array.isArray(value) ? value.join(", ") : String(value ?? "")), [value]);
  const testid = `param-${spec.name}`;
  if (spec.type === "bool")
    return (
      <label className="param">
        {label}
        <input type="checkbox" data-testid={testid} checked={!!value} onChange={(e) => onChange(e.target.checked)} />
      </label>
    );
  if (spec.type === "enum")
    return (
      <label className="param">
        {label}
        <select data-testid={testid} value={String(value)} onChange={(e) => onChange(e.target.value)}>
          {spec.items?.map((i) => (
            <option key={i}>{i}</option>
          ))}
        </select>
      </label>
    );
  const commit = () => {
    if (spec.type === "float" || spec.type === "int") {
      const v = Number(text);
      if (!Number.isNaN(v)) onChange(spec.type === "int" ? Math.round(v) : v);
    } else if (spec.type === "vec3") {
      const v = text.split(",").map((x) => Number(x.trim()));
      if (v.length === 3 && v.every((x) => !Number.isNaN(x))) onChange(v);
    } else {
      onChange(text);
    }
  };
  return (
    <label className="param">
      {label}
      <input
        data-testid={testid}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === "Enter" && commit()}
      />
    </label>
  );
}
