// Sphere sprites: points drawn as screen-facing discs whose fragments are
// lifted onto the sphere they stand for (view-space normal and position),
// writing that depth, so spheres intersect each other and the scene
// correctly. Shared by the viewport's impostors and the fluid renderer.

// Vertex: uRadius (m) and uScale (pixels per unit at distance 1) size the
// sprite; with USE_SPRITE_COLOR defined a `color` attribute is passed on.
export const sphereSpriteVertex = /* glsl */ `
  uniform float uRadius;
  uniform float uScale;
  varying vec3 vCenter;
  #ifdef USE_SPRITE_COLOR
  attribute vec3 color;
  varying vec3 vColor;
  #endif
  void main() {
    vec4 mv = modelViewMatrix * vec4(position, 1.0);
    vCenter = mv.xyz;
    #ifdef USE_SPRITE_COLOR
    vColor = color;
    #endif
    gl_Position = projectionMatrix * mv;
    gl_PointSize = max(2.0, 2.0 * uRadius * uScale / -mv.z);
  }
`;

// Fragment prelude: sphereFragment() discards outside the disc, writes the
// sphere's depth and returns its view-space normal n and point p.
export const sphereFragmentPrelude = /* glsl */ `
  uniform mat4 projectionMatrix;
  uniform float uRadius;
  varying vec3 vCenter;
  void sphereFragment(out vec3 n, out vec3 p) {
    vec2 q = gl_PointCoord * 2.0 - 1.0;
    q.y = -q.y;
    float d2 = dot(q, q);
    if (d2 > 1.0) discard;
    n = vec3(q, sqrt(1.0 - d2));
    p = vCenter + n * uRadius;
    vec4 clip = projectionMatrix * vec4(p, 1.0);
    gl_FragDepth = 0.5 * (clip.z / clip.w) + 0.5;
  }
`;
