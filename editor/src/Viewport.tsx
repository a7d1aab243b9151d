// The 3D viewport (three.js): particles as shaded sphere impostors that
// write real depth, coloured by speed; meshes with normals; orbit camera.
import { useEffect, useRef } from "react";
import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import { toCreasedNormals } from "three/examples/jsm/utils/BufferGeometryUtils.js";
import type { ColliderShape, Geometry, MeshGeometry } from "./geometry";
import { FluidRenderer } from "./fluidRender";
import { sphereFragmentPrelude, sphereSpriteVertex } from "./sprites";

// A wireframe of one collider shape at simulation time t (its centre moves
// with its velocity; it turns about its centre at its angular velocity).
function colliderWire(c: ColliderShape, t: number): THREE.LineSegments {
  let g: THREE.BufferGeometry;
  const [sx, sy, sz] = c.size;
  if (c.type === 1) g = new THREE.EdgesGeometry(new THREE.BoxGeometry(2 * sx, 2 * sy, 2 * sz));
  else if (c.type === 2) g = new THREE.WireframeGeometry(new THREE.SphereGeometry(sx, 16, 10));
  else if (c.type === 3) g = new THREE.WireframeGeometry(new THREE.SphereGeometry(1, 16, 10).scale(sx, sy, sz));
  else if (c.type === 4) g = new THREE.WireframeGeometry(new THREE.CapsuleGeometry(sx, 2 * sy, 4, 12));
  else if (c.type === 5) {
    const [nx, ny, nz] = c.gridDims;
    const e = [(nx - 1) * c.gridDx, (ny - 1) * c.gridDx, (nz - 1) * c.gridDx];
    g = new THREE.EdgesGeometry(new THREE.BoxGeometry(e[0], e[1], e[2]));
    g.translate(c.gridOrigin[0] + e[0] / 2, c.gridOrigin[1] + e[1] / 2, c.gridOrigin[2] + e[2] / 2);
  } else {
    g = new THREE.EdgesGeometry(new THREE.PlaneGeometry(4, 4, 1, 1).rotateX(-Math.PI / 2));
  }
  const r = c.rotation;
  const m = new THREE.Matrix4().set(r[0], r[1], r[2], 0, r[3], r[4], r[5], 0, r[6], r[7], r[8], 0, 0, 0, 0, 1);
  const w = new THREE.Vector3(...c.angularVelocity);
  if (w.length() > 0) m.premultiply(new THREE.Matrix4().makeRotationAxis(w.clone().normalize(), w.length() * t));
  m.setPosition(c.center[0] + c.velocity[0] * t, c.center[1] + c.velocity[1] * t, c.center[2] + c.velocity[2] * t);
  const lines = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ color: c.inside ? 0x8899aa : 0xffb74d }));
  lines.applyMatrix4(m);
  return lines;
}

const impostorFragment = /* glsl */ `
  ${sphereFragmentPrelude}
  varying vec3 vColor;
  void main() {
    vec3 n, p;
    sphereFragment(n, p);
    vec3 l = normalize(vec3(0.4, 0.8, 0.6));
    float diffuse = max(dot(n, l), 0.0);
    float spec = pow(max(dot(reflect(-l, n), vec3(0.0, 0.0, 1.0)), 0.0), 32.0);
    gl_FragColor = vec4(vColor * (0.25 + 0.75 * diffuse) + 0.3 * spec, 1.0);
  }
`;

export interface ViewportProps {
  geometry: Geometry | null;
  bodies: MeshGeometry | null; // drawn with the geometry (a liquid's bodies)
  colliders: ColliderShape[];
  time: number; // s, for moving colliders
  mode: "spheres" | "fluid"; // particles as shaded spheres, or as a screen-space liquid surface
  colorBy: string; // "speed" (|v|) or a float attribute
  message: string;
}

