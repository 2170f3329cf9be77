#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/params.h"

namespace p2 {
namespace {

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/p2params-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  std::ofstream(path) << text;
  close(fd);
  return path;
}

std::string error_of(const std::string& text) {
  std::string path = write_temp(text);
  Params p;
  try {
    load_params_file(p, path);
  } catch (const ConfigError& e) {
    std::remove(path.c_str());
    return std::string(e.what()).substr(path.size());
  }
  std::remove(path.c_str());
  return "";
}

TEST(Params, DefaultsComeFromTheTable) {
  Params p;
  for (const ParamInfo& info : param_table()) EXPECT_EQ(p.*(info.field), info.default_value) << info.name;
  ASSERT_NE(find_param("max_payload_bytes"), nullptr);
  EXPECT_EQ(find_param("no_such_thing"), nullptr);
}

TEST(Params, FileOverridesByName) {
  std::string path = write_temp("# comment\n\nmax_payload_bytes = 128  # smaller MPS\nlink_latency_ns=99.5\n");
  Params p;
  load_params_file(p, path);
  std::remove(path.c_str());
  EXPECT_EQ(p.max_payload_bytes, 128);
  EXPECT_EQ(p.link_latency_ns, 99.5);
}

TEST(Params, UnknownKeyNamesFileAndLine) {
  EXPECT_EQ(error_of("pcie_lanes = 8\nbogus = 1\n"), ":2: unknown parameter 'bogus'");
}

TEST(Params, BadNumberNamesFileAndLine) {
  EXPECT_EQ(error_of("link_latency_ns = 12x\n"), ":1: bad number '12x' for parameter 'link_latency_ns'");
  EXPECT_EQ(error_of("link_latency_ns = -3\n"), ":1: link_latency_ns = -3: must be in [0, 1000000]");
  EXPECT_EQ(error_of("max_payload_bytes = 1000.5\n"),
            ":1: parameter 'max_payload_bytes' takes a whole number of bytes, not '1000.5'");
  EXPECT_EQ(error_of("max_payload_bytes\n"), ":1: expected 'name = value', got 'max_payload_bytes'");
}

TEST(Params, MissingFileIsAnError) {
  Params p;
  EXPECT_THROW(load_params_file(p, "/nonexistent/params"), ConfigError);
}

}  // namespace
}  // namespace p2
