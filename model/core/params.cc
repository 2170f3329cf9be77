#include "core/params.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ib_hw.h"
#include "p2mpi_layout.h"

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

bool named_power_of_two(std::string_view name) {
  for (std::string_view n : {"max_payload_bytes", "max_read_request_bytes", "read_completion_boundary",
                             "host_cpl_bytes", "ib_mtu_bytes", "ib_pcie_max_payload_bytes",
                             "ib_pcie_max_read_request_bytes", "ib_host_cpl_bytes"})
    if (name == n) return true;
  return false;
}

bool is_power_of_two(double v) {
  if (!(v >= 1) || v != std::floor(v) || v > 9007199254740992.0) return false;
  const uint64_t u = static_cast<uint64_t>(v);
  return (u & (u - 1)) == 0;
}

constexpr ParamScope scope_of(ParamScope s) { return s; }

std::vector<ParamInfo> build_table() {
  std::vector<ParamInfo> table;
#define LINK ParamScope::Link
#define CHIP ParamScope::Chip
#define HOST ParamScope::Host
#define RANK ParamScope::Rank
#define IB ParamScope::Ib
#define SR8000 ParamScope::Sr8000
#define P2_PARAM(name, def, lo, hi, unit, scope, layer, meaning, source)                        \
  static_assert((lo) <= (def) && (def) <= (hi), #name ": default outside its range");          \
  table.push_back({#name, def, lo, hi, unit, scope_of(scope), #layer, meaning, source,         \
                   &Params::name, unit_is_integral(unit), named_power_of_two(#name),           \
                   table.size()});
#include "params.def"
#undef P2_PARAM
#undef LINK
#undef CHIP
#undef HOST
#undef RANK
#undef IB
#undef SR8000
  return table;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string range_text(const ParamInfo& p) {
  return "[" + format_param_value(p.min) + ", " + format_param_value(p.max) + "]";
}

const char* scope_name(ParamScope s) {
  switch (s) {
    case ParamScope::Link: return "link";
    case ParamScope::Chip: return "chip";
    case ParamScope::Host: return "host";
    case ParamScope::Rank: return "rank";
    case ParamScope::Ib: return "ib";
    case ParamScope::Sr8000: return "sr8000";
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
  if (end == text.c_str() || *end != '\0' || std::isnan(v))
    throw ConfigError(file, line, "bad number '" + text + "' for parameter '" + std::string(name) + "'");
  // Overflow (1e999) reads as infinity and fails the range check below.
  if (!(v >= info->min && v <= info->max))
    throw ConfigError(file, line, std::string(name) + " = " + text + ": must be in " + range_text(*info));
  if (info->integral && v != std::floor(v))
    throw ConfigError(file, line, "parameter '" + std::string(name) + "' takes a whole number of " +
                                      info->unit + ", not '" + text + "'");
  if (info->power_of_two && !is_power_of_two(v))
    throw ConfigError(file, line, std::string(name) + " = " + text + ": must be a power of two in " +
                                      range_text(*info));
  params.*(info->field) = v;
}

void load_params_file(Params& params, const std::string& path) {
  std::istringstream in(read_config_file(path, "parameter file"));
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
    const std::string_view name = trim(s.substr(0, eq));
    set_param(params, name, trim(s.substr(eq + 1)), path, line);
    // A second line would silently win over the first: the reader of the
    // file could not tell which value the model used.
    ParamOrigin& origin = params.origin[find_param(name)->index];
    if (origin.line > 0 && origin.file == path)
      throw ConfigError(path, line, "parameter '" + std::string(name) + "' is already set on line " +
                                        std::to_string(origin.line));
    origin = {path, line};
  }
}

std::string format_param_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

ConfigError param_rule_error(const Params& params, std::initializer_list<std::string_view> names,
                             const std::string& file, int line, const std::string& reason) {
  const ParamOrigin* last = nullptr;
  for (std::string_view name : names) {
    const ParamOrigin& o = params.origin[find_param(name)->index];
    if (o.line > 0 && (!last || o.line > last->line)) last = &o;
  }
  return last ? ConfigError(last->file, last->line, reason) : ConfigError(file, line, reason);
}

void check_params(const Params& p, const std::string& file) {
  const std::string where = file.empty() ? "parameters (defaults)" : file;
  auto fail = [&](std::initializer_list<std::string_view> names, const std::string& reason) {
    throw param_rule_error(p, names, where, 0, reason);
  };
  for (const ParamInfo& info : param_table()) {
    const double v = p.*(info.field);
    const std::string shown = std::string(info.name) + " = " + format_param_value(v);
    if (!(v >= info.min && v <= info.max)) fail({info.name}, shown + ": must be in " + range_text(info));
    if (info.integral && v != std::floor(v))
      fail({info.name}, shown + ": must be a whole number of " + info.unit);
    if (info.power_of_two && !is_power_of_two(v))
      fail({info.name}, shown + ": must be a power of two in " + range_text(info));
  }
  auto v = [](double x) { return format_param_value(x); };
  // Completions are split at the RCB and are at most host_cpl_bytes, which
  // must itself fit the max payload (PCIe base spec 2.0, 2.3.1.1).
  if (p.read_completion_boundary > p.host_cpl_bytes)
    fail({"read_completion_boundary", "host_cpl_bytes"},
         "read_completion_boundary = " + v(p.read_completion_boundary) +
             " exceeds host_cpl_bytes = " + v(p.host_cpl_bytes) +
             ": completions are whole multiples of the RCB");
  if (p.host_cpl_bytes > p.max_payload_bytes)
    fail({"host_cpl_bytes", "max_payload_bytes"},
         "host_cpl_bytes = " + v(p.host_cpl_bytes) + " exceeds max_payload_bytes = " +
             v(p.max_payload_bytes) + ": a completion is a TLP and carries at most the max payload");
  // Each CPU store into the PIO window becomes one write TLP.
  if (p.pio_store_bytes > p.max_payload_bytes)
    fail({"pio_store_bytes", "max_payload_bytes"},
         "pio_store_bytes = " + v(p.pio_store_bytes) + " exceeds max_payload_bytes = " +
             v(p.max_payload_bytes) + ": each PIO store is one write TLP");
  // A TLP entering a ring needs the bubble and itself in the output queue.
  if (p.ring_bubble_tlps >= p.output_queue_tlps)
    fail({"ring_bubble_tlps", "output_queue_tlps"},
         "ring_bubble_tlps = " + v(p.ring_bubble_tlps) + " must be below output_queue_tlps = " +
             v(p.output_queue_tlps) + ": no TLP could ever enter a ring");
  // MPI_Init refuses a share that cannot hold the layer's own structures.
  const uint64_t mpi_needs =
      p2mpi_fixed_bytes(static_cast<uint64_t>(p.mpi_eager_bytes)) + P2MPI_MIN_STAGING_BYTES;
  if (p.mpi_host_bytes < static_cast<double>(mpi_needs))
    fail({"mpi_host_bytes", "mpi_eager_bytes"},
         "mpi_host_bytes = " + v(p.mpi_host_bytes) + " cannot hold the MPI layer's queues and " +
             std::to_string(P2MPI_RECV_SLOTS + P2MPI_SEND_SLOTS) +
             " eager buffers of mpi_eager_bytes = " +
             v(p.mpi_eager_bytes) + " and 1 MiB of rendezvous staging: they need " +
             std::to_string(mpi_needs) + " bytes");
  if (const char* credit = credits_short_of(p, p.max_payload_bytes))
    fail({credit, "max_payload_bytes"}, credits_reason(p, credit, p.max_payload_bytes, "max_payload_bytes"));
}

const char* credits_short_of(const Params& p, double mps) {
  // A TLP needing more data credits than the receiver advertises could never
  // be sent (0 = infinite).
  for (auto [credits, name] : {std::pair{p.rx_posted_data_credits, "rx_posted_data_credits"},
                               std::pair{p.rx_cpl_data_credits, "rx_cpl_data_credits"}})
    if (credits != 0 && credits * 16 < mps) return name;
  return nullptr;
}

std::string credits_reason(const Params& p, const char* credit, double mps, std::string_view mps_name) {
  return std::string(credit) + " = " + format_param_value(p.*(find_param(credit)->field)) +
         " cannot hold one " + std::string(mps_name) + " = " + format_param_value(mps) +
         " TLP (16 bytes per credit; 0 = infinite)";
}

void check_link_credits(const Params& p, const std::string& file, int line, const std::string& what) {
  if (const char* credit = credits_short_of(p, p.max_payload_bytes))
    throw ConfigError(file, line, what + credits_reason(p, credit, p.max_payload_bytes, "max_payload_bytes"));
}

std::string read_config_file(const std::string& path, const char* what) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw ConfigError(path, 0, std::string("cannot open ") + what + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw ConfigError(path, 0, "not a regular file");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw ConfigError(path, 0, std::string("cannot read ") + what + ": " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxConfigFileBytes) {
      ::close(fd);
      throw ConfigError(path, 0, std::string(what) + " larger than " +
                                     std::to_string(kMaxConfigFileBytes) + " bytes");
    }
  }
  ::close(fd);
  int line = 1;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\n') continue;
    if (i - start > kMaxConfigLineBytes)
      throw ConfigError(path, line, "line longer than " + std::to_string(kMaxConfigLineBytes) + " characters");
    // The readers stop at a NUL: what follows it would be dropped unseen.
    if (std::memchr(text.data() + start, '\0', i - start))
      throw ConfigError(path, line, "NUL byte in the line (not a text file?)");
    ++line;
    start = i + 1;
  }
  return text;
}

std::string params_markdown(const Params& current) {
  std::ostringstream out;
  out << "| name | value | range | unit | scope | layer | meaning | source |\n"
         "|---|---|---|---|---|---|---|---|\n";
  for (const ParamInfo& p : param_table())
    out << "| " << p.name << " | " << format_param_value(current.*(p.field)) << " | " << range_text(p)
        << (p.power_of_two ? ", power of two" : "") << " | " << p.unit << " | "
        << scope_name(p.scope) << " | " << p.layer << " | " << p.meaning << " | " << p.source << " |\n";
  return out.str();
}

}  // namespace p2