// A mesh as a shaded three.js object. Without normals of its own, its
// edges sharper than 60 degrees stay sharp (a box's, not a sphere's), as
// Houdini's cusp angle does.
function meshObject(geometry: MeshGeometry, color: number): THREE.Mesh {
  let g = new THREE.BufferGeometry();
  g.setAttribute("position", new THREE.BufferAttribute(new Float32Array(geometry.P), 3));
  g.setIndex(new THREE.BufferAttribute(new Uint32Array(geometry.indices), 1));
  if (geometry.N) g.setAttribute("normal", new THREE.BufferAttribute(new Float32Array(geometry.N), 3));
  else g = toCreasedNormals(g, Math.PI / 3);
  return new THREE.Mesh(g, new THREE.MeshStandardMaterial({ color, roughness: 0.2, metalness: 0.0 }));
}

function dispose(scene: THREE.Scene, o: THREE.Object3D | null) {
  if (!o) return;
  scene.remove(o);
  (o as THREE.Mesh).geometry?.dispose();
  ((o as THREE.Mesh).material as THREE.Material)?.dispose();
}

export function Viewport({ geometry, bodies, colliders, time, mode, colorBy, message }: ViewportProps) {
  const host = useRef<HTMLDivElement>(null);
  const dirty = useRef(true);
  const state = useRef<{
    renderer: THREE.WebGLRenderer;
    scene: THREE.Scene;
    camera: THREE.PerspectiveCamera;
    controls: OrbitControls;
    object: THREE.Object3D | null;
    bodies: THREE.Object3D | null;
    wires: THREE.Group;
    fluid: FluidRenderer;
    fluidOn: boolean;
    fitted: boolean;
  } | null>(null);

  useEffect(() => {
    const el = host.current!;
    const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    renderer.setPixelRatio(window.devicePixelRatio);
    renderer.setClearColor(0x1d2229);
    el.appendChild(renderer.domElement);
    const scene = new THREE.Scene();
    scene.add(new THREE.AmbientLight(0xffffff, 0.5));
    const sun = new THREE.DirectionalLight(0xffffff, 1.5);
    sun.position.set(2, 4, 3);
    scene.add(sun);
    scene.add(new THREE.GridHelper(4, 20, 0x445566, 0x2c343d));
    const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 200);
    camera.position.set(2.5, 2, 3);
    const controls = new OrbitControls(camera, renderer.domElement);
    controls.target.set(0, 0.5, 0);
    const resize = () => {
      const w = el.clientWidth, h = el.clientHeight;
      renderer.setSize(w, h, false);
      renderer.domElement.style.width = "100%";
      renderer.domElement.style.height = "100%";
      camera.aspect = w / Math.max(1, h);
      camera.updateProjectionMatrix();
      dirty.current = true;
    };
    const observer = new ResizeObserver(resize);
    observer.observe(el);
    resize();
    let frame = 0;
    // Drawn only when something changed (camera, geometry, colliders, mode,
    // size): a still viewport costs nothing, which matters with software GL.
    const loop = () => {
      frame = requestAnimationFrame(loop);
      controls.update();
      if (!dirty.current) return;
      dirty.current = false;
      const pts = state.current?.object;
      if (pts && (pts as THREE.Points).isPoints) {
        const m = (pts as THREE.Points).material as THREE.ShaderMaterial;
        m.uniforms.uScale.value = renderer.domElement.height / (2 * Math.tan((camera.fov * Math.PI) / 360));
      }
      const st = state.current;
      if (st?.object && st.fluidOn) st.object.visible = false;
      renderer.render(scene, camera);
      if (st?.fluidOn) st.fluid.render(renderer, camera);
      if (st?.object) st.object.visible = true;
    };
    controls.addEventListener("change", () => (dirty.current = true));
    loop();
    const wires = new THREE.Group();
    scene.add(wires);
    const fluid = new FluidRenderer();
    state.current = {
      renderer,
      scene,
      camera,
      controls,
      object: null,
      bodies: null,
      wires,
      fluid,
      fluidOn: false,
      fitted: false,
    };
    return () => {
      cancelAnimationFrame(frame);
      observer.disconnect();
      controls.dispose();
      fluid.dispose();
      renderer.dispose();
      el.removeChild(renderer.domElement);
    };
  }, []);

  useEffect(() => {
    if (state.current) state.current.fluidOn = mode === "fluid";
    dirty.current = true;
  }, [mode]);

  useEffect(() => {
    const s = state.current;
    if (!s) return;
    for (const w of [...s.wires.children]) {
      s.wires.remove(w);
      (w as THREE.LineSegments).geometry.dispose();
    }
    for (const c of colliders) s.wires.add(colliderWire(c, time));
    dirty.current = true;
  }, [colliders, time]);

  useEffect(() => {
    const s = state.current;
    if (!s) return;
    dirty.current = true;
    dispose(s.scene, s.object);
    s.object = null;
    s.fluid.setParticles(
      geometry && geometry.kind === "points" ? new Float32Array(geometry.P) : null,
      geometry && geometry.kind === "points" ? geometry.radius || 0.01 : 0,
    );
    if (!geometry || geometry.kind === "colliders") return;
    let object: THREE.Object3D;
    if (geometry.kind === "points") {
      const g = new THREE.BufferGeometry();
      g.setAttribute("position", new THREE.BufferAttribute(new Float32Array(geometry.P), 3));
      // Colour by speed (deep blue at rest to white at the fastest, at least
      // 2 m/s so a slow scene stays blue) or by a float attribute over its range.
      const colors = new Float32Array(geometry.count * 3);
      const value = new Float32Array(geometry.count);
      let lo = 0, hi = 2.0;
      const attr = geometry.attributes.get(colorBy);
      if (colorBy !== "speed" && attr && attr.type === "float") {
        lo = Infinity;
        hi = -Infinity;
        for (let i = 0; i < geometry.count; i++) {
          value[i] = attr.data[i];
          lo = Math.min(lo, value[i]);
          hi = Math.max(hi, value[i]);
        }
        if (!(hi > lo)) hi = lo + 1;
      } else {
        const v = geometry.attributes.get("v");
        if (v && v.type === "vec3")
          for (let i = 0; i < geometry.count; i++) {
            value[i] = Math.hypot(v.data[3 * i], v.data[3 * i + 1], v.data[3 * i + 2]);
            hi = Math.max(hi, value[i]);
          }
      }
      for (let i = 0; i < geometry.count; i++) {
        const t = (value[i] - lo) / (hi - lo);
        colors[3 * i] = 0.1 + 0.9 * t;
        colors[3 * i + 1] = 0.35 + 0.65 * t;
        colors[3 * i + 2] = 0.85 + 0.15 * t;
      }
      g.setAttribute("color", new THREE.BufferAttribute(colors, 3));
      const material = new THREE.ShaderMaterial({
        defines: { USE_SPRITE_COLOR: "" },
        vertexShader: sphereSpriteVertex,
        fragmentShader: impostorFragment,
        uniforms: { uRadius: { value: geometry.radius || 0.01 }, uScale: { value: 500 } },
      });
      object = new THREE.Points(g, material);
    } else {
      object = meshObject(geometry, 0x5fa8e8);
    }
    s.scene.add(object);
    s.object = object;
    if (!s.fitted) {
      const g = (object as THREE.Mesh).geometry;
      g.computeBoundingSphere();
      const b = g.boundingSphere;
      if (b && isFinite(b.radius) && b.radius > 0) {
        s.controls.target.copy(b.center);
        s.camera.position.copy(b.center).add(new THREE.Vector3(1, 0.8, 1.2).multiplyScalar(b.radius * 2.2));
        s.fitted = true;
      }
    }
  }, [geometry, colorBy]);

  // The bodies stepped with a liquid: green solids among its particles.
  useEffect(() => {
    const s = state.current;
    if (!s) return;
    dispose(s.scene, s.bodies);
    s.bodies = bodies ? meshObject(bodies, 0x7fae5a) : null;
    if (s.bodies) s.scene.add(s.bodies);
    dirty.current = true;
  }, [bodies]);

  return (
    <div className="viewport" data-testid="viewport">
      {/* three.js owns this element's children; React renders none into it */}
      <div className="gl" ref={host} />
      {message ? <div className="viewport-message">{message}</div> : null}
    </div>
  );
}
