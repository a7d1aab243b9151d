#include "guard.h"

#include <arpa/inet.h>

#include <random>

namespace eddy::app {

namespace {

bool is_ip_address(const std::string& name) {
  unsigned char buf[16];
  return inet_pton(AF_INET, name.c_str(), buf) == 1 || inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

// Compares in time independent of where the strings differ.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool needs_token(const httplib::Request& req) {
  if (req.method != "GET" && req.method != "HEAD") return true;
  return req.path == "/api/geometry";  // cooks
}

}  // namespace

bool RequestGuard::host_is_this_server(const std::string& host, int port) {
  std::string name, port_text;
  if (!host.empty() && host[0] == '[') {  // [v6]:port
    const auto close = host.find(']');
    if (close == std::string::npos) return false;
    name = host.substr(1, close - 1);
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return false;
      port_text = host.substr(close + 2);
    }
  } else {
    const auto colon = host.rfind(':');
    name = host.substr(0, colon);
    if (colon != std::string::npos) port_text = host.substr(colon + 1);
  }
  // Without a port, a browser means 80.
  if ((port_text.empty() ? std::string("80") : port_text) != std::to_string(port)) return false;
  return name == "localhost" || is_ip_address(name);
}

std::optional<HttpError> RequestGuard::refusal(const httplib::Request& req) const {
  const std::string host = req.get_header_value("Host");
  if (host.empty()) return HttpError(400, "the request has no Host header");
  if (!host_is_this_server(host, port_))
    return HttpError(403, "Host '" + host + "' does not name this server (port " + std::to_string(port_) +
                              "): refused, as a page on another site reaching it by DNS rebinding would be");
  if (req.has_header("Origin")) {
    const std::string origin = req.get_header_value("Origin");
    if (origin != "http://" + host)
      return HttpError(403, "Origin '" + origin + "' is not this server's (http://" + host +
                                "): cross-site requests are refused");
  }
  if (!token_.empty() && needs_token(req)) {
    const std::string given =
        req.has_header("X-Eddy-Token") ? req.get_header_value("X-Eddy-Token") : req.get_param_value("token");
    if (!same_secret(given, token_))
      return HttpError(403, std::string(given.empty() ? "no token" : "a wrong token") + " for " + req.method + " " +
                                req.path + ": open the editor through the URL eddy serve printed (…/?token=…), "
                                "send the header X-Eddy-Token, or start the server with --no-token");
  }
  return std::nullopt;
}

std::string RequestGuard::new_token() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string t;
  for (int i = 0; i < 4; ++i) {
    uint32_t w = rd();
    for (int k = 0; k < 4; ++k, w >>= 8) {
      t += hex[(w >> 4) & 15];
      t += hex[w & 15];
    }
  }
  return t;
}

}  // namespace eddy::app
