// An asset node's contents (a subnetwork), read-only over the canvas: its
// nodes and links as the asset file holds them, and what the asset's
// inputs feed, its outputs are and its parameters drive inside. The file
// edited, "reload" reads it again and recooks what uses it.
import { Background, ReactFlow } from "@xyflow/react";
import type { AssetContents } from "../api";
import { fromGraph, type Catalog } from "../graph";
import { nodeTypes } from "./EddyNodeView";

export function AssetView({
  contents,
  catalog,
  onClose,
  onReload,
}: {
  contents: AssetContents;
  catalog: Catalog;
  onClose: () => void;
  onReload: () => void;
}) {
  const { nodes, edges } = fromGraph(contents.graph, catalog);
  return (
    <div className="asset-view" data-testid="asset-view">
      <header>
        <b>{contents.type}</b> contents, from <code data-testid="asset-file">{contents.file}</code> (read-only here: edit
        the file, then reload)
        <button data-testid="asset-close" onClick={onClose}>
          close
        </button>
        <button data-testid="asset-reload" title="Read the asset file again; what uses it recooks" onClick={onReload}>
          reload
        </button>
      </header>
      <div className="asset-canvas">
        <ReactFlow
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          fitView
        >
          <Background />
        </ReactFlow>
      </div>
      <footer data-testid="asset-ports">
        {contents.inputs.map((i) => (
          <div key={"i" + i.name}>input {i.name} → {i.to.join(", ")}</div>
        ))}
        {contents.outputs.map((o) => (
          <div key={"o" + o.name}>output {o.name} ← {o.from}</div>
        ))}
        {contents.params.map((p) => (
          <div key={"p" + p.name}>parameter {p.name} → {p.drives.join(", ")}</div>
        ))}
      </footer>
    </div>
  );
}
