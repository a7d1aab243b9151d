#pragma once
// Who may ask `eddy serve` what. A web page the user happens to visit can
// send requests to a server on the user's own machine: "simple" cross-site
// requests (no preflight) and, through DNS rebinding, requests that look
// same-origin to the browser. Every request is checked before it is routed:
//
// - Host must name this server: an IP address (v4 or v6) or "localhost",
//   with the server's port. A rebinding page's requests carry its own DNS
//   name, so they are refused; any IP address is allowed, so that a server
//   listening on all interfaces (--host 0.0.0.0) is reachable by address.
// - Origin, when the browser sends one, must be the server's own origin
//   ("http://" + the request's Host): a page on another site gets 403.
// - A per-run token guards every request that changes state or cooks
//   (every method but GET and HEAD, and GET /api/geometry): it is printed in
//   the URL that `eddy serve` shows (…/?token=T), kept by the editor in the
//   page and sent as the header X-Eddy-Token (or a `token` query parameter).
//   --no-token switches it off for scripted use on a trusted machine.
#include <httplib.h>

#include <optional>
#include <string>

#include "sandbox.h"

namespace eddy::app {

class RequestGuard {
 public:
  // `token` empty: no token is asked for.
  RequestGuard(int port, std::string token) : port_(port), token_(std::move(token)) {}
  // Why the request is refused (status and message), or nothing when it may proceed.
  std::optional<HttpError> refusal(const httplib::Request& req) const;
  // Whether a Host header value names a server on `port` that no DNS name
  // could rebind: an IP address or "localhost", with that port.
  static bool host_is_this_server(const std::string& host, int port);
  // 32 hex digits from the system's random source.
  static std::string new_token();

 private:
  int port_;
  std::string token_;
};

}  // namespace eddy::app
