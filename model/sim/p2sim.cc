// p2sim.cc - the simulator process of a virtual-cluster job. p2run starts it
// with the job segment's name and the job's configuration; it loads the
// parameters, topology, mapping and routing policy, creates the nodes' memory
// arenas, builds the cluster and serves the ranks (frontend.h) until they are
// all gone.
//
//   p2sim --job SHM_NAME --topology FILE [--map FILE] [--routing POLICY]
//         [--params FILE] [--clock model|cpu|instructions[=RATE]]
//         [--stall SECONDS] [--trace FILE] [--stats FILE] [--traffic FILE]
//   p2sim --list-params [--params FILE]
//   p2sim --routes FILE --topology FILE [--routing POLICY] [--params FILE]
//
// --traffic: every transfer the networks' units start, as CSV
// (stats/traffic_log.h). --routes: the topology's PEACH2 cables and routes as
// JSON (write_routes_json, topo/topology.h), for p2map; no job.
//
// Exit status: 0 every rank finished; 2 a bad flag or input file (the message
// names it, "file:line: reason"), or a --stats or --trace file that could not
// be written whole; 3 a deadlock (every rank's wait printed); 5 no progress
// for --stall seconds (every rank's state printed); 128 + signal when
// stopped.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <systemc>

#include "arena.h"
#include "channel.h"
#include "shm_guard.h"
#include "wl_options.h"
#include "sr8000/config.h"
#include "sim/cluster.h"
#include "sim/frontend.h"
#include "core/params.h"
#include "topo/topology.h"

