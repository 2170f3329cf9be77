// Valid ranges of every parameter (params.def), the checks between parameters
// (check_params, validate_config) and the bounded reading of input files.
// Each case here crashed, hung, ate memory or silently misbehaved before the
// ranges existed (SIGFPE, unbounded tables, 2^32 wrapping, ps overflow).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "core/params.h"
#include "topo/topology.h"

namespace p2 {
namespace {

class TempDir {
 public:
  TempDir() {
    char path[] = "/tmp/p2ranges-XXXXXX";
    EXPECT_NE(mkdtemp(path), nullptr);
    dir_ = path;
  }
  ~TempDir() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string file(const std::string& name, const std::string& text) const {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

// The message of loading `text` as a parameter file, without the file name.
std::string params_error(const std::string& text) {
  TempDir d;
  std::string path = d.file("p.params", text);
  Params p;
  try {
    load_params_file(p, path);
  } catch (const ConfigError& e) {
    return std::string(e.what()).substr(path.size());
  }
  return "";
}

std::string check_error(const Params& p) {
  try {
    check_params(p, "x.params");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string topo_error(const std::string& topo_text, const std::string& params_text = "") {
  TempDir d;
  std::string topo = d.file("t.topo", topo_text);
  std::string params = params_text.empty() ? "" : d.file("p.params", params_text);
  Params p;
  try {
    if (!params.empty()) load_params_file(p, params);
    Topology t = load_topology(topo, p);
    validate_config(p, params, t);
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    for (const std::string& path : {topo, params})
      for (size_t at; !path.empty() && (at = msg.find(path)) != std::string::npos;)
        msg.replace(at, path.size(), path == topo ? "T" : "P");
    return msg;
  }
  return "";
}

// The layer column (params.def): a RANK parameter is handed to the ranks
// (p2_params.h) and names the rank-side layer that charges it; the model
// reads every other one.
TEST(ParamRanges, EveryParameterNamesItsLayer) {
  const std::set<std::string> rank_layers = {"RT", "COLL", "FMPL", "CUDA", "MPI", "APP"};
  for (const ParamInfo& p : param_table()) {
    SCOPED_TRACE(p.name);
    if (p.scope == ParamScope::Rank)
      EXPECT_EQ(rank_layers.count(p.layer), 1u) << p.layer;
    else
      EXPECT_STREQ(p.layer, "MODEL");
  }
}

TEST(ParamRanges, EveryParameterHasASaneRange) {
  for (const ParamInfo& p : param_table()) {
    SCOPED_TRACE(p.name);
    EXPECT_LT(p.min, p.max);
    EXPECT_GE(p.min, 0);
    EXPECT_LE(p.min, p.default_value);
    EXPECT_LE(p.default_value, p.max);
    std::string unit = p.unit;
    // Times and cycles: small enough that picosecond sums of many of them
    // stay far from 2^64 (1.8e19 ps), even at the slowest clock (1 MHz).
    if (unit == "ns") {
      EXPECT_LE(p.max, kMaxTimeNs);
    }
    if (unit == "cycles") {
      EXPECT_LE(p.max * 1e6 /* ps per cycle at 1 MHz */, 1e12);
    }
    // Whole numbers go through uint32_t (or uint64_t for memory sizes).
    if (p.integral && std::string(p.name).find("memory") == std::string::npos) {
      EXPECT_LT(p.max, 4294967296.0);
    }
  }
  // 1e6 events each of every time parameter at its maximum still fit.
  EXPECT_LT(1e6 * 40 * kMaxTimeNs * 1000, 18446744073709551615.0);
}

TEST(ParamRanges, BoundsAcceptedJustOutsideRefused) {
  for (const ParamInfo& info : param_table()) {
    SCOPED_TRACE(info.name);
    Params p;
    for (double v : {info.min, info.max}) {
      if (info.power_of_two && (v != std::exp2(std::round(std::log2(v))))) continue;
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", v);
      EXPECT_NO_THROW(set_param(p, info.name, text, "f", 1));
    }
    const double step = info.integral ? 1 : (info.max - info.min) * 1e-6;
    for (double v : {info.min - step, info.max + step}) {
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", v);
      try {
        set_param(p, info.name, text, "f", 3);
        ADD_FAILURE() << info.name << " = " << text << " accepted";
      } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), "f:3: " + std::string(info.name) + " = " + text +
                                             ": must be in [" + format_param_value(info.min) +
                                             ", " + format_param_value(info.max) + "]");
      }
    }
  }
}

// The reliability audit's cases, each of which crashed, hung or misbehaved.
TEST(ParamRanges, AuditCasesAreRefusedWithTheRange) {
  EXPECT_EQ(params_error("chip_mhz = 0\n"), ":1: chip_mhz = 0: must be in [1, 1000]");  // SIGFPE
  EXPECT_EQ(params_error("chip_mhz = 1e9\n"), ":1: chip_mhz = 1e9: must be in [1, 1000]");
  EXPECT_EQ(params_error("datapath_bytes = 0\n"), ":1: datapath_bytes = 0: must be in [1, 512]");
  EXPECT_EQ(params_error("pio_store_bytes = 0\n"), ":1: pio_store_bytes = 0: must be in [1, 448]");
  EXPECT_EQ(params_error("tlp_framing_bytes = 1e9\n"),
            ":1: tlp_framing_bytes = 1e9: must be in [0, 64]");
  EXPECT_EQ(params_error("pio_store_bytes = 449\n"), ":1: pio_store_bytes = 449: must be in [1, 448]");
  EXPECT_EQ(params_error("# slow\n\nlink_latency_ns = 1e18\n"),
            ":3: link_latency_ns = 1e18: must be in [0, 1000000]");
  EXPECT_EQ(params_error("host_write_latency_ns = 1e999\n"),
            ":1: host_write_latency_ns = 1e999: must be in [0, 1000000]");
  EXPECT_EQ(params_error("rx_posted_hdr_credits = 4294967296\n"),
            ":1: rx_posted_hdr_credits = 4294967296: must be in [0, 127]");
  EXPECT_EQ(params_error("host_read_gbps = 0\n"), ":1: host_read_gbps = 0: must be in [0.01, 1000]");
  EXPECT_EQ(params_error("host_memory_bytes = 17179869185\n"),
            ":1: host_memory_bytes = 17179869185: must be in [1048576, 17179869184]");
  EXPECT_EQ(params_error("gpu_memory_bytes = 0\n"),
            ":1: gpu_memory_bytes = 0: must be in [1048576, 17179869184]");
  EXPECT_EQ(params_error("max_payload_bytes = 0\n"), ":1: max_payload_bytes = 0: must be in [128, 4096]");
  EXPECT_EQ(params_error("dmac_max_reads = 257\n"), ":1: dmac_max_reads = 257: must be in [1, 256]");
  EXPECT_EQ(params_error("link_latency_ns = nan\n"), ":1: bad number 'nan' for parameter 'link_latency_ns'");
}

TEST(ParamRanges, MemoryWindowsComeFromTheAddressMap) {
  EXPECT_EQ(find_param("host_memory_bytes")->max, static_cast<double>(P2_HOST_SIZE));
  EXPECT_EQ(find_param("gpu_memory_bytes")->max, static_cast<double>(P2_GPU_SIZE));
}

TEST(ParamRanges, PowersOfTwo) {
  EXPECT_EQ(params_error("max_payload_bytes = 384\n"),
            ":1: max_payload_bytes = 384: must be a power of two in [128, 4096]");
  EXPECT_EQ(params_error("max_read_request_bytes = 1000\n"),
            ":1: max_read_request_bytes = 1000: must be a power of two in [128, 4096]");
  EXPECT_EQ(params_error("read_completion_boundary = 96\n"),
            ":1: read_completion_boundary = 96: must be a power of two in [64, 128]");
  EXPECT_EQ(params_error("host_cpl_bytes = 192\n"),
            ":1: host_cpl_bytes = 192: must be a power of two in [64, 4096]");
  EXPECT_EQ(params_error("max_payload_bytes = 4096\nmax_read_request_bytes = 128\n"
                         "read_completion_boundary = 128\nhost_cpl_bytes = 512\n"),
            "");
}

TEST(ParamChecks, CompletionSizesNest) {
  Params p;
  EXPECT_EQ(check_error(p), "");
  p.read_completion_boundary = 128;
  p.host_cpl_bytes = 64;
  EXPECT_EQ(check_error(p),
            "x.params: read_completion_boundary = 128 exceeds host_cpl_bytes = 64: completions are "
            "whole multiples of the RCB");
  p = Params();
  p.host_cpl_bytes = 512;
  EXPECT_EQ(check_error(p),
            "x.params: host_cpl_bytes = 512 exceeds max_payload_bytes = 256: a completion is a TLP "
            "and carries at most the max payload");
  // The same from a file: the message names the line that set the last of
  // the two (it used to name the file as a whole).
  EXPECT_EQ(params_error("max_payload_bytes = 128\n"), "");
  TempDir d;
  std::string path = d.file("q.params", "max_payload_bytes = 128\nhost_cpl_bytes = 256\n");
  Params q;
  load_params_file(q, path);
  try {
    check_params(q, path);
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(std::string(e.what()), path + ":2: host_cpl_bytes = 256 exceeds max_payload_bytes = 128: a "
                                            "completion is a TLP and carries at most the max payload");
  }
}

TEST(ParamChecks, StoresAndCreditsFitOneTlp) {
  Params p;
  p.pio_store_bytes = 300;
  EXPECT_EQ(check_error(p),
            "x.params: pio_store_bytes = 300 exceeds max_payload_bytes = 256: each PIO store is one write TLP");
  p = Params();
  p.rx_posted_data_credits = 8;
  EXPECT_EQ(check_error(p), "x.params: rx_posted_data_credits = 8 cannot hold one max_payload_bytes = 256 "
                            "TLP (16 bytes per credit; 0 = infinite)");
  p = Params();
  p.rx_cpl_data_credits = 15;
  EXPECT_NE(check_error(p).find("rx_cpl_data_credits = 15 cannot hold"), std::string::npos);
  p.rx_cpl_data_credits = 16;
  EXPECT_EQ(check_error(p), "");
}

TEST(ParamChecks, ValuesSetInCodeAreRangeChecked) {
  Params p;
  p.chip_mhz = 0;
  EXPECT_EQ(check_error(p), "x.params: chip_mhz = 0: must be in [1, 1000]");
  p = Params();
  p.output_queue_tlps = 2.5;
  EXPECT_EQ(check_error(p), "x.params: output_queue_tlps = 2.5: must be a whole number of TLPs");
  p = Params();
  p.max_read_request_bytes = 768;
  EXPECT_EQ(check_error(p), "x.params: max_read_request_bytes = 768: must be a power of two in [128, 4096]");
  p = Params();
  p.pcie_lanes = 0;
  try {
    check_params(p, "");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "parameters (defaults): pcie_lanes = 0: must be in [1, 32]");
  }
}

TEST(ParamChecks, PerLinkOverridesAreRangeChecked) {
  EXPECT_EQ(topo_error("ring 4 pcie_lanes=4294967296\n"), "T:1: pcie_lanes = 4294967296: must be in [1, 32]");
  EXPECT_EQ(topo_error("ring 4\nset 2.E link_latency_ns=1e18\n"),
            "T:2: link_latency_ns = 1e18: must be in [0, 1000000]");
  EXPECT_EQ(topo_error("nodes 2\nlink 0.E 1.W max_payload_bytes=0\n"),
            "T:2: max_payload_bytes = 0: must be in [128, 4096]");
  EXPECT_EQ(topo_error("nodes 2\nlink 0.E 1.W max_payload_bytes=300\n"),
            "T:2: max_payload_bytes = 300: must be a power of two in [128, 4096]");
  EXPECT_EQ(topo_error("ring 4 cable_m=2.5 max_payload_bytes=512\n"), "");
}

TEST(ParamChecks, CableMaxPayloadAndPioStores) {
  // A cable may have a smaller MPS than the rest: the DMAC splits by its route.
  EXPECT_EQ(topo_error("ring 4\nset 0.E max_payload_bytes=128\n"), "");
  // A PIO store is one TLP on every cable it crosses.
  EXPECT_EQ(topo_error("ring 4\nset 0.E max_payload_bytes=128\n", "pio_store_bytes = 256\n"),
            "T:2: cable 1.W - 0.E: max_payload_bytes = 128 is below pio_store_bytes = 256 (from P): "
            "a PIO store crosses every cable as one TLP");
  EXPECT_EQ(topo_error("ring 4 max_payload_bytes=128\n", "max_payload_bytes = 128\n"), "");
}

TEST(ParamChecks, CableCreditsHoldOneTlp) {
  EXPECT_EQ(topo_error("ring 4 rx_posted_data_credits=8\n"),
            "T:1: cable 1.W - 0.E: rx_posted_data_credits = 8 cannot hold one max_payload_bytes = 256 TLP "
            "(16 bytes per credit; 0 = infinite)");
  // Raising the cable's MPS needs the credits to follow.
  EXPECT_EQ(topo_error("nodes 2\nlink 0.E 1.W rx_posted_data_credits=128\nset 0.E max_payload_bytes=4096\n"),
            "T:3: cable 1.W - 0.E: rx_posted_data_credits = 128 cannot hold one max_payload_bytes = 4096 "
            "TLP (16 bytes per credit; 0 = infinite)");
  EXPECT_EQ(topo_error("nodes 2\nlink 0.E 1.W rx_posted_data_credits=128\nset 0.E max_payload_bytes=4096 "
                       "rx_posted_data_credits=0\n"),
            "");
  // The parameter file's own rules are checked too, naming its line.
  EXPECT_EQ(topo_error("ring 2\n", "host_cpl_bytes = 512\n"),
            "P:1: host_cpl_bytes = 512 exceeds max_payload_bytes = 256: a completion is a TLP and carries at "
            "most the max payload");
}

// The message of loading and checking `text` as a parameter file, without
// the file name.
std::string checked_error(const std::string& text) {
  TempDir d;
  std::string path = d.file("c.params", text);
  Params p;
  try {
    load_params_file(p, path);
    check_params(p, path);
  } catch (const ConfigError& e) {
    return std::string(e.what()).substr(path.size());
  }
  return "";
}

// Issue 18: a rule between parameters names the line that set the last of
// them (it used to name the file as a whole).
TEST(ParamChecks, RulesNameTheLineToChange) {
  EXPECT_EQ(checked_error("read_completion_boundary = 128\n# x\nmax_payload_bytes = 128\nhost_cpl_bytes = 64\n"),
            ":4: read_completion_boundary = 128 exceeds host_cpl_bytes = 64: completions are whole "
            "multiples of the RCB");
  EXPECT_EQ(checked_error("output_queue_tlps = 1\n"),
            ":1: ring_bubble_tlps = 1 must be below output_queue_tlps = 1: no TLP could ever enter a ring");
  EXPECT_EQ(checked_error("rx_posted_data_credits = 8\n"),
            ":1: rx_posted_data_credits = 8 cannot hold one max_payload_bytes = 256 TLP (16 bytes per "
            "credit; 0 = infinite)");
}

// A second line for a parameter used to win silently; a NUL byte used to
// end the value unseen ("12\0x" read as 12).
TEST(ParamChecks, RepeatedParametersAndNulBytesAreRefused) {
  EXPECT_EQ(params_error("link_latency_ns = 1\n# again\nlink_latency_ns = 2\n"),
            ":3: parameter 'link_latency_ns' is already set on line 1");
  EXPECT_EQ(params_error(std::string("chip_mhz = 100\nlink_latency_ns = 12\0x\n", 38)),
            ":2: NUL byte in the line (not a text file?)");
  EXPECT_EQ(params_error(std::string("link_latency_ns = 12 # \0\n", 25)),
            ":1: NUL byte in the line (not a text file?)");
  EXPECT_EQ(topo_error(std::string("ring 4\0\n", 8)), "T:1: NUL byte in the line (not a text file?)");
}

// MPI_Init's own rules (mpi/p2mpi_engine.c), checked at load instead of in every
// rank once the job runs: the layer's share of host memory holds its queues,
// 384 eager buffers and 1 MiB of staging.
TEST(ParamChecks, MpiShareHoldsTheLayer) {
  EXPECT_EQ(checked_error("mpi_eager_bytes = 1048576\n"),
            ":1: mpi_host_bytes = 67108864 cannot hold the MPI layer's queues and 384 eager buffers of "
            "mpi_eager_bytes = 1048576 and 1 MiB of rendezvous staging: they need 403939328 bytes");
  EXPECT_EQ(checked_error("mpi_eager_bytes = 1048576\nmpi_host_bytes = 403939328\n"), "");
  EXPECT_EQ(checked_error("mpi_eager_bytes = 1048576\nmpi_host_bytes = 403939264\n"),
            ":2: mpi_host_bytes = 403939264 cannot hold the MPI layer's queues and 384 eager buffers of "
            "mpi_eager_bytes = 1048576 and 1 MiB of rendezvous staging: they need 403939328 bytes");
  EXPECT_EQ(checked_error("mpi_eager_bytes = 64\nmpi_host_bytes = 1048576\n"),
            ":2: mpi_host_bytes = 1048576 cannot hold the MPI layer's queues and 384 eager buffers of "
            "mpi_eager_bytes = 64 and 1 MiB of rendezvous staging: they need 1310720 bytes");
}

// Issue 37: an eager buffer must hold a one-sided accumulate's element pair
// of the widest predefined datatype (MPI_Compare_and_swap of a
// MPI_C_LONG_DOUBLE_COMPLEX: 64 bytes); 0 was accepted and every
// MPI_Accumulate failed at run time.
TEST(ParamChecks, MpiEagerBuffersHoldAnAccumulate) {
  EXPECT_EQ(checked_error("mpi_eager_bytes = 0\n"), ":1: mpi_eager_bytes = 0: must be in [64, 1048576]");
  EXPECT_EQ(checked_error("mpi_eager_bytes = 63\n"), ":1: mpi_eager_bytes = 63: must be in [64, 1048576]");
  EXPECT_EQ(checked_error("mpi_eager_bytes = 64\n"), "");
}

// The share comes off the top of host memory: with `device ib` (MPI can run)
// it must fit; without, it is taken only when it fits, and tcaMalloc keeps
// its minimum either way.
TEST(ParamChecks, MpiShareFitsHostMemory) {
  const std::string ib = "torus 2 8\ndevice peach2\ndevice ib\n";
  EXPECT_EQ(topo_error(ib, "mpi_host_bytes = 1073741824\n"),
            "P:1: device ib: mpi_host_bytes = 1073741824 leaves nothing of host_memory_bytes = 268435456 "
            "to tcaMalloc, less than its minimum 1048576 (the MPI layer takes the top mpi_host_bytes)");
  EXPECT_EQ(topo_error(ib, "mpi_host_bytes = 1073741824\nhost_memory_bytes = 1074790400\n"), "");
  EXPECT_EQ(topo_error(ib, "host_memory_bytes = 67108864\n"),
            "P:1: device ib: mpi_host_bytes = 67108864 leaves nothing of host_memory_bytes = 67108864 to "
            "tcaMalloc, less than its minimum 1048576 (the MPI layer takes the top mpi_host_bytes)");
  // Defaults alone never break it; a TCA-only cluster lends MPI nothing.
  EXPECT_EQ(topo_error(ib), "");
  EXPECT_EQ(topo_error("ring 2\n", "mpi_host_bytes = 1073741824\n"), "");
  EXPECT_EQ(topo_error("ring 2\n", "host_memory_bytes = 1048576\n"), "");
  EXPECT_EQ(topo_error("ring 2\n", "host_memory_bytes = 67633152\n"),
            "P:1: mpi_host_bytes = 67108864 leaves 524288 bytes of host_memory_bytes = 67633152 to "
            "tcaMalloc, less than its minimum 1048576");
}

TEST(ParamChecks, ShippedFilesPassTheChecks) {
  const std::string src = P2_SOURCE_DIR;
  for (const char* params_file : {"", "/tests/golden/model-golden.params"}) {
    Params p;
    const std::string pf = *params_file ? src + params_file : "";
    if (!pf.empty()) load_params_file(p, pf);
    for (const char* topo : {"hapacs-tca-2x8.topo", "tcamini-ring8.topo", "ring4-explicit.topo",
                             "hapacs-tca-64.topo", "tcamini-ring8-ib.topo"}) {
      SCOPED_TRACE(std::string(topo) + " " + pf);
      EXPECT_NO_THROW(validate_config(p, pf, load_topology(src + "/topologies/" + topo, p)));
    }
  }
}

// ---- Bounded input files --------------------------------------------------------

std::string read_error(const std::string& path) {
  try {
    read_config_file(path, "test file");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigFiles, NonRegularFilesAreRefusedWithoutBlocking) {
  TempDir d;
  std::string fifo = d.path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Used to block in open() (no writer) or read forever.
  EXPECT_EQ(read_error(fifo), fifo + ": not a regular file");
  EXPECT_EQ(read_error("/dev/zero"), "/dev/zero: not a regular file");
  EXPECT_EQ(read_error("/dev/urandom"), "/dev/urandom: not a regular file");
  EXPECT_EQ(read_error("/tmp"), "/tmp: not a regular file");
  EXPECT_EQ(read_error(d.path("missing")), d.path("missing") + ": cannot open test file: No such file or directory");

  Params p;
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    try {
      load_topology(path, p);
      ADD_FAILURE() << path << " accepted as topology";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), path + ": not a regular file");
    }
    EXPECT_THROW(load_params_file(p, path), ConfigError);
    EXPECT_THROW(load_mapping(path, 2, 4), ConfigError);
  }
}

TEST(ConfigFiles, SizeAndLineLengthAreCapped) {
  TempDir d;
  std::string big = d.file("big", std::string(kMaxConfigFileBytes + 1, '#'));
  EXPECT_EQ(read_error(big), big + ": test file larger than 1048576 bytes");
  std::string just = d.file("just", std::string(kMaxConfigFileBytes / 2, '\n'));
  EXPECT_EQ(read_error(just), "");
  std::string lines = "# ok\n" + std::string(kMaxConfigLineBytes, ' ') + "\n#" +
                      std::string(kMaxConfigLineBytes, 'x') + "\n";
  std::string longline = d.file("long", lines);
  EXPECT_EQ(read_error(longline), longline + ":3: line longer than 4096 characters");
  Params p;
  try {
    load_topology(big, p);
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), big + ": topology file larger than 1048576 bytes");
  }
}

}  // namespace
}  // namespace p2
