#pragma once
// The shot the eddy command's fault and farm tests cook: a block of water
// falling in a tank (6,144 particles, 12 frames), cached by FileCache, then
// written as particles, surfaced to a mesh and a VDB.
namespace eddy::testing {

inline const char* kTankShot = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 12], "fps": 24,
  "nodes": [
    {"id": "tank", "type": "ColliderBox", "params": {"mode": "container", "center": [0.2, 0.2, 0.2], "size": [0.4, 0.4, 0.4]}},
    {"id": "water", "type": "FluidBox", "params": {"center": [0.1, 0.15, 0.1], "size": [0.16, 0.24, 0.16], "particle_radius": 0.005}},
    {"id": "solver", "type": "PBFSolver"},
    {"id": "cache", "type": "FileCache", "params": {"path": "cache/p.$F4.ply"}},
    {"id": "points", "type": "WriteParticles", "params": {"path": "particles/p.$F4.ply"}},
    {"id": "to_vdb", "type": "PrimToVDBPointDataGrid"},
    {"id": "liquid", "type": "SmoothLiquidSDF", "params": {"Dx": 0.005}},
    {"id": "mesher", "type": "SDFToPrim"},
    {"id": "obj", "type": "WriteMesh", "params": {"path": "mesh/surface.$F4.obj"}},
    {"id": "vdb", "type": "WriteVDB", "params": {"path": "vdb/fluid.$F4.vdb"}}
  ],
  "links": [
    {"from": "tank.colliders", "to": "water.colliders"},
    {"from": "water.particles", "to": "solver.particles"},
    {"from": "tank.colliders", "to": "solver.colliders"},
    {"from": "solver.particles", "to": "cache.particles"},
    {"from": "cache.particles", "to": "points.particles"},
    {"from": "cache.particles", "to": "to_vdb.particles"},
    {"from": "to_vdb.vdb", "to": "liquid.vdb"},
    {"from": "liquid.sdf", "to": "mesher.sdf"},
    {"from": "mesher.mesh", "to": "obj.mesh"},
    {"from": "liquid.sdf", "to": "vdb.vdb"}
  ]})";

}  // namespace eddy::testing
