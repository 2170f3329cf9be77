#include "stats/traffic_log.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "core/params.h"
#include "core/scheduler.h"
#include "stats/output_file.h"

namespace p2 {

namespace {
// Whole picoseconds as microseconds with all six decimals: exact, so the
// same run writes the same file.
void write_us(std::FILE* out, uint64_t ps) {
  std::fprintf(out, "%" PRIu64 ".%06" PRIu64, ps / 1000000, ps % 1000000);
}
uint64_t now_ps() { return static_cast<uint64_t>(sim_time().value()); }
}  // namespace

TrafficLog::TrafficLog(const std::string& path) : out_(std::fopen(path.c_str(), "w")), path_(path) {
  if (!out_)
    throw ConfigError("--traffic", 0, "cannot write '" + path + "': " + std::strerror(errno));
  std::fputs("# p2sim --traffic: one line per transfer a network's unit started\n"
             "time_us,src_node,dst_node,bytes,network,from,to\n", out_);
}

TrafficLog::~TrafficLog() { close(); }

void TrafficLog::on_transfer(unsigned src, unsigned dst, uint64_t bytes, const char* network,
                             const char* from, const char* to) {
  if (!out_) return;
  write_us(out_, now_ps());
  std::fprintf(out_, ",%u,%u,%" PRIu64 ",%s,%s,%s\n", src, dst, bytes, network, from, to);
}

std::string TrafficLog::close() {
  if (!out_) return "";
  std::fputs("# simulated_us=", out_);
  write_us(out_, now_ps());
  std::fputc('\n', out_);
  return close_output(out_, path_);
}

}  // namespace p2
