// The timeline at the foot: playback through the frames with the cached
// ranges of the display node under the slider, the cook range and cook,
// export, save, and the last message.
import { useEffect, useState, type Dispatch, type SetStateAction } from "react";
import { api } from "../api";
import { hasOutput, type EddyNode, type GraphMeta } from "../graph";

export function Timeline({
  meta,
  frame,
  setFrame,
  cookRange,
  setCookRange,
  cached,
  keys,
  displayNode,
  nodes,
  graphPath,
  message,
  setMessage,
}: {
  meta: GraphMeta;
  frame: number;
  setFrame: Dispatch<SetStateAction<number>>;
  cookRange: [number, number];
  setCookRange: (range: [number, number]) => void;
  cached: [number, number][];
  keys: number[]; // the selected node's keyframes
  displayNode: string | null;
  nodes: EddyNode[];
  graphPath: string;
  message: string;
  setMessage: (m: string) => void;
}) {
  const [playing, setPlaying] = useState(false);
  const [exportPath, setExportPath] = useState("export/$OS.$F4.ply");
  const [exportNode, setExportNode] = useState(""); // empty: the displayed node
  const [exported, setExported] = useState<string[]>([]);
  const [savePath, setSavePath] = useState("my_graph.eddy.json");

  // Playback through the cooked frames.
  useEffect(() => {
    if (!playing) return;
    const t = window.setInterval(() => {
      setFrame((f) => (f >= meta.frame_range[1] ? meta.frame_range[0] : f + 1));
    }, 1000 / meta.fps);
    return () => window.clearInterval(t);
  }, [playing, meta]);

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

  const [f0, f1] = meta.frame_range;
  const span = Math.max(1, f1 - f0 + 1);
  return (
    <footer className="timeline">
      <button data-testid="play" onClick={() => setPlaying((p) => !p)}>{playing ? "pause" : "play"}</button>
      <div className="slider">
        <div className="cached-bar" data-testid="cached-bar">
          {cached.map(([a, b]) => (
            <div
              key={`${a}-${b}`}
              className="cached"
              style={{ left: `${((a - f0) / span) * 100}%`, width: `${((b - a + 1) / span) * 100}%` }}
            />
          ))}
          {keys.map((k) => (
            <div
              key={`key-${k}`}
              className="keyframe"
              data-testid="timeline-key"
              title={`key at frame ${k}`}
              style={{ left: `${((k - f0 + 0.5) / span) * 100}%` }}
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
          .filter((n) => hasOutput(n, "points", "mesh", "volumes"))
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
  );
}
