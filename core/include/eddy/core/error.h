#pragma once
// Errors in tiers (after Drake): a user's mistake is an eddy::Error whose
// message names the place (node, parameter, file) and what was expected; the
// CLI prints it and exits with status 2. EDDY_DEMAND guards internal
// invariants and is always on.
#include <stdexcept>
#include <string>

namespace eddy {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Thrown when a cook is cancelled through its cancellation token.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled") {}
};

// The check every validate() makes of a parameter: unless ok, throws
// "<method> parameter '<name>': <what>" (e.g. "PBF parameter 'xsph': must be in [0, 1]").
void require_param(bool ok, const char* method, const std::string& name, const std::string& what);

[[noreturn]] void demand_failed(const char* condition, const char* file, int line);

}  // namespace eddy

#define EDDY_DEMAND(cond) \
  do { if (!(cond)) ::eddy::demand_failed(#cond, __FILE__, __LINE__); } while (0)
