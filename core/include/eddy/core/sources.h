#pragma once
// Sources and sinks of particles (a tap, a hose, a drain): what a solver
// node adds to and takes from its particles at the start of each frame
// (docs/architecture.md, "Sources and sinks").
//
// A source makes particles on a lattice of spacing 2r (the particles'
// diameter) inside its shape, at sites no particle is nearer to than 0.9 of
// that spacing, moving at its velocity:
//   rate   the volume flow_rate x (time since its start) leaves it in
//          total, (2r)^3 per particle, so that over any span it emits the
//          flow rate's particles; a frame's go into the shape swept
//          downstream by a frame's travel (velocity / fps: what flows out
//          of it over a frame, so a shape thinner than that still makes an
//          unbroken stream), spread evenly over its free sites in order
//          from upstream when fewer are due than they hold;
//   fill   every free site, every frame (a shape kept full).
// A sink removes the particles inside its shape (a plane: below it).
#include <cstdint>
#include <string>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/points.h"

namespace eddy {

// A value a source gives an attribute of every particle it makes (an MPM
// material, a temperature, a colour), as Houdini's sources carry their
// attributes. The value is converted to the particles' type where they
// already have the attribute as int or float (an int from a float only when
// it is whole); a vec3 stays a vec3.
struct SourceAttribute {
  std::string name;
  AttribType type = AttribType::Float;
  Vec3f value = vec3(0.0f);  // Float and Int: x
};

struct FluidSource {
  Collider shape;            // Box, Sphere or Grid (a sampled closed mesh), solid; placed at t = 0 and moving as colliders do
  bool fill = false;         // false: rate
  double flow_rate = 0.0;    // m^3/s (rate)
  // An animated rate: the volume emitted by the end of each frame's
  // emission from frame `volume_first` on, the integral of the rate over the
  // frames (emission at frame k covers the time from frame k to k + 1), in
  // place of flow_rate times the frames.
  bool animated_rate = false;
  int volume_first = 0;
  std::vector<double> volume;  // m^3, by the end of frame volume_first + j
  Vec3f velocity = vec3(0.0f);  // m/s, of the particles made
  int start = 1, end = 1000000000;  // frames, inclusive
  float jitter = 0.05f;      // of the spacing: each site moved at random by up to this much
  uint32_t seed = 0;
  std::vector<SourceAttribute> attributes;  // set on the particles made; other attributes are 0
};

struct EmitStats {
  std::size_t emitted = 0;
  std::size_t short_of = 0;  // rate: particles due that found no free site (the source is full)
};

// Adds to `pts` (spacing 2 pts.radius) what `s` emits at the start of
// `frame` (of a graph starting at `first` at `fps`), for the frame that
// follows. New particles take ids from `next_id` up (and advance it) when
// `pts` has an `id`, the source's attributes (added to `pts`, 0 on the
// particles already there, when missing), and 0 in the others but v.
// Throws eddy::Error naming an attribute whose value does not fit its type.
EmitStats emit(Points& pts, const FluidSource& s, int frame, int first, double fps, int32_t& next_id);

// Whether a source may set the attribute `name`: not P, v or id, the solver's own.
bool source_may_set(const std::string& name);

// Removes the particles inside any of `sinks` at time t; returns how many.
std::size_t kill(Points& pts, const std::vector<Collider>& sinks, float t);

// The number of particles a rate source has emitted in total by the end of
// frame `frame`: floor(flow_rate x (frame - start + 1) / fps / (2r)^3).
// (An animated rate's total comes from `volume`; beyond its last frame the
// rate is taken as flow_rate.)
std::size_t rate_total(const FluidSource& s, int frame, double fps, float radius);

}  // namespace eddy
