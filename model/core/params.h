// params.h - the model's parameters: one struct whose fields come from
// params.def, a table describing each one, and the parameter-file reader.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace p2 {

// A malformed input file: names the file and line (line 0: the file as a whole).
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, int line, const std::string& reason);
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  std::string file_;
  int line_;
};

enum class ParamScope { Link, Chip, Host, Rank };

struct Params {
#define P2_PARAM(name, def, unit, scope, meaning, source) double name = def;
#include "params.def"
#undef P2_PARAM
};

struct ParamInfo {
  const char* name;
  double default_value;
  const char* unit;
  ParamScope scope;
  const char* meaning;
  const char* source;
  double Params::*field;
  bool integral;  // counts, bytes, cycles, credits: whole numbers only
};

const std::vector<ParamInfo>& param_table();
const ParamInfo* find_param(std::string_view name);

// Sets one parameter from text; throws ConfigError(file, line, reason) on an
// unknown name, a malformed or out-of-range number. `allowed` limits which
// scopes may be set (per-link overrides pass {ParamScope::Link}).
void set_param(Params& params, std::string_view name, std::string_view value,
               const std::string& file, int line,
               std::initializer_list<ParamScope> allowed = {
                   ParamScope::Link, ParamScope::Chip, ParamScope::Host,
                   ParamScope::Rank});

// Reads a parameter file: one `name = value` per line, `#` starts a comment.
void load_params_file(Params& params, const std::string& path);

// The documented table (name, default, unit, meaning, source) as Markdown.
std::string params_markdown(const Params& current);

}  // namespace p2
