// topo_test_util.h - helpers shared by the topology, routing and mapping tests.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "topo/topology.h"

namespace p2::topotest {

inline std::string source_path(const std::string& rel) { return std::string(P2_SOURCE_DIR) + "/" + rel; }

// A file holding `text`; removed when the object goes.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/p2topo-XXXXXX";
    int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Analytic hop counts the routing must match.
inline unsigned ring_hops(unsigned n, unsigned a, unsigned b) {
  unsigned d = a > b ? a - b : b - a;
  return d < n - d ? d : n - d;
}
inline unsigned torus2_hops(unsigned cols, unsigned a, unsigned b) {
  return ring_hops(cols, a % cols, b % cols) + (a / cols != b / cols ? 1 : 0);
}

}  // namespace p2::topotest
