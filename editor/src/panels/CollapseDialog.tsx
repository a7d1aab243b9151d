// "Collapse into asset" (Houdini's collapse, then create digital asset):
// the selected nodes become a new node type, its file written under the
// served folder's assets/, and one node of it takes their place. The
// dialog names the type and picks the parameters to promote onto it.
import { useState } from "react";
import type { EddyNode } from "../graph";

export function CollapseDialog({
  nodes,
  onCollapse,
  onCancel,
}: {
  nodes: EddyNode[];
  onCollapse: (type: string, doc: string, promote: string[]) => void;
  onCancel: () => void;
}) {
  const [type, setType] = useState("MyAsset");
  const [doc, setDoc] = useState("");
  const [promote, setPromote] = useState<Set<string>>(new Set());
  const toggle = (key: string) =>
    setPromote((s) => {
      const next = new Set(s);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  return (
    <div className="collapse-dialog" data-testid="collapse-dialog">
      <header>
        Collapse {nodes.length} node{nodes.length === 1 ? "" : "s"} into a new asset
      </header>
      <label>
        type <input data-testid="collapse-type" value={type} onChange={(e) => setType(e.target.value)} />
      </label>
      <label>
        doc <input data-testid="collapse-doc" value={doc} onChange={(e) => setDoc(e.target.value)} />
      </label>
      <div className="promote">
        <div>parameters to promote onto the asset node:</div>
        {nodes.map((n) =>
          n.data.spec.params.map((p) => {
            const key = `${n.id}.${p.name}`;
            return (
              <label key={key}>
                <input type="checkbox" data-testid={`promote-${key}`} checked={promote.has(key)} onChange={() => toggle(key)} />
                {key}
              </label>
            );
          }),
        )}
      </div>
      <footer>
        <button data-testid="collapse-ok" onClick={() => onCollapse(type.trim(), doc, [...promote])}>
          collapse
        </button>
        <button onClick={onCancel}>cancel</button>
      </footer>
    </div>
  );
}
