#include "stats/trace.h"

#include <cerrno>
#include <cstring>

#include "core/params.h"
#include "stats/output_file.h"

namespace p2 {

namespace {
const char* kind_name(const Tlp& t) {
  switch (t.kind) {
    case TlpKind::MemWrite: return "MWr";
    case TlpKind::MemRead: return "MRd";
    case TlpKind::Completion: return t.payload_bytes() ? "CplD" : "Cpl";
  }
  return "?";
}
double us(sc_core::sc_time t) { return t.to_seconds() * 1e6; }
}  // namespace

TraceWriter::TraceWriter(const std::string& path) : out_(std::fopen(path.c_str(), "w")), path_(path) {
  if (!out_)
    throw ConfigError("--trace", 0, "cannot write '" + path + "': " + std::strerror(errno));
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out_);
}

TraceWriter::~TraceWriter() { close(); }

std::string TraceWriter::close() {
  if (!out_) return "";
  std::fputs("\n]}\n", out_);
  return close_output(out_, path_);
}

int TraceWriter::track(const LinkPort& port) {
  auto it = tracks_.find(&port);
  if (it != tracks_.end()) return it->second;
  int id = static_cast<int>(tracks_.size()) + 1;
  tracks_[&port] = id;
  std::fprintf(out_, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
               first_ ? "" : ",\n", id, port.name().c_str());
  first_ = false;
  return id;
}

void TraceWriter::on_tlp_sent(const LinkPort& from, const Tlp& tlp, sc_core::sc_time start,
                              sc_core::sc_time end) {
  if (!out_) return;
  int tid = track(from);
  std::fprintf(out_,
               ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":\"%s %u\",\"ts\":%.4f,\"dur\":%.4f,"
               "\"args\":{\"id\":%llu,\"addr\":\"0x%llx\",\"tag\":%u}}",
               tid, kind_name(tlp), tlp.length, us(start), us(end - start),
               static_cast<unsigned long long>(tlp.id), static_cast<unsigned long long>(tlp.addr),
               tlp.tag);
}

}  // namespace p2
