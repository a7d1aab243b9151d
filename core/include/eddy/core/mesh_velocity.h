#pragma once
// The surface velocity of a deforming mesh collider (a character, a flag
// pole that bends: a mesh sequence read with $F, or a mesh whose points
// carry `v`), sampled where a Grid collider's distance is sampled, so the
// solvers see the surface move and drag the liquid in contact with it
// (Collider::grid_velocity; Houdini's collision velocity field from a
// deforming collider plays the same part).
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/mesh.h"

namespace eddy {

// The points' velocities of a mesh sequence over one frame:
// (now - before) x fps, when `before` has the same points and faces (the
// same topology, as a deforming mesh's frames have); empty otherwise.
std::vector<Vec3f> sequence_velocities(const Mesh& now, const Mesh& before, double fps);

// The surface velocity on the nodes of `grid` (a Grid collider sampled from
// `mesh`, whose points move at `point_velocity`, both in the mesh's own
// frame): each node whose sampled distance is within `band` (m) of the
// surface takes the velocity at its closest point on the mesh (MeshDistance),
// interpolated over that triangle from its corners (barycentric); nodes
// farther away take zero, as nothing in contact reads them. Node order as the
// distances' (x fastest). `threads` as CpuExecutor's.
std::vector<Vec3f> surface_velocity_on_grid(const Mesh& mesh, const std::vector<Vec3f>& point_velocity,
                                            const Collider& grid, float band, int threads = 0);

}  // namespace eddy
