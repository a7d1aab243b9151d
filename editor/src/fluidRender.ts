// Screen-space fluid rendering (after van der Laan et al. 2009, "Screen
// space fluid rendering with curvature flow", with a bilateral filter in
// place of the curvature flow), so a particle simulation can be judged as
// liquid before it is surfaced:
//   1. sphere sprites write their view-space depth (and real depth)
//   2. their thickness is summed with additive blending
//   3. the depth is smoothed by a separable bilateral blur (two passes)
//   4. a full-screen pass rebuilds normals from the smoothed depth and
//      shades with Fresnel reflection and Beer-Lambert absorption through
//      the thickness, writing the smoothed depth so colliders and the grid
//      still occlude it.
import * as THREE from "three";
import { sphereFragmentPrelude, sphereSpriteVertex } from "./sprites";

const depthFragment = /* glsl */ `
  ${sphereFragmentPrelude}
  void main() {
    vec3 n, p;
    sphereFragment(n, p);
    gl_FragColor = vec4(-p.z, 0.0, 0.0, 1.0);
  }
`;
const thicknessFragment = /* glsl */ `
  uniform float uRadius;
  void main() {
    vec2 q = gl_PointCoord * 2.0 - 1.0;
    float d2 = dot(q, q);
    if (d2 > 1.0) discard;
    gl_FragColor = vec4(2.0 * uRadius * sqrt(1.0 - d2), 0.0, 0.0, 1.0);
  }
`;
const quadVertex = /* glsl */ `
  varying vec2 vUv;
  void main() {
    vUv = uv;
    gl_Position = vec4(position.xy, 0.0, 1.0);
  }
`;
const blurFragment = /* glsl */ `
  uniform sampler2D uDepth;
  uniform vec2 uStep;        // one texel along the blur direction
  uniform float uWorldRadius; // filter radius in metres (a few particle radii)
  uniform float uScale;      // pixels per metre at distance 1
  uniform float uRange;      // depth difference (m) that halves a sample's weight
  varying vec2 vUv;
  void main() {
    float d0 = texture2D(uDepth, vUv).r;
    if (d0 <= 0.0) { gl_FragColor = vec4(0.0); return; }
    // The filter covers the same few particle radii near and far.
    float uRadiusPx = clamp(uWorldRadius * uScale / d0, 1.0, 32.0);
    float sum = 0.0, wsum = 0.0;
    float sigma = max(uRadiusPx / 2.0, 1.0);
    for (int i = -12; i <= 12; i++) {
      float x = float(i) * max(uRadiusPx / 12.0, 1.0);
      float d = texture2D(uDepth, vUv + uStep * x).r;
      if (d <= 0.0) continue;
      float r = (d - d0) / uRange;
      float w = exp(-x * x / (2.0 * sigma * sigma)) * exp(-r * r);
      sum += d * w;
      wsum += w;
    }
    gl_FragColor = vec4(sum / wsum, 0.0, 0.0, 1.0);
  }
`;
const shadeFragment = /* glsl */ `
  uniform sampler2D uDepth;
  uniform sampler2D uThickness;
  uniform mat4 uProjection;
  uniform vec2 uTexel;
  uniform float uTanHalfFov;
  uniform float uAspect;
  uniform float uRadius;     // particle radius (m)
  uniform float uScale;      // pixels per metre at distance 1
  varying vec2 vUv;
  vec3 viewPos(vec2 uv) {
    float z = texture2D(uDepth, uv).r;
    vec2 ndc = uv * 2.0 - 1.0;
    return vec3(ndc.x * uTanHalfFov * uAspect * z, ndc.y * uTanHalfFov * z, -z);
  }
  void main() {
    float z = texture2D(uDepth, vUv).r;
    if (z <= 0.0) discard;
    vec3 p = viewPos(vUv);
    // Normals from the smaller of the two one-sided differences (no smearing across silhouettes).
    vec3 dxp = viewPos(vUv + vec2(uTexel.x, 0.0)) - p, dxm = p - viewPos(vUv - vec2(uTexel.x, 0.0));
    vec3 dyp = viewPos(vUv + vec2(0.0, uTexel.y)) - p, dym = p - viewPos(vUv - vec2(0.0, uTexel.y));
    vec3 dx = abs(dxp.z) < abs(dxm.z) ? dxp : dxm;
    vec3 dy = abs(dyp.z) < abs(dym.z) ? dyp : dym;
    vec3 n = normalize(cross(dx, dy));
    vec3 v = normalize(-p);
    if (dot(n, v) < 0.0) n = -n;
    // The summed thickness beats with the sprites' lattice (a moire on a
    // block at rest): averaged over about a particle spacing on screen.
    float step = max(2.0 * uRadius * uScale / z / 2.0, 1.0);
    float thickness = 0.0, tw = 0.0;
    for (int j = -2; j <= 2; j++)
      for (int i = -2; i <= 2; i++) {
        float w = exp(-0.5 * float(i * i + j * j));
        thickness += w * texture2D(uThickness, vUv + vec2(float(i), float(j)) * step * uTexel).r;
        tw += w;
      }
    thickness /= tw;
    vec3 absorbed = exp(-vec3(6.0, 2.2, 1.0) * thickness * 4.0);  // water-blue Beer-Lambert
    vec3 deep = vec3(0.02, 0.08, 0.16);
    vec3 body = mix(deep, vec3(0.55, 0.8, 0.95), absorbed);
    float fresnel = 0.02 + 0.98 * pow(1.0 - max(dot(n, v), 0.0), 5.0);
    vec3 l = normalize(vec3(0.4, 0.8, 0.6));
    float spec = pow(max(dot(reflect(-l, n), v), 0.0), 60.0);
    vec3 sky = vec3(0.7, 0.8, 0.9);
    vec3 color = mix(body, sky, fresnel) + 0.8 * spec;
    vec4 clip = uProjection * vec4(p, 1.0);
    gl_FragDepth = 0.5 * (clip.z / clip.w) + 0.5;
    gl_FragColor = vec4(color, 1.0);
  }
`;

