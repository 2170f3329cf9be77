// trace.h - every TLP put on a wire, as Chrome-trace / Perfetto JSON
// ("X" events: one track per transmitting port, grouped by node).
#pragma once

#include <cstdio>
#include <map>
#include <string>

#include "pcie/link.h"

namespace p2 {

struct TraceWriter : TlpObserver {
  explicit TraceWriter(const std::string& path);  // throws ConfigError if it cannot write
  ~TraceWriter() override;
  void on_tlp_sent(const LinkPort& from, const Tlp& tlp, sc_core::sc_time start,
                   sc_core::sc_time end) override;
  // Ends the JSON and closes the file: "" when every byte was written, else
  // why not (a full disk shows only here: the writes before are buffered).
  std::string close();

 private:
  int track(const LinkPort& port);
  std::FILE* out_ = nullptr;
  std::map<const LinkPort*, int> tracks_;
  bool first_ = true;
  std::string path_;
};

}  // namespace p2
