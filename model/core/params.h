// params.h - the model's parameters: one struct whose fields come from
// params.def, a table describing each one with its valid range, the checks,
// and the parameter-file reader.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "p2_params.h"
#include "peach2_hw.h"

namespace p2 {

// Bounds shared by several rows of params.def (p2_params.h; the reasons are
// in params.def).
inline constexpr double kMaxTimeNs = P2_MAX_TIME_NS;
inline constexpr double kMaxCycles = P2_MAX_CYCLES;
inline constexpr double kMinMemoryBytes = P2_MIN_MEMORY_BYTES;
inline constexpr double kMaxPioStoreBytes = P2_MAX_PIO_STORE_BYTES;

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

enum class ParamScope { Link, Chip, Host, Rank, Ib, Sr8000 };

inline constexpr size_t kParamCount = 0
#define P2_PARAM(name, def, min, max, unit, scope, layer, meaning, source) +1
#include "params.def"
#undef P2_PARAM
    ;

// Where a value came from: the parameter file and line that set it (line 0:
// the default, or set by code). A rule between parameters names the line that
// set the last of them, where the user can change it.
struct ParamOrigin {
  std::string file;
  int line = 0;
};

struct Params {
#define P2_PARAM(name, def, min, max, unit, scope, layer, meaning, source) double name = def;
#include "params.def"
#undef P2_PARAM
  std::array<ParamOrigin, kParamCount> origin;  // param_table() order
};

struct ParamInfo {
  const char* name;
  double default_value;
  double min, max;  // valid range, inclusive
  const char* unit;
  ParamScope scope;
  const char* layer;  // who reads it: MODEL, RT, COLL, FMPL, CUDA, MPI (params.def)
  const char* meaning;
  const char* source;
  double Params::*field;
  bool integral;     // counts, bytes, cycles, credits: whole numbers only
  bool power_of_two; // MPS, MRRS, RCB, completion size
  size_t index;      // in param_table() and Params::origin
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
                   ParamScope::Rank, ParamScope::Ib, ParamScope::Sr8000});

// Reads a parameter file: one `name = value` per line, `#` starts a comment.
// A parameter set twice in the file is refused, naming both lines; each value
// keeps its line in params.origin.
void load_params_file(Params& params, const std::string& path);

// Checks one complete parameter set: every value in its range and the rules
// between parameters that hold within a set (RCB <= host_cpl_bytes <= MPS,
// powers of two, a CPU store fits one TLP, data credits hold one TLP, the MPI
// layer's memory holds its queues and eager buffers). Throws ConfigError
// naming `file` (the parameter file; "" for the defaults), the line that set
// the last of the parameters involved (param_rule_error) and the parameters.
// Rules that involve a topology: validate_config.
void check_params(const Params& params, const std::string& file);

// The error for a rule between the parameters `names` that `params` breaks:
// at the parameter-file line that set the last of them, or at `file:line`
// (the parameter file as a whole, or the topology line that makes the rule
// apply) when none was set in a file.
ConfigError param_rule_error(const Params& params, std::initializer_list<std::string_view> names,
                             const std::string& file, int line, const std::string& reason);

// The rule of a link's parameter set that check_params applies: posted and
// completion data credits (0 = infinite) hold one max_payload_bytes TLP.
// Throws ConfigError(file, line, what + reason); `what` names the link.
void check_link_credits(const Params& params, const std::string& file, int line,
                        const std::string& what);
// The same rule for a TLP of `mps` bytes: the credit parameter that cannot
// hold one (nullptr when both can), and the reason to give for it.
const char* credits_short_of(const Params& params, double mps);
std::string credits_reason(const Params& params, const char* credit, double mps,
                           std::string_view mps_name);

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
