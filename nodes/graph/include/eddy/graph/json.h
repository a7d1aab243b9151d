#pragma once
// JSON that comes from outside the program (graph files, --set values, the
// server's request bodies). It is refused, with a message that names its
// source and the place, when it is not JSON or when it nests deeper than any
// graph does. The depth is checked on the text, before a tree is built: a
// parser or a destructor that recurses once per level would overflow the
// stack on a few hundred kilobytes of brackets.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

namespace eddy {

// Far above any real graph (a graph file nests 4 levels deep).
constexpr int kMaxJsonDepth = 128;

// Throws eddy::Error "SOURCE:LINE:COL: JSON nested deeper than 128 levels"
// at the bracket that opens the level past max_depth. Brackets inside
// strings do not count.
void check_json_depth(std::string_view text, const std::string& source, int max_depth = kMaxJsonDepth);

// check_json_depth, then the parse. A syntax error becomes eddy::Error
// "SOURCE:LINE:COL: invalid JSON: ...".
nlohmann::json parse_json(const std::string& text, const std::string& source);

// JSON text of `j`, compact. Invalid UTF-8 in its strings (a file name, a
// user's text) becomes U+FFFD instead of an exception: for messages,
// replies and events.
std::string json_text(const nlohmann::json& j, int indent = -1);

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text);

// The 1-based line and column of byte `byte` of `text`.
std::pair<int, int> line_col(std::string_view text, std::size_t byte);

}  // namespace eddy
