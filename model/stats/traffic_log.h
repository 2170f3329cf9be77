// traffic_log.h - every transfer the networks' units start, as CSV (p2sim
// --traffic; p2map screens placements with it): one line per transfer, its
// simulated start, the node its bytes leave, the node they go to, the bytes
// and the network, and at the end the run's simulated time.
#pragma once

#include <cstdio>
#include <string>

#include "core/traffic.h"

namespace p2 {

struct TrafficLog : TrafficObserver {
  explicit TrafficLog(const std::string& path);  // throws ConfigError if it cannot write
  ~TrafficLog() override;
  void on_transfer(unsigned src, unsigned dst, uint64_t bytes, const char* network, const char* from,
                   const char* to) override;
  // Writes the run's end and closes the file: "" when every byte was
  // written, else why not.
  std::string close();

 private:
  std::FILE* out_ = nullptr;
  std::string path_;
};

}  // namespace p2
