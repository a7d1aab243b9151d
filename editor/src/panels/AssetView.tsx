// An asset node's contents (a subnetwork), over the canvas: its nodes and
// links as the asset file holds them, and what the asset's inputs feed, its
// outputs are and its parameters drive inside. An inner node's parameters
// (and bypass flag, and place) are edited in the panel beside it; "save"
// writes them into the asset file (validated by the server first) and
// recooks what uses the asset. "reload" reads the file again after it was
// edited elsewhere. Links and nodes are changed in the file.
import { useState } from "react";
import { applyNodeChanges, Background, ReactFlow, type NodeChange } from "@xyflow/react";
import type { AssetContents, Graph } from "../api";
import { fromGraph, toGraph, updateData, type Catalog, type EddyNode } from "../graph";
import { nodeTypes } from "./EddyNodeView";
import { ParamPanel } from "./ParamPanel";

export function AssetView({
  contents,
  catalog,
  frame,
  onClose,
  onReload,
  onSave,
  onOpenAsset,
}: {
  contents: AssetContents;
  catalog: Catalog;
  frame: number;
  onClose: () => void;
  onReload: () => void;
  onSave: (g: Graph) => void;
  onOpenAsset: (type: string) => void;
}) {
  const [initial] = useState(() => fromGraph(contents.graph, catalog));
  const [nodes, setNodes] = useState<EddyNode[]>(initial.nodes.map((n) => ({ ...n, data: { ...n.data, display: false } })));
  const [selected, setSelected] = useState<string | null>(null);
  const [dirty, setDirty] = useState(false);
  const edit = (next: EddyNode[]) => {
    setNodes(next);
    setDirty(true);
  };
  const onNodesChange = (changes: NodeChange<EddyNode>[]) => {
    setNodes((ns) => applyNodeChanges(changes, ns));
    if (changes.some((c) => c.type === "position" && !c.dragging)) setDirty(true);
    for (const c of changes) if (c.type === "select" && c.selected) setSelected(c.id);
  };
  const node = nodes.find((n) => n.id === selected);
  const { frame_range, fps } = contents.graph;
  return (
    <div className="asset-view" data-testid="asset-view">
      <header>
        <b>{contents.type}</b> contents, from <code data-testid="asset-file">{contents.file}</code>
        <button data-testid="asset-close" onClick={onClose}>
          close
        </button>
        <button data-testid="asset-reload" title="Read the asset file again (after it was edited elsewhere); what uses it recooks" onClick={onReload}>
          reload
        </button>
        <button
          data-testid="asset-save"
          disabled={!dirty}
          title="Write these contents into the asset file; what uses it recooks"
          onClick={() => onSave(toGraph(nodes, initial.edges, { frame_range, fps }))}
        >
          save
        </button>
      </header>
      <div className="asset-body">
        <div className="asset-canvas">
          <ReactFlow
            nodes={nodes}
            edges={initial.edges}
            nodeTypes={nodeTypes}
            onNodesChange={onNodesChange}
            nodesConnectable={false}
            deleteKeyCode={null}
            fitView
          >
            <Background />
          </ReactFlow>
        </div>
        <ParamPanel
          node={node}
          frame={frame}
          onBypass={(id) => edit(updateData(nodes, id, (d) => ({ bypass: !d.bypass })))}
          onParam={(id, name, value) => edit(updateData(nodes, id, (d) => ({ params: { ...d.params, [name]: value } })))}
          onOpenAsset={onOpenAsset}
          testPrefix="inner-"
        />
      </div>
      <footer data-testid="asset-ports">
        {contents.inputs.map((i) => (
          <div key={"i" + i.name}>input {i.name} → {i.to.join(", ")}</div>
        ))}
        {contents.outputs.map((o) => (
          <div key={"o" + o.name}>output {o.name} ← {o.from}</div>
        ))}
        {contents.params.map((p) => (
          <div key={"p" + p.name}>parameter {p.name} → {p.drives.join(", ")} (the asset node's value wins)</div>
        ))}
      </footer>
    </div>
  );
}