// Seen at a slant, a lattice of spheres leaves pixels between the front
// ones that see a sphere a layer deeper; the filter cannot fill such a
// one-pixel pit, and its rim shades as a specular speck. Depth sprites a
// little larger than the particles close the gaps (measured on the browser
// test's block: 183 specks at 1.0, 24 at 1.3). The surface drawn moves 0.3
// radii towards the viewer and its outline out by as much, within the
// filter's range of two radii.
const kDepthSpriteScale = 1.3;

export class FluidRenderer {
  private depth: THREE.WebGLRenderTarget;
  private blurA: THREE.WebGLRenderTarget;
  private blurB: THREE.WebGLRenderTarget;
  private thick: THREE.WebGLRenderTarget;
  private depthMat: THREE.ShaderMaterial;
  private thickMat: THREE.ShaderMaterial;
  private blurMat: THREE.ShaderMaterial;
  private shadeMat: THREE.ShaderMaterial;
  private quadScene = new THREE.Scene();
  private quadCam = new THREE.OrthographicCamera(-1, 1, 1, -1, 0, 1);
  private quad: THREE.Mesh;
  private spriteScene = new THREE.Scene();
  private sprites: THREE.Points | null = null;
  private radius = 0.01;  // the particles' (m)

  constructor() {
    // Depths in full floats: half floats step by a millimetre at a metre and a
    // half, which the normals (differences of neighbouring pixels) turn into noise.
    const opts = { type: THREE.FloatType, format: THREE.RedFormat, depthBuffer: false } as const;
    this.depth = new THREE.WebGLRenderTarget(1, 1, { type: THREE.FloatType, format: THREE.RedFormat, depthBuffer: true });
    this.blurA = new THREE.WebGLRenderTarget(1, 1, opts);
    this.blurB = new THREE.WebGLRenderTarget(1, 1, opts);
    this.thick = new THREE.WebGLRenderTarget(1, 1, { type: THREE.HalfFloatType, format: THREE.RedFormat, depthBuffer: false });
    // The two sprite passes share their scale; the depth sprites are
    // kDepthSpriteScale times the particles, the thickness ones the particles.
    const scale = { value: 500 };
    const spriteMaterial = (fragmentShader: string, extra: THREE.ShaderMaterialParameters = {}) =>
      new THREE.ShaderMaterial({
        vertexShader: sphereSpriteVertex,
        fragmentShader,
        uniforms: { uRadius: { value: 0.01 }, uScale: scale },
        ...extra,
      });
    this.depthMat = spriteMaterial(depthFragment);
    this.thickMat = spriteMaterial(thicknessFragment, {
      blending: THREE.AdditiveBlending,
      depthTest: false,
      depthWrite: false,
      transparent: true,
    });
    // The screen passes draw one full-screen quad; only the last (shading) writes depth.
    const quadMaterial = (fragmentShader: string, uniforms: Record<string, THREE.IUniform>, depth: boolean) =>
      new THREE.ShaderMaterial({ vertexShader: quadVertex, fragmentShader, uniforms, depthTest: depth, depthWrite: depth });
    this.blurMat = quadMaterial(
      blurFragment,
      {
        uDepth: { value: null },
        uStep: { value: new THREE.Vector2() },
        uWorldRadius: { value: 0.03 },
        uScale: { value: 500 },
        uRange: { value: 0.02 },
      },
      false,
    );
    this.shadeMat = quadMaterial(
      shadeFragment,
      {
        uDepth: { value: null },
        uThickness: { value: null },
        uProjection: { value: new THREE.Matrix4() },
        uTexel: { value: new THREE.Vector2() },
        uTanHalfFov: { value: 1 },
        uAspect: { value: 1 },
        uRadius: { value: 0.01 },
        uScale: { value: 500 },
      },
      true,
    );
    this.quad = new THREE.Mesh(new THREE.PlaneGeometry(2, 2), this.blurMat);
    this.quad.frustumCulled = false;
    this.quadScene.add(this.quad);
  }

