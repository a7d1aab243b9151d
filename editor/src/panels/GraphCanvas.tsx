// The node canvas, with tools over it (children).
import type { ReactNode } from "react";
import { Background, Controls, ReactFlow, type Connection, type Edge, type EdgeChange, type NodeChange } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import type { EddyNode } from "../graph";
import { nodeTypes } from "./EddyNodeView";

export interface CanvasHandlers {
  onNodesChange: (changes: NodeChange<EddyNode>[]) => void;
  onEdgesChange: (changes: EdgeChange[]) => void;
  isValidConnection: (c: Connection | Edge) => boolean;
  onConnect: (c: Connection) => void;
}

// Clicking the canvas leaves any text field, so the shortcuts (undo, copy, paste) act on the graph.
const leaveTextField = () => (document.activeElement as HTMLElement | null)?.blur();

export function GraphCanvas({
  nodes,
  edges,
  handlers,
  onDisplay,
  children,
}: {
  nodes: EddyNode[];
  edges: Edge[];
  handlers: CanvasHandlers;
  onDisplay: (id: string) => void;
  children?: ReactNode;
}) {
  return (
    <main className="canvas" data-testid="canvas">
      {children}
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={handlers.onNodesChange}
        onEdgesChange={handlers.onEdgesChange}
        onConnect={handlers.onConnect}
        isValidConnection={handlers.isValidConnection}
        onNodeDoubleClick={(_, n) => onDisplay(n.id)}
        onPaneClick={leaveTextField}
        onNodeClick={leaveTextField}
        fitView
        deleteKeyCode={["Delete", "Backspace"]}
      >
        <Background />
        <Controls />
      </ReactFlow>
    </main>
  );
}
