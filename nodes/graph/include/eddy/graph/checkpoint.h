#pragma once
// Checkpoints: a stateful node's outputs of one frame on disk, so that
// another process (the next job of a farm chain, a rerun after a crash)
// takes the simulation up where it stopped. A solver node's output is its
// whole state (SolverNode loads it at the start of every frame), so a run
// resumed from a checkpoint is the run that never stopped, bit for bit.
//
// One file per node and frame, DIR/<node>/<node>.<frame, 4 digits>.eddystate,
// written atomically (a temporary name renamed into place): a file under its
// final name is complete. It holds the frame's signature (the node's
// parameters, its inputs' and the frames before, as the cook engine hashes
// them): a checkpoint of another graph, or of other parameters, is not
// taken, and is overwritten when the frame is cooked anew.
//
// Format (little-endian): "EDDYSTATE\n", u32 version, u64 signature,
// i32 frame, the node id, u32 outputs, then per output its socket, its type
// name and its payload. Strings: u64 length then bytes; arrays: u64 count
// then elements. Payloads: points (radius, count, attributes by name, type
// and bytes, detail values by name), mesh, bodies and soft (every field of the structs).
#include <cstdint>
#include <memory>
#include <string>

#include "eddy/graph/node.h"

namespace eddy {

// True when every value in `outputs` is of a type a checkpoint holds
// (points, mesh, bodies, soft).
bool checkpointable(const Outputs& outputs);

// The file of `node`'s checkpoint of `frame` under `dir`.
std::string checkpoint_path(const std::string& dir, const std::string& node, int frame);

// Writes the checkpoint atomically. Throws eddy::Error naming the file when
// it cannot be written, or an output whose type no checkpoint holds.
void write_checkpoint(const std::string& dir, const std::string& node, int frame, uint64_t signature,
                      const Outputs& outputs);

// The outputs of `node` at `frame` when its checkpoint exists with this
// signature; null when there is none, or one of another signature. Throws
// eddy::Error naming the file when it exists but is damaged.
std::shared_ptr<const Outputs> read_checkpoint(const std::string& dir, const std::string& node, int frame,
                                               uint64_t signature);

// The signature a checkpoint file holds (for `eddy farm status`); throws
// eddy::Error naming the file when it is not one.
uint64_t checkpoint_signature(const std::string& path);

}  // namespace eddy
