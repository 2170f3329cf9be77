// text.h - the strict number reading shared by the topology and mapping
// readers.
#pragma once

#include <optional>
#include <string_view>

namespace p2 {

// Strict decimal: no sign, no spaces, no trailing junk, at most 9 digits.
inline std::optional<unsigned> to_unsigned(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + unsigned(c - '0');
  }
  return v;
}

}  // namespace p2
