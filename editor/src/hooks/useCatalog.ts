// The node types the server knows, and the example graphs it offers.
import { useCallback, useEffect, useRef, useState } from "react";
import { api, type GraphFile } from "../api";
import { toCatalog, type Catalog } from "../graph";

export function useCatalog() {
  const [catalog, setCatalog] = useState<Catalog>(new Map());
  const [files, setFiles] = useState<GraphFile[]>([]);
  const ready = useRef<Promise<Catalog> | null>(null);
  useEffect(() => {
    ready.current = api.catalog().then((list) => {
      const m = toCatalog(list);
      setCatalog(m);
      return m;
    });
    api.graphs().then(setFiles);
  }, []);
  // The catalog once it has arrived: a graph opened before it waits for it.
  const whenReady = useCallback(() => ready.current ?? api.catalog().then(toCatalog), []);
  // The catalog fetched again (an asset type made or reloaded).
  const refresh = useCallback(() => {
    ready.current = api.catalog().then((list) => {
      const m = toCatalog(list);
      setCatalog(m);
      return m;
    });
    return ready.current;
  }, []);
  return { catalog, files, whenReady, refresh };
}
