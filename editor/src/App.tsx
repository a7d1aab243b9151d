// The editor: library panel, node canvas, parameter panel, viewport,
// timeline and export, over the API of `eddy serve`. The pieces are in
// hooks/ (state and server traffic) and panels/ (what is drawn).
import { useState } from "react";
import { api, type AssetContents, type Graph } from "./api";
import { useCatalog } from "./hooks/useCatalog";
import { cachedRanges, useEvents } from "./hooks/useEvents";
import { useColliders, useDisplayGeometry } from "./hooks/useGeometry";
import { useGraph } from "./hooks/useGraph";
import { keyFrames } from "./graph";
import { useShortcuts } from "./hooks/useShortcuts";
import { AssetView } from "./panels/AssetView";
import { CollapseDialog } from "./panels/CollapseDialog";
import { GraphCanvas } from "./panels/GraphCanvas";
import { LibraryPanel } from "./panels/LibraryPanel";
import { ParamPanel } from "./panels/ParamPanel";
import { Timeline } from "./panels/Timeline";
import { ViewportPanel } from "./panels/ViewportPanel";

export function App() {
  const [message, setMessage] = useState("");
  const { catalog, files, whenReady, refresh: refreshCatalog } = useCatalog();
  const graph = useGraph(setMessage);
  const { nodes, meta, displayNode } = graph;
  const [frame, setFrame] = useState(1);
  const [cookRange, setCookRange] = useState<[number, number]>([1, 3]);
  const [graphPath, setGraphPath] = useState("");
  const [colorBy, setColorBy] = useState("speed");
  const [asset, setAsset] = useState<AssetContents | null>(null);
  const [collapsing, setCollapsing] = useState(false);
  const openAsset = async (type: string) => {
    try {
      setAsset(await api.asset(type));
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  // The graph as the server now has it, with the node types it now knows
  // (after an asset was made or reloaded); the undo history starts anew.
  const reloadGraph = async (g: Promise<Graph>, done: string) => {
    try {
      const next = await g;
      graph.load(next, await refreshCatalog());
      setMessage(done);
      refreshStatus();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  const collapse = (type: string, doc: string, promote: string[]) => {
    setCollapsing(false);
    const ids = graph.selectedNodes.map((n) => n.id);
    reloadGraph(api.collapse(ids, type, doc, promote), `collapsed ${ids.length} nodes into ${type}`);
  };
  // The asset view opened anew on what the server now holds.
  const reopenAsset = async (type: string, change: Promise<Graph>, done: string) => {
    await reloadGraph(change, done);
    openAsset(type);
  };
  const { status, refreshStatus, reload } = useEvents(frame, graph.setBadge, setMessage);
  // A liquid solver's bodies are drawn with its particles (a body solver's are its first output).
  const shown = nodes.find((n) => n.id === displayNode);
  const withBodies = !!shown && shown.data.spec.outputs.slice(1).some((o) => o.name === "bodies");
  const view = useDisplayGeometry(displayNode, frame, status, reload, colorBy, withBodies);
  const colliders = useColliders(nodes, frame, graphPath);
  useShortcuts(graph);

  const openGraph = async (path: string) => {
    try {
      const [g, specs] = await Promise.all([api.open(path), whenReady()]);
      graph.load(g, specs);
      setFrame(g.frame_range[0]);
      setCookRange([g.frame_range[0], Math.min(g.frame_range[1], g.frame_range[0] + 2)]);
      setGraphPath(path);
      view.clear();
      setMessage(`opened ${path}`);
      refreshStatus();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };

  return (
    <div className="app">
      <LibraryPanel files={files} catalog={catalog} onOpen={openGraph} onAdd={graph.addNode} />
      <GraphCanvas nodes={nodes} edges={graph.edges} handlers={graph.canvas} onDisplay={graph.setDisplay}>
        {graph.selectedNodes.length > 0 && !collapsing && (
          <div className="canvas-tools">
            <button data-testid="collapse" title="Make the selected nodes one node of a new asset type" onClick={() => setCollapsing(true)}>
              collapse {graph.selectedNodes.length} into an asset
            </button>
          </div>
        )}
      </GraphCanvas>
      {collapsing && <CollapseDialog nodes={graph.selectedNodes} onCollapse={collapse} onCancel={() => setCollapsing(false)} />}
      {asset && (
        <AssetView
          key={JSON.stringify(asset) /* fresh edits for each contents fetched */}
          contents={asset}
          catalog={catalog}
          frame={frame}
          onClose={() => setAsset(null)}
          onReload={() => reopenAsset(asset.type, api.reloadAsset(asset.type), `reloaded ${asset.type} from its file`)}
          onSave={(g) => reopenAsset(asset.type, api.editAsset(asset.type, g), `saved ${asset.type}'s contents`)}
          onOpenAsset={openAsset}
        />
      )}
      <section className="side">
        <ViewportPanel
          key={graphPath /* a new viewport, framed anew, for each graph opened */}
          geometry={view.geometry}
          bodies={view.bodies}
          colliders={colliders}
          time={(frame - meta.frame_range[0]) / meta.fps}
          message={view.message}
          colorBy={colorBy}
          onColorBy={setColorBy}
        />
        <ParamPanel node={graph.selectedNode} frame={frame} onDisplay={graph.setDisplay} onBypass={graph.toggleBypass} onParam={graph.setParam} onOpenAsset={openAsset} />
      </section>
      <Timeline
        meta={meta}
        frame={frame}
        setFrame={setFrame}
        cookRange={cookRange}
        setCookRange={setCookRange}
        cached={cachedRanges(status, displayNode)}
        keys={graph.selectedNode ? keyFrames(graph.selectedNode.data.params) : []}
        displayNode={displayNode}
        nodes={nodes}
        graphPath={graphPath}
        message={message}
        setMessage={setMessage}
      />
    </div>
  );
}