namespace {

constexpr int kConfigStatus = 2;

// A rank's PIO stores travel in channel requests; one store must fit one.
static_assert(p2::kMaxPioStoreBytes <= P2_CHAN_DATA_BYTES,
              "params.def: pio_store_bytes may exceed what one channel request carries");

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_stop_sender = 0;  // pid that sent the stop signal
volatile std::sig_atomic_t g_dump = 0;
void on_stop(int sig, siginfo_t* info, void*) {
  if (!g_stop) g_stop_sender = info ? info->si_pid : 0;
  g_stop = sig;
}
void on_dump(int) { g_dump = 1; }

struct Options {
  std::string job, topology, map, routing = "ring-split", params, clock = "model", trace, stats;
  std::string traffic, routes;
  std::string rate;     // --clock instructions=RATE: instructions_per_ns
  double stall_s = 60;  // --stall: host seconds without progress (0: never)
  bool list_params = false;
};

// Parses "--flag value" and "--flag=value" (wl_options.h). Returns an error
// message or "".
std::string parse_options(int argc, char** argv, Options& o) {
  const char *job = nullptr, *topology = nullptr, *map = nullptr, *routing = nullptr,
             *params = nullptr, *clock = nullptr, *trace = nullptr, *stats = nullptr,
             *stall = nullptr, *traffic = nullptr, *routes = nullptr;
  int list_params = 0;
  const wl_option flags[] = {{"--job", WL_OPTION_STRING, &job, "SHM_NAME", nullptr},
                             {"--topology", WL_OPTION_STRING, &topology, "FILE", nullptr},
                             {"--map", WL_OPTION_STRING, &map, "FILE", nullptr},
                             {"--routing", WL_OPTION_STRING, &routing, "POLICY", nullptr},
                             {"--params", WL_OPTION_STRING, &params, "FILE", nullptr},
                             {"--clock", WL_OPTION_STRING, &clock, "model|cpu|instructions[=RATE]",
                              nullptr},
                             {"--stall", WL_OPTION_STRING, &stall, "SECONDS", nullptr},
                             {"--trace", WL_OPTION_STRING, &trace, "FILE", nullptr},
                             {"--stats", WL_OPTION_STRING, &stats, "FILE", nullptr},
                             {"--traffic", WL_OPTION_STRING, &traffic, "FILE", nullptr},
                             {"--routes", WL_OPTION_STRING, &routes, "FILE", nullptr},
                             {"--list-params", WL_OPTION_FLAG, &list_params, nullptr, nullptr}};
  // A second one would silently replace the first.
  const wl_args args = {WL_SYNTAX_LONG_EQUALS | WL_SYNTAX_ONCE, flags, std::size(flags), nullptr,
                        nullptr};
  wl_args_result r;
  if (wl_parse_args(&args, argc, argv, &r) != WL_PARSE_OK) {
    const std::string name = r.option ? r.option->name : "";
    switch (r.error) {
      case WL_ARGS_UNKNOWN: return "unknown flag '" + std::string(r.arg) + "'";
      case WL_ARGS_MISSING: return "flag '" + name + "' needs a value";
      case WL_ARGS_TWICE: return "flag '" + name + "' is given twice";
      default: return "flag '" + name + "': '" + r.value + "'";  // not reached: strings
    }
  }
  const std::pair<const char*, std::string*> given[] = {
      {job, &o.job},       {topology, &o.topology}, {map, &o.map},     {routing, &o.routing},
      {params, &o.params}, {clock, &o.clock},       {trace, &o.trace}, {stats, &o.stats},
      {traffic, &o.traffic}, {routes, &o.routes}};
  for (const auto& [value, field] : given)
    if (value) *field = value;
  o.list_params = list_params != 0;
  if (o.clock.rfind("instructions=", 0) == 0) {
    o.rate = o.clock.substr(std::strlen("instructions="));
    o.clock = "instructions";
  }
  if (o.clock != "model" && o.clock != "cpu" && o.clock != "instructions")
    return "--clock: '" + o.clock + "' is not 'model', 'cpu' or 'instructions[=RATE]'";
  if (stall) {
    char* end;
    errno = 0;
    o.stall_s = std::strtod(stall, &end);
    if (errno || end == stall || *end || !(o.stall_s >= 0))
      return "--stall: '" + std::string(stall) + "' is not a number of seconds (0: never)";
  }
  if (!o.list_params && o.routes.empty() && o.job.empty())
    return "--job is required (p2sim is started by p2run)";
  if (!o.list_params && o.topology.empty()) return "--topology is required";
  return "";
}

// Host time, for the --stats summary only: nothing in the model reads it.
double monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The simulator's own cost: wall time since `started`, peak resident memory.
p2::ProcessStats process_stats(double started) {
  p2::ProcessStats p;
  p.wall_s = monotonic_s() - started;
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) == 0) p.peak_rss_kib = static_cast<uint64_t>(ru.ru_maxrss);
  return p;
}

// The --stats and --trace files once the job is over. A write that fails
// there (a full disk, a file that takes no data) fails the job, which would
// otherwise claim an output it does not have.
int finish_outputs(p2::Cluster& cluster, std::ofstream& stats, const Options& opt,
                   double started, const p2::ProgramWork& work, int status) {
  if (status == 0 && stats.is_open()) {
    const p2::ProcessStats process = process_stats(started);
    cluster.write_stats_json(stats, &process, &work);
    errno = 0;
    stats.close();
    if (!stats) {
      std::cerr << "p2sim: --stats: writing '" << opt.stats << "' failed"
                << (errno ? std::string(": ") + std::strerror(errno) : "") << "\n";
      status = kConfigStatus;
    }
  }
  if (std::string error = cluster.finish_trace(); !error.empty()) {
    std::cerr << "p2sim: --trace: " << error << "\n";
    if (status == 0) status = kConfigStatus;
  }
  if (std::string error = cluster.finish_traffic(); !error.empty()) {
    std::cerr << "p2sim: --traffic: " << error << "\n";
    if (status == 0) status = kConfigStatus;
  }
  return status;
}

