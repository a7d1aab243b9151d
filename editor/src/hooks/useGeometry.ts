// Geometry for the viewport: the display node at the current frame, and the
// graph's colliders.
import { useEffect, useMemo, useState } from "react";
import { api, ApiError, type Status } from "../api";
import { decodeGeometry, type ColliderShape, type Geometry, type MeshGeometry } from "../geometry";
import { hasOutput, type EddyNode } from "../graph";
import { cachedRanges } from "./useEvents";

// The geometry with the first of the attribute lists that the node's output
// has: points without an attribute (or a mesh) answer 400, so the next list.
function fetchGeometry(node: string, frame: number, attributes: string[][]): Promise<ArrayBuffer> {
  const [first, ...rest] = attributes;
  return api.geometry(node, frame, first).catch((e: ApiError) => {
    if (e.status === 400 && rest.length) return fetchGeometry(node, frame, rest);
    throw e;
  });
}

// The display node at a frame, once it is cooked (and again at each cook of
// it: reload), with the attribute to colour by, else what every output has;
// with `withBodies` (a liquid solver's `bodies` output) also the bodies
// stepped with it, as their shapes' mesh.
export function useDisplayGeometry(
  node: string | null,
  frame: number,
  status: Status | null,
  reload: number,
  colorBy: string,
  withBodies: boolean,
) {
  const [geometry, setGeometry] = useState<Geometry | null>(null);
  const [bodies, setBodies] = useState<MeshGeometry | null>(null);
  const [message, setMessage] = useState("");
  useEffect(() => {
    if (!node || !cachedRanges(status, node).some(([a, b]) => frame >= a && frame <= b)) {
      if (node) setMessage(`frame ${frame} of ${node} is not cooked yet`);
      return;
    }
    let live = true;
    fetchGeometry(node, frame, colorBy === "speed" ? [["v"], []] : [["v", colorBy], ["v"], []])
      .then((buf) => {
        if (!live) return;
        setGeometry(decodeGeometry(buf));
        setMessage("");
      })
      .catch((e: ApiError) => live && setMessage(e.message));
    if (withBodies)
      api
        .geometry(node, frame, [], "bodies")
        .then((buf) => {
          const g = decodeGeometry(buf);
          if (live) setBodies(g.kind === "mesh" && g.indices.length > 0 ? g : null);
        })
        .catch(() => live && setBodies(null));
    else setBodies(null);
    return () => {
      live = false;
    };
  }, [node, frame, reload, status, colorBy, withBodies]);
  return {
    geometry,
    bodies,
    message,
    clear: () => {
      setGeometry(null);
      setBodies(null);
    },
  };
}

// The colliders of the graph as wireframes: every collider node that no
// MergeColliders gathers (the merge draws its inputs already). Fetched when
// the nodes come or go, or another graph is opened.
export function useColliders(nodes: EddyNode[], frame: number, graphPath: string) {
  const [colliders, setColliders] = useState<ColliderShape[]>([]);
  const colliderNodes = useMemo(
    () =>
      nodes
        .filter((n) => hasOutput(n, "colliders") && n.data.spec.type !== "MergeColliders")
        .map((n) => n.id)
        .join(","),
    [nodes.length],
  );
  useEffect(() => {
    const ids = colliderNodes ? colliderNodes.split(",") : [];
    let live = true;
    Promise.all(
      ids.map((id) =>
        api
          .geometry(id, frame, [])
          .then((b) => decodeGeometry(b))
          .catch(() => null),
      ),
    ).then((gs) => {
      if (!live) return;
      setColliders(gs.flatMap((g) => (g && g.kind === "colliders" ? g.shapes : [])));
    });
    return () => {
      live = false;
    };
  }, [colliderNodes, graphPath]);
  return colliders;
}
