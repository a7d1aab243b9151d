// The graph being edited: its nodes, links and settings, the edits made to
// it (undoable), and every edit sent on to the server.
import { useCallback, useRef, useState } from "react";
import { applyEdgeChanges, applyNodeChanges, type Connection, type Edge, type EdgeChange, type NodeChange } from "@xyflow/react";
import { api, type Graph, type NodeSpec } from "../api";
import {
  copyOf,
  findSocket,
  fromGraph,
  newNode,
  toGraph,
  updateData,
  withDisplay,
  type Badge,
  type Catalog,
  type EddyNode,
  type GraphMeta,
} from "../graph";
import { useHistory } from "./useHistory";

interface Snapshot {
  nodes: EddyNode[];
  edges: Edge[];
}

export function useGraph(setMessage: (m: string) => void) {
  const [nodes, setNodes] = useState<EddyNode[]>([]);
  const [edges, setEdges] = useState<Edge[]>([]);
  const [meta, setMeta] = useState<GraphMeta>({ frame_range: [1, 24], fps: 24 });
  const [selected, setSelected] = useState<string | null>(null);
  const [displayNode, setDisplayNode] = useState<string | null>(null);
  const history = useHistory<Snapshot>();
  const pushTimer = useRef<number | undefined>(undefined);
  const clipboard = useRef<EddyNode | null>(null);

  const setBadge = useCallback(
    (id: string, state: Badge["state"], extra: Partial<Badge> = {}) =>
      setNodes((ns) => updateData(ns, id, () => ({ badge: { state, ...extra } }))),
    [],
  );

  // Every edit goes to the server (validated there); an invalid parameter
  // shows as an error badge on its node.
  const push = useCallback(
    (ns: EddyNode[], es: Edge[]) => {
      window.clearTimeout(pushTimer.current);
      pushTimer.current = window.setTimeout(async () => {
        try {
          await api.put(toGraph(ns, es, meta));
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
            if (bad) setBadge(bad.id, "error", { message: `invalid: ${msg}` });
          }
        }
      }, 120);
    },
    [meta, setBadge, setMessage],
  );

  // A graph opened: a fresh start, without history.
  const load = useCallback(
    (g: Graph, catalog: Catalog) => {
      const shown = fromGraph(g, catalog);
      setNodes(shown.nodes);
      setEdges(shown.edges);
      setDisplayNode(shown.display);
      setMeta({ frame_range: g.frame_range, fps: g.fps, comment: g.comment });
      history.clear();
    },
    [history],
  );

  const remember = () => history.remember({ nodes, edges });
  const restore = (s: Snapshot | undefined) => {
    if (!s) return;
    setNodes(s.nodes);
    setEdges(s.edges);
    push(s.nodes, s.edges);
  };
  // An undoable change of the nodes.
  const edit = (next: EddyNode[]) => {
    remember();
    setNodes(next);
    push(next, edges);
  };

  // ---- the canvas's callbacks
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
  const isValidConnection = useCallback(
    (c: Connection | Edge) => {
      const from = findSocket(nodes, c.source, c.sourceHandle, true);
      const to = findSocket(nodes, c.target, c.targetHandle, false);
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
      const to = findSocket(nodes, c.target, c.targetHandle, false);
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

  // ---- edits
  const addNode = (spec: NodeSpec) => {
    const node = newNode(spec, nodes);
    edit([...nodes, node]);
    setSelected(node.id);
  };
  const setParam = (id: string, name: string, value: unknown) =>
    edit(updateData(nodes, id, (d) => ({ params: { ...d.params, [name]: value } })));
  const toggleBypass = (id: string) => edit(updateData(nodes, id, (d) => ({ bypass: !d.bypass })));
  const setDisplay = (id: string) => {
    setDisplayNode(id);
    setNodes((ns) => withDisplay(ns, id));
  };
  const undo = () => restore(history.undo({ nodes, edges }));
  const redo = () => restore(history.redo({ nodes, edges }));
  const copy = () => {
    if (selected) clipboard.current = nodes.find((n) => n.id === selected) ?? null;
  };
  const paste = () => {
    if (clipboard.current) edit([...nodes, copyOf(clipboard.current, nodes)]);
  };

  return {
    nodes,
    edges,
    meta,
    displayNode,
    selectedNode: nodes.find((n) => n.id === selected),
    selectedNodes: nodes.filter((n) => n.selected),
    setBadge,
    load,
    canvas: { onNodesChange, onEdgesChange, isValidConnection, onConnect },
    addNode,
    setParam,
    toggleBypass,
    setDisplay,
    undo,
    redo,
    copy,
    paste,
  };
}
