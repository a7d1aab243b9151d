// The viewport and its display options: colour by, spheres or liquid.
import { useState } from "react";
import type { ColliderShape, Geometry, MeshGeometry } from "../geometry";
import { Viewport } from "../Viewport";

export function ViewportPanel({
  geometry,
  bodies,
  colliders,
  time,
  message,
  colorBy,
  onColorBy,
}: {
  geometry: Geometry | null;
  bodies: MeshGeometry | null;
  colliders: ColliderShape[];
  time: number;
  message: string;
  colorBy: string;
  onColorBy: (attribute: string) => void;
}) {
  const [renderMode, setRenderMode] = useState<"spheres" | "fluid">("spheres");
  return (
    <>
      <Viewport geometry={geometry} bodies={bodies} colliders={colliders} time={time} mode={renderMode} colorBy={colorBy} message={message} />
      <select
        className="color-by"
        data-testid="color-by"
        title="Colour particles by speed or by a float attribute"
        value={colorBy}
        onChange={(e) => onColorBy(e.target.value)}
      >
        {["speed", "density", "pressure", "J", "Jp"].map((a) => (
          <option key={a}>{a}</option>
        ))}
      </select>
      <button
        className="render-mode"
        data-testid="render-mode"
        title="Particles as shaded spheres, or as a screen-space liquid surface"
        onClick={() => setRenderMode((m) => (m === "spheres" ? "fluid" : "spheres"))}
      >
        {renderMode === "spheres" ? "spheres" : "fluid"}
      </button>
    </>
  );
}
