#include "core/params.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace p2 {

ConfigError::ConfigError(std::string file, int line, const std::string& reason)
    : std::runtime_error(line > 0 ? file + ":" + std::to_string(line) + ": " + reason
                                  : file + ": " + reason),
      file_(std::move(file)),
      line_(line) {}

namespace {

bool unit_is_integral(std::string_view unit) {
  for (std::string_view u : {"lanes", "bytes", "count", "cycles", "credits", "TLPs", "entries"})
    if (unit == u) return true;
  return false;
}

constexpr ParamScope scope_of(ParamScope s) { return s; }

std::vector<ParamInfo> build_table() {
  std::vector<ParamInfo> table;
#define LINK ParamScope::Link
#define CHIP ParamScope::Chip
#define HOST ParamScope::Host
#define RANK ParamScope::Rank
#define P2_PARAM(name, def, unit, scope, meaning, source) \
  table.push_back({#name, def, unit, scope_of(scope), meaning, source, &Params::name, unit_is_integral(unit)});
#include "core/params.def"
#undef P2_PARAM
#undef LINK
#undef CHIP
#undef HOST
#undef RANK
  return table;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

const char* scope_name(ParamScope s) {
  switch (s) {
    case ParamScope::Link: return "link";
    case ParamScope::Chip: return "chip";
    case ParamScope::Host: return "host";
    case ParamScope::Rank: return "rank";
  }
  return "?";
}

}  // namespace

const std::vector<ParamInfo>& param_table() {
  static const std::vector<ParamInfo> table = build_table();
  return table;
}

const ParamInfo* find_param(std::string_view name) {
  for (const ParamInfo& p : param_table())
    if (name == p.name) return &p;
  return nullptr;
}

void set_param(Params& params, std::string_view name, std::string_view value,
               const std::string& file, int line, std::initializer_list<ParamScope> allowed) {
  const ParamInfo* info = find_param(name);
  if (!info) throw ConfigError(file, line, "unknown parameter '" + std::string(name) + "'");
  bool scope_ok = false;
  for (ParamScope s : allowed) scope_ok |= (s == info->scope);
  if (!scope_ok)
    throw ConfigError(file, line, "parameter '" + std::string(name) + "' is a " +
                                      scope_name(info->scope) + " parameter and cannot be set here");
  std::string text(value);
  if (text.empty()) throw ConfigError(file, line, "parameter '" + std::string(name) + "' has no value");
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(v))
    throw ConfigError(file, line, "bad number '" + text + "' for parameter '" + std::string(name) + "'");
  if (v < 0)
    throw ConfigError(file, line, "parameter '" + std::string(name) + "' must not be negative");
  if (info->integral && v != std::floor(v))
    throw ConfigError(file, line, "parameter '" + std::string(name) + "' takes a whole number of " +
                                      info->unit + ", not '" + text + "'");
  params.*(info->field) = v;
}

void load_params_file(Params& params, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, 0, "cannot open parameter file");
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::string_view s(raw);
    if (auto hash = s.find('#'); hash != std::string_view::npos) s = s.substr(0, hash);
    s = trim(s);
    if (s.empty()) continue;
    auto eq = s.find('=');
    if (eq == std::string_view::npos)
      throw ConfigError(path, line, "expected 'name = value', got '" + std::string(s) + "'");
    set_param(params, trim(s.substr(0, eq)), trim(s.substr(eq + 1)), path, line);
  }
}

std::string params_markdown(const Params& current) {
  std::ostringstream out;
  out << "| name | value | unit | scope | meaning | source |\n|---|---|---|---|---|---|\n";
  for (const ParamInfo& p : param_table())
    out << "| " << p.name << " | " << current.*(p.field) << " | " << p.unit << " | "
        << scope_name(p.scope) << " | " << p.meaning << " | " << p.source << " |\n";
  return out.str();
}

}  // namespace p2