// --routes: the topology's cables and routes for p2map (no job).
int write_routes(const Options& opt) {
  try {
    p2::Params params;
    if (!opt.params.empty()) p2::load_params_file(params, opt.params);
    p2::check_params(params, opt.params);
    const p2::Topology topo = p2::load_topology(opt.topology, params);
    const p2::RoutingPolicy policy = p2::parse_routing_policy(opt.routing);
    std::ofstream out(opt.routes);
    if (!out) throw p2::ConfigError("--routes", 0, "cannot write '" + opt.routes + "': " + std::strerror(errno));
    const bool sr8000 = std::any_of(topo.devices.begin(), topo.devices.end(),
                                    [](const p2::TopoDevice& d) { return d.kind == "sr8000"; });
    if (sr8000)
      p2::write_sr8000_routes_json(out, topo, params);
    else
      p2::write_routes_json(out, topo, policy, params);
    out.close();
    if (!out) throw p2::ConfigError("--routes", 0, "writing '" + opt.routes + "' failed");
  } catch (const p2::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return kConfigStatus;
  } catch (const std::logic_error& e) {  // no PEACH2 routing for this topology
    std::cerr << "p2sim: --routes: " << opt.topology << ": " << e.what() << "\n";
    return kConfigStatus;
  }
  return 0;
}

// The job segment's end of the simulator's life: ranks and p2run stop waiting
// for it, whichever way it exits.
struct JobEnd {
  p2_job* job = nullptr;
  p2_job_local local{};  // what we act on: never read back from the segment
  std::vector<std::string> arenas;
  void end(int status) {
    for (const std::string& a : arenas) shm_unlink(a.c_str());
    arenas.clear();
    if (!job) return;
    // p2run removes every segment of the job; if it was killed (we were
    // stopped because our parent died), nobody else will.
    if (getppid() != local.launcher_pid) p2_job_unlink_all(local.name);
    p2_st_sc(&job->sim_verdict, status);
    p2_st_sc(&job->sim_state, static_cast<uint32_t>(P2_SIM_ENDED));
    // Ranks still attaching stop waiting now. Ranks blocked in a call are not
    // woken: after a deadlock p2run ends them, and they would only print noise;
    // they notice on their own within P2_CHAN_LIVENESS_US otherwise.
    p2_futex_wake(&job->sim_state, INT_MAX);
  }
};

}  // namespace

