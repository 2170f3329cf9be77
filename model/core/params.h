// params.h - the model's parameters: one struct whose fields come from
// params.def, a table describing each one with its valid range, the checks,
// and the parameter-file reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "peach2_hw.h"

namespace p2 {

// Bounds shared by several rows of params.def (the reasons are there).
inline constexpr double kMaxTimeNs = 1e6;            // 1 ms
inline constexpr double kMaxCycles = 1e4;
inline constexpr double kMinMemoryBytes = 1 << 20;   // 1 MiB
inline constexpr double kMaxPioStoreBytes = 448;     // P2_CHAN_DATA_BYTES (emu/channel.h)

// Input files (parameters, topology, mapping) are read whole, and only when
// they are regular files of at most this size with lines of at most this
// length: a FIFO or a device never blocks or floods the simulator.
inline constexpr size_t kMaxConfigFileBytes = 1 << 20;
inline constexpr size_t kMaxConfigLineBytes = 4096;

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

enum class ParamScope { Link, Chip, Host, Rank, Sr8000 };

struct Params {
#define P2_PARAM(name, def, min, max, unit, scope, meaning, source) double name = def;
#include "params.def"
#undef P2_PARAM
};

struct ParamInfo {
  const char* name;
  double default_value;
  double min, max;  // valid range, inclusive
  const char* unit;
  ParamScope scope;
  const char* meaning;
  const char* source;
  double Params::*field;
  bool integral;     // counts, bytes, cycles, credits: whole numbers only
  bool power_of_two; // MPS, MRRS, RCB, completion size
};

const std::vector<ParamInfo>& param_table();
const ParamInfo* find_param(std::string_view name);

// Sets one parameter from text; throws ConfigError(file, line, reason) on an
// unknown name, a malformed number, a fraction for a whole-number unit, or a
// value outside the parameter's range ("NAME = VALUE: must be in [a, b]"). `allowed` limits which
// scopes may be set (per-link overrides pass {ParamScope::Link}).
void set_param(Params& params, std::string_view name, std::string_view value,
               const std::string& file, int line,
               std::initializer_list<ParamScope> allowed = {
                   ParamScope::Link, ParamScope::Chip, ParamScope::Host,
                   ParamScope::Rank, ParamScope::Sr8000});

// Reads a parameter file: one `name = value` per line, `#` starts a comment.
void load_params_file(Params& params, const std::string& path);

// Checks one complete parameter set: every value in its range and the rules
// between parameters that hold within a set (RCB <= host_cpl_bytes <= MPS,
// powers of two, a CPU store fits one TLP, data credits hold one TLP).
// Throws ConfigError naming `file` (the parameter file; "" for the defaults)
// and the parameters. Rules that involve a topology: validate_config.
void check_params(const Params& params, const std::string& file);

// The rule of a link's parameter set that check_params applies: posted and
// completion data credits (0 = infinite) hold one max_payload_bytes TLP.
// Throws ConfigError(file, line, what + reason); `what` names the link.
void check_link_credits(const Params& params, const std::string& file, int line,
                        const std::string& what);

// The text of an input file: refuses what is not a regular file ("FILE: not
// a regular file"), a file over kMaxConfigFileBytes and a line over
// kMaxConfigLineBytes, naming the file (and line). `what` says which input it
// is in the "cannot open" message ("parameter file", "topology file").
std::string read_config_file(const std::string& path, const char* what);

// A parameter's value as the messages and the table print it.
std::string format_param_value(double v);

// The documented table (name, value, range, unit, scope, meaning, source) as
// Markdown.
std::string params_markdown(const Params& current);

}  // namespace p2
