#include "stats/output_file.h"

#include <cerrno>
#include <cstring>

namespace p2 {

std::string close_output(std::FILE*& out, const std::string& path) {
  if (!out) return "";
  const bool lost = std::ferror(out) != 0;
  errno = 0;
  const bool closed = std::fclose(out) == 0;
  const int err = errno;
  out = nullptr;
  if (!lost && closed) return "";
  return "writing '" + path + "' failed" + (err ? std::string(": ") + std::strerror(err) : "");
}

}  // namespace p2
