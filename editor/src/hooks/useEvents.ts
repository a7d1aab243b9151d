// The server's cook events (server-sent): node badges, messages, and the
// status of the cache, fetched again when a frame or a job is done.
import { useCallback, useEffect, useRef, useState } from "react";
import { api, type Status } from "../api";
import type { Badge } from "../graph";

// The frame ranges of a node in the cache.
export const cachedRanges = (status: Status | null, node: string | null): [number, number][] =>
  (node && status?.cached?.[node]) || [];

export function useEvents(
  frame: number,
  setBadge: (id: string, state: Badge["state"], extra?: Partial<Badge>) => void,
  setMessage: (m: string) => void,
) {
  const [status, setStatus] = useState<Status | null>(null);
  // Counts the cooks of the frame on screen, for the viewport to fetch it again.
  const [reload, setReload] = useState(0);
  const frameRef = useRef(frame);
  frameRef.current = frame;

  // A status taken while a frame cooks has no cache listing: keep the last one.
  const refreshStatus = useCallback(
    () =>
      api
        .status()
        .then((s) => setStatus((old) => (s.cached ? s : { ...s, cached: old?.cached, frame_range: old?.frame_range })))
        .catch(() => undefined),
    [],
  );
  useEffect(() => {
    const es = api.events((e) => {
      const node = e.node as string | undefined;
      if (e.event === "node_started" && node) setBadge(node, "cooking");
      if (e.event === "node_finished" && node) setBadge(node, "cached", { seconds: e.seconds as number });
      if (e.event === "node_cached" && node) setBadge(node, "cached");
      if (e.event === "error" && node) {
        setBadge(node, "error", { message: e.message as string });
        setMessage(`${node}: ${e.message}`);
      }
      if (e.event === "frame_done") {
        setMessage(`cooked frame ${e.frame}`);
        refreshStatus();
        if (e.frame === frameRef.current) setReload((r) => r + 1);
      }
      if (e.event === "job_finished") {
        setMessage(e.cancelled ? "cook cancelled" : e.failed ? "cook failed" : "cook finished");
        refreshStatus();
      }
    });
    return () => es.close();
  }, [refreshStatus, setBadge, setMessage]);

  return { status, refreshStatus, reload };
}
