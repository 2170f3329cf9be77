// mapping.cc - which node each rank runs on. Routing is fixed, so where ranks
// sit decides which of their messages share links; mapping files let a user
// choose that (topologies/README.md, "Mapping files").
#include <optional>
#include <sstream>

#include "topo/text.h"
#include "topo/topology.h"

namespace p2 {


std::vector<unsigned> load_mapping(const std::string& path, unsigned nranks, unsigned nnodes) {
  std::istringstream in(read_config_file(path, "mapping file"));
  if (nranks > nnodes)
    throw ConfigError(path, 0, std::to_string(nranks) + " ranks do not fit on " + std::to_string(nnodes) +
                                   " nodes (one rank per node)");
  // A mapping file may describe more ranks than this job runs (one file for
  // every job size); lines of the ranks beyond are checked but not used.
  std::vector<int> rank_line(P2_BUS_NODES, 0);  // line that mapped each rank
  std::vector<int> node_line(nnodes, 0);  // line that used each node
  std::vector<unsigned> node_rank(nnodes, 0);
  std::vector<unsigned> map(nranks, 0);
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    if (auto hash = raw.find('#'); hash != std::string::npos) raw.resize(hash);
    std::istringstream words(raw);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty()) continue;
    if (w.size() != 2) throw ConfigError(path, line, "expected 'RANK NODE'");
    auto rank = to_unsigned(w[0]);
    if (!rank) throw ConfigError(path, line, "bad number '" + w[0] + "' for a rank");
    auto node = to_unsigned(w[1]);
    if (!node) throw ConfigError(path, line, "bad number '" + w[1] + "' for a node");
    // As many ranks as the largest topology has nodes (an SR8000's 512).
    if (*rank >= P2_BUS_NODES)
      throw ConfigError(path, line, "rank " + w[0] + " out of range (ranks 0.." + std::to_string(P2_BUS_NODES - 1) + ")");
    if (*node >= nnodes)
      throw ConfigError(path, line, "node " + w[1] + " out of range (nodes 0.." + std::to_string(nnodes - 1) + ")");
    if (rank_line[*rank])
      throw ConfigError(path, line, "rank " + w[0] + " is already mapped on line " +
                                        std::to_string(rank_line[*rank]));
    if (node_line[*node])
      throw ConfigError(path, line, "node " + w[1] + " already has rank " + std::to_string(node_rank[*node]) +
                                        " (line " + std::to_string(node_line[*node]) + "); one rank per node");
    rank_line[*rank] = line;
    node_line[*node] = line;
    node_rank[*node] = *rank;
    if (*rank < nranks) map[*rank] = *node;
  }
  std::string missing;
  for (unsigned r = 0; r < nranks; ++r)
    if (!rank_line[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  if (!missing.empty())
    throw ConfigError(path, 0, "no node given for rank(s) " + missing + " (every rank 0.." +
                                   std::to_string(nranks - 1) + " needs a line)");
  return map;
}

std::vector<unsigned> identity_mapping(unsigned nranks) {
  std::vector<unsigned> map(nranks);
  for (unsigned r = 0; r < nranks; ++r) map[r] = r;
  return map;
}

}  // namespace p2
