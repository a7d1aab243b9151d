#pragma once
// Names of enum values, kept beside each enum, for parameters chosen by name
// (node specs, graph files, messages): one table serves the spec's items,
// its default, and the mapping back, so no layer maps enums by position.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace eddy {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

// The name of v; "unknown" when the table does not list it.
template <class E, std::size_t N>
const char* enum_name(const EnumName<E> (&table)[N], E v) {
  for (const auto& e : table)
    if (e.value == v) return e.name;
  return "unknown";
}

template <class E, std::size_t N>
std::optional<E> enum_from_name(const EnumName<E> (&table)[N], std::string_view name) {
  for (const auto& e : table)
    if (name == e.name) return e.value;
  return std::nullopt;
}

// Every name, in the table's order.
template <class E, std::size_t N>
std::vector<std::string> enum_names(const EnumName<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& e : table) out.emplace_back(e.name);
  return out;
}

}  // namespace eddy