int sc_main(int argc, char** argv) {
  const double started = monotonic_s();
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  Options opt;
  if (std::string err = parse_options(argc, argv, opt); !err.empty()) {
    std::cerr << "p2sim: " << err << "\n";
    return kConfigStatus;
  }

  p2::Params params;
  if (opt.list_params) {
    try {
      if (!opt.params.empty()) p2::load_params_file(params, opt.params);
      p2::check_params(params, opt.params);
    } catch (const p2::ConfigError& e) {
      std::cerr << e.what() << "\n";
      return kConfigStatus;
    }
    std::cout << p2::params_markdown(params);
    return 0;
  }

  if (!opt.routes.empty()) return write_routes(opt);

  char err[256];
  JobEnd job_end;
  p2_job* job = p2_job_attach(opt.job.c_str(), &job_end.local, err, sizeof err);
  if (!job) {
    std::cerr << "p2sim: " << err << "\n";
    return kConfigStatus;
  }
  job_end.job = job;
  const p2_job_local& local = job_end.local;
  p2_shm_guard(job, local.bytes, opt.job.c_str());
  struct sigaction sa {};
  sa.sa_sigaction = on_stop;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  sa.sa_flags = 0;
  sa.sa_handler = on_dump;
  sigaction(SIGUSR1, &sa, nullptr);

  const unsigned nranks = local.nranks;
  const p2_clock_mode clock = opt.clock == "cpu"            ? P2_CLOCK_CPU
                              : opt.clock == "instructions" ? P2_CLOCK_INSTRUCTIONS
                                                            : P2_CLOCK_MODEL;
  std::unique_ptr<p2::Cluster> cluster;
  std::vector<unsigned> rank_node;
  std::ofstream stats;
  try {
    if (!opt.params.empty()) p2::load_params_file(params, opt.params);
    // --clock instructions=RATE: the command line's rate over the file's
    if (!opt.rate.empty())
      p2::set_param(params, "instructions_per_ns", opt.rate, "--clock instructions", 0,
                    {p2::ParamScope::Rank});
    p2::Topology topo = p2::load_topology(opt.topology, params);
    p2::validate_config(params, opt.params, topo);
    p2::RoutingPolicy policy = p2::parse_routing_policy(opt.routing);
    if (!opt.map.empty()) {
      rank_node = p2::load_mapping(opt.map, nranks, topo.nodes);
    } else {
      if (nranks > topo.nodes)
        throw p2::ConfigError(opt.topology, 0,
                              std::to_string(nranks) + " ranks do not fit on the topology's " +
                                  std::to_string(topo.nodes) + " nodes");
      rank_node = p2::identity_mapping(nranks);
    }
    // The routes as the network will build them, for the collectives' cost
    // model (which cables each transfer crosses).
    // A topology without PEACH2 cabling between its nodes (an SR8000's
    // crossbars) has no such routes: the tables stay "none" (0xff) and the
    // cost model falls back to its ring assumption.
    std::memset(job->route_port, 0xff, sizeof job->route_port);
    std::memset(job->port_peer, 0xff, sizeof job->port_peer);
    try {
      const p2::RouteTable routes = p2::build_routes(topo, policy);
      const unsigned nn = std::min<unsigned>(topo.nodes, P2_JOB_MAX_RANKS);
      for (unsigned n = 0; n < nn; n++) {
        for (unsigned d = 0; d < nn; d++)
          job->route_port[n][d] = routes[n][d] == p2::kNoRoute ? 0xff : static_cast<uint8_t>(routes[n][d]);
        for (unsigned port = P2_PORT_E; port < P2_PORT_COUNT; port++) {
          const p2::PortRef ref{n, static_cast<p2_port>(port)};
          if (const p2::TopoLink* l = topo.link_at(ref))
            job->port_peer[n][port] = static_cast<uint8_t>(l->a == ref ? l->b.node : l->a.node);
        }
      }
    } catch (const std::logic_error&) {
      std::memset(job->route_port, 0xff, sizeof job->route_port);
      std::memset(job->port_peer, 0xff, sizeof job->port_peer);
    }
    // Each device's networks: PEACH2's as the cables join the nodes (its
    // sub-clusters), one network for the others.
    std::memset(job->device_network, P2_JOB_NO_NETWORK, sizeof job->device_network);
    for (size_t d = 0; d < topo.devices.size() && d < P2_JOB_MAX_DEVICES; d++)
      for (unsigned n = 0; n < topo.nodes && n < P2_JOB_MAX_RANKS; n++)
        job->device_network[d][n] = static_cast<uint8_t>(
            topo.devices[d].kind == "peach2" && n < topo.network.size() ? topo.network[n] : 0);
    if (!opt.stats.empty()) {
      stats.open(opt.stats);
      if (!stats) throw p2::ConfigError("--stats", 0, "cannot write '" + opt.stats + "': " +
                                                          std::strerror(errno));
    }

    // Arenas for the nodes that run a rank; the cluster maps anonymous memory
    // for the others.
    std::vector<p2::NodeMemory> memory(topo.nodes);
    const uint64_t host_bytes = static_cast<uint64_t>(params.host_memory_bytes);
    const uint64_t gpu_bytes = static_cast<uint64_t>(params.gpu_memory_bytes);
    for (unsigned r = 0; r < nranks; r++) {
      unsigned n = rank_node[r];
      p2_arena host{}, gpu{};
      for (p2_arena_kind kind : {P2_ARENA_HOST, P2_ARENA_GPU}) {
        p2_arena& a = kind == P2_ARENA_HOST ? host : gpu;
        uint64_t size = kind == P2_ARENA_HOST ? host_bytes : gpu_bytes;
        if (p2_arena_create(local.name, n, kind, size, &a, err, sizeof err) != 0) {
          std::cerr << "p2sim: " << err << "\n";
          job_end.end(kConfigStatus);
          return kConfigStatus;
        }
        char name[128];
        p2_arena_name(local.name, n, kind, name, sizeof name);
        job_end.arenas.push_back(name);
        p2_shm_guard(a.base, a.size, name);
      }
      memory[n] = p2::NodeMemory{host.base, host.size, gpu.base, gpu.size};
    }

    cluster = std::make_unique<p2::Cluster>(topo, params, policy, memory);
    if (!opt.trace.empty()) cluster->enable_trace(opt.trace);
    if (!opt.traffic.empty()) cluster->enable_traffic(opt.traffic);
  } catch (const p2::ConfigError& e) {
    std::cerr << e.what() << "\n";
    job_end.end(kConfigStatus);
    return kConfigStatus;
  }

  // Tell the ranks where they run and what their calls cost, then open the doors.
  job->nnodes = cluster->nodes();
  // The topology parser knows fewer kinds than the channel has room for.
  static_assert(P2_JOB_MAX_DEVICES >= 1, "room for the default device");
  job->ndevices = std::min<unsigned>(cluster->device_count(), P2_JOB_MAX_DEVICES);
  for (unsigned d = 0; d < job->ndevices; d++)
    std::snprintf(job->device[d], sizeof job->device[d], "%s", cluster->network(d).kind());
  for (unsigned r = 0; r < nranks; r++) job->rank_node[r] = rank_node[r];
  job->host_bytes = static_cast<uint64_t>(params.host_memory_bytes);
  job->gpu_bytes = static_cast<uint64_t>(params.gpu_memory_bytes);
  // Every RANK row of params.def, as the parameter file set it (p2_params.h).
#define P2_PARAM(name, def, min, max, unit, scope, layer, meaning, source) \
  P2_IF_RANK_##scope(job->rank_params.name = params.name;)
#include "params.def"
#undef P2_PARAM
  // A link's payload rate with MPS-sized TLPs (4-DW headers: the cluster's bus
  // addresses are above 4 GiB), for the collectives' cost model; the model
  // itself serialises every TLP (pcie/link.h).
  job->link_payload_Bps = p2::link_payload_Bps(params);
  job->host_read_Bps = p2_gbps_Bps(params.host_read_gbps);
  job->gpu_read_Bps = p2_gbps_Bps(params.gpu_read_gbps);
  p2_st_sc(&job->sim_pid, static_cast<int32_t>(getpid()));
  p2_st_sc(&job->sim_state, static_cast<uint32_t>(P2_SIM_READY));
  p2_futex_wake(&job->sim_state, INT_MAX);

  p2::Frontend frontend(job, *cluster, rank_node, clock, {&g_stop, &g_dump, opt.stall_s});
  int status = frontend.run();
  // The ranks' own work outside the libraries, which the clock may not charge.
  const p2::ProgramWork work = frontend.program_work();
  if (status == 0 || status == p2::Frontend::kDeadlockStatus ||
      status == p2::Frontend::kStallStatus)
    frontend.report_program_work(std::cerr);
  if (g_stop && g_stop_sender != local.launcher_pid) {
    // Stopped by someone other than p2run (which says why it ends a job):
    // say so, or the job ends without a word.
    const int sig = g_stop;
    const char* abbrev = sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP";
    char when[48];
    std::snprintf(when, sizeof when, "%.3f us",
                  static_cast<double>(frontend.now_ps()) / 1e6);
    std::cerr << "p2sim: terminated by signal " << sig << " (" << abbrev << ", sent by pid "
              << g_stop_sender << ") at simulated time " << when << ":\n";
    frontend.print_ranks(std::cerr);
  }
  status = finish_outputs(*cluster, stats, opt, started, work, status);
  job_end.end(status);
  std::cout.flush();
  std::cerr.flush();
  // The cluster's SystemC modules are not torn down one by one: the process
  // ends here, and the kernel frees its memory.
  _exit(status);
}