  // The particles to draw (positions and radius), or none.
  setParticles(positions: Float32Array | null, radius: number) {
    if (this.sprites) {
      this.spriteScene.remove(this.sprites);
      this.sprites.geometry.dispose();
      this.sprites = null;
    }
    if (!positions) return;
    const g = new THREE.BufferGeometry();
    g.setAttribute("position", new THREE.BufferAttribute(positions, 3));
    this.sprites = new THREE.Points(g, this.depthMat);
    this.spriteScene.add(this.sprites);
    this.radius = radius;
    this.depthMat.uniforms.uRadius.value = radius * kDepthSpriteScale;
    this.thickMat.uniforms.uRadius.value = radius;
  }

  // Renders the fluid over what the renderer holds (the scene drawn first).
  render(renderer: THREE.WebGLRenderer, camera: THREE.PerspectiveCamera) {
    if (!this.sprites) return;
    const size = renderer.getDrawingBufferSize(new THREE.Vector2());
    for (const t of [this.depth, this.blurA, this.blurB, this.thick])
      if (t.width !== size.x || t.height !== size.y) t.setSize(size.x, size.y);
    this.depthMat.uniforms.uScale.value = size.y / (2 * Math.tan((camera.fov * Math.PI) / 360));
    const clear = renderer.getClearColor(new THREE.Color());
    const alpha = renderer.getClearAlpha();
    const autoClear = renderer.autoClear;
    renderer.setClearColor(0x000000, 0);
    // 1. depth, 2. thickness
    this.sprites.material = this.depthMat;
    renderer.setRenderTarget(this.depth);
    renderer.clear(true, true, true);
    renderer.render(this.spriteScene, camera);
    this.sprites.material = this.thickMat;
    renderer.setRenderTarget(this.thick);
    renderer.clear(true, true, true);
    renderer.render(this.spriteScene, camera);
    // 3. bilateral blur, horizontal then vertical
    const r = this.radius;
    this.quad.material = this.blurMat;
    this.blurMat.uniforms.uWorldRadius.value = 4 * r;
    this.blurMat.uniforms.uScale.value = this.depthMat.uniforms.uScale.value;
    this.blurMat.uniforms.uRange.value = 2 * r;
    this.blurMat.uniforms.uDepth.value = this.depth.texture;
    this.blurMat.uniforms.uStep.value.set(1 / size.x, 0);
    renderer.setRenderTarget(this.blurA);
    renderer.render(this.quadScene, this.quadCam);
    this.blurMat.uniforms.uDepth.value = this.blurA.texture;
    this.blurMat.uniforms.uStep.value.set(0, 1 / size.y);
    renderer.setRenderTarget(this.blurB);
    renderer.render(this.quadScene, this.quadCam);
    // 4. shade onto the screen, depth-tested against the scene
    renderer.setRenderTarget(null);
    renderer.setClearColor(clear, alpha);
    renderer.autoClear = false;
    this.quad.material = this.shadeMat;
    const u = this.shadeMat.uniforms;
    u.uDepth.value = this.blurB.texture;
    u.uThickness.value = this.thick.texture;
    u.uProjection.value.copy(camera.projectionMatrix);
    u.uTexel.value.set(1 / size.x, 1 / size.y);
    u.uTanHalfFov.value = Math.tan((camera.fov * Math.PI) / 360);
    u.uAspect.value = camera.aspect;
    u.uRadius.value = r;
    u.uScale.value = this.depthMat.uniforms.uScale.value;
    renderer.render(this.quadScene, this.quadCam);
    renderer.autoClear = autoClear;
  }

  dispose() {
    this.setParticles(null, 0);
    for (const t of [this.depth, this.blurA, this.blurB, this.thick]) t.dispose();
    for (const m of [this.depthMat, this.thickMat, this.blurMat, this.shadeMat]) m.dispose();
    this.quad.geometry.dispose();
  }
}
