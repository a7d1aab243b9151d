// The node types the server knows, and the example graphs it offers.
import { useCallback, useEffect, useRef, useState } from "react";
import { api, type GraphFile } from "../api";
import { toCatalog, type Catalog } from "../graph";

export function useCatalog() {
  const [catalog, setCatalog] = useState<Catalog>(new Map());
  const [files, setFiles] = useState<GraphFile[]>([]);
  const ready = useRef<Promise<Catalog> | null>(null);
  // The catalog fetched (at the start, and again when an asset type was made or reloaded).
  const refresh = useCallback(() => {
    ready.current = api.catalog().then((list) => {
      const m = toCatalog(list);
      setCatalog(m);
      return m;
    });
    return ready.current;
  }, []);
  useEffect(() => {
    refresh();
    api.graphs().then(setFiles);
  }, [refresh]);
  // The catalog once it has arrived: a graph opened before it waits for it.
  const whenReady = useCallback(() => ready.current ?? refresh(), [refresh]);
  return { catalog, files, whenReady, refresh };
}
