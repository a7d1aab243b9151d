// A node on the canvas: title with id, type and cook badge, and its typed
// sockets, inputs on the left and outputs on the right.
import { Handle, Position, type NodeProps } from "@xyflow/react";
import type { SocketSpec } from "../api";
import type { Badge, EddyNode } from "../graph";

// Socket colours by type.
const SOCKET_COLORS: Record<string, string> = {
  points: "#4fc3f7",
  colliders: "#ffb74d",
  volumes: "#ba68c8",
  mesh: "#81c784",
  bodies: "#e57373",
  soft: "#f06292",
  forces: "#90a4ae",
};
const socketColor = (t: string) => SOCKET_COLORS[t] ?? "#bbbbbb";

const badgeText = (badge: Badge) =>
  badge.state === "cooking" ? "…" : badge.state === "error" ? "!" : badge.state === "cached" ? "✓" : "";

// One socket row: the handle at the node's edge, beside the socket's name.
function Socket({ node, socket, row, side }: { node: string; socket: SocketSpec; row: number; side: "in" | "out" }) {
  const input = side === "in";
  const handle = (
    <Handle
      type={input ? "target" : "source"}
      position={input ? Position.Left : Position.Right}
      id={socket.name}
      data-testid={`${side}-${node}-${socket.name}`}
      data-socket-type={socket.type}
      style={{ background: socketColor(socket.type), top: 10 }}
      title={`${socket.name}: ${socket.type}${input && socket.multi ? " (many)" : ""} — ${socket.doc}`}
    />
  );
  return (
    <div className={`socket-label ${side}`} style={{ top: row * 22 + 4 }}>
      {input && handle}
      {socket.name}
      {!input && handle}
    </div>
  );
}

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
          {badgeText(badge)}
          {badge.seconds !== undefined && badge.state !== "error" ? ` ${badge.seconds.toFixed(2)}s` : ""}
        </span>
      </div>
      <div className="eddy-node-body" style={{ height: rows * 22 + 6 }}>
        {spec.inputs.map((s, i) => (
          <Socket key={`i-${s.name}`} node={id} socket={s} row={i} side="in" />
        ))}
        {spec.outputs.map((s, i) => (
          <Socket key={`o-${s.name}`} node={id} socket={s} row={i} side="out" />
        ))}
      </div>
    </div>
  );
}

export const nodeTypes = { eddy: EddyNodeView };
