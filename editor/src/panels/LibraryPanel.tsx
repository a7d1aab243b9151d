// The left panel: the example graphs to open, and the node library by
// category, with a search by name or category.
import { useMemo, useState } from "react";
import type { GraphFile, NodeSpec } from "../api";
import type { Catalog } from "../graph";

export function LibraryPanel({
  files,
  catalog,
  onOpen,
  onAdd,
}: {
  files: GraphFile[];
  catalog: Catalog;
  onOpen: (path: string) => void;
  onAdd: (spec: NodeSpec) => void;
}) {
  const [search, setSearch] = useState("");
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

  return (
    <aside className="library">
      <h3>Examples</h3>
      <ul className="examples">
        {files.map((f) => (
          <li key={f.path}>
            <button data-testid={`example-${f.path}`} title={f.comment} onClick={() => onOpen(f.path)}>
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
            <button key={s.type} className="lib-node" data-testid={`lib-${s.type}`} title={s.doc} onClick={() => onAdd(s)}>
              {s.type}
            </button>
          ))}
        </div>
      ))}
    </aside>
  );
}
