// Rank-to-node mapping files: the shipped ones, and every malformed input.
#include <gtest/gtest.h>

#include "topo/topology.h"
#include "topo_test_util.h"

namespace p2 {
namespace {

using topotest::source_path;
using topotest::TempFile;

// The message of loading `text` with the temp file's path cut off ("" if none).
std::string error_of(const std::string& text, unsigned nranks, unsigned nnodes) {
  TempFile f(text);
  try {
    load_mapping(f.path(), nranks, nnodes);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), f.path());
    return std::string(e.what()).substr(f.path().size());
  }
  return "";
}

TEST(Mapping, Identity) {
  EXPECT_EQ(identity_mapping(4), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_TRUE(identity_mapping(0).empty());
  EXPECT_EQ(load_mapping(source_path("topologies/identity-16.map"), 16, 16), identity_mapping(16));
  EXPECT_EQ(load_mapping(source_path("topologies/identity-16.map"), 4, 16), identity_mapping(4));
}

TEST(Mapping, SnakeMakesConsecutiveRanksNeighbours) {
  Topology t = load_topology(source_path("topologies/hapacs-tca-2x8.topo"), Params());
  std::vector<unsigned> snake = load_mapping(source_path("topologies/hapacs-2x8-snake.map"), 16, t.nodes);
  std::vector<unsigned> ident = identity_mapping(16);
  EXPECT_EQ(snake[7], 7u);
  EXPECT_EQ(snake[8], 15u);
  EXPECT_EQ(snake[15], 8u);
  unsigned snake_far = 0, ident_far = 0;
  for (unsigned r = 0; r < 16; ++r) {
    unsigned next = (r + 1) % 16;
    EXPECT_EQ(t.hop_distance(snake[r], snake[next]), 1u) << "rank " << r;
    snake_far += t.hop_distance(snake[r], snake[next]) > 1;
    ident_far += t.hop_distance(ident[r], ident[next]) > 1;
  }
  EXPECT_EQ(snake_far, 0u);
  EXPECT_EQ(ident_far, 2u);  // 7->8 and 15->0 cross the ring wrap and S
}

TEST(Mapping, FewerRanksThanNodes) {
  TempFile f("# two ranks on a 4-node ring\n\n0 3   # rank 0 far away\n1 0\n");
  EXPECT_EQ(load_mapping(f.path(), 2, 4), (std::vector<unsigned>{3, 0}));
}

TEST(Mapping, Errors) {
  EXPECT_EQ(error_of("0 0\n1 x\n", 2, 2), ":2: bad number 'x' for a node");
  EXPECT_EQ(error_of("-1 0\n", 2, 2), ":1: bad number '-1' for a rank");
  EXPECT_EQ(error_of("0 0 0\n", 2, 2), ":1: expected 'RANK NODE'");
  EXPECT_EQ(error_of("0\n", 2, 2), ":1: expected 'RANK NODE'");
  EXPECT_EQ(error_of("0 0\n512 1\n", 2, 4), ":2: rank 512 out of range (ranks 0..511)");
  // A file for a larger job serves a smaller one; its extra lines are still checked.
  EXPECT_EQ(error_of("0 0\n1 1\n2 1\n", 2, 4), ":3: node 1 already has rank 1 (line 2); one rank per node");
  EXPECT_EQ(error_of("0 0\n1 4\n", 2, 4), ":2: node 4 out of range (nodes 0..3)");
  EXPECT_EQ(error_of("0 0\n# c\n0 1\n", 2, 4), ":3: rank 0 is already mapped on line 1");
  EXPECT_EQ(error_of("0 2\n1 2\n", 2, 4), ":2: node 2 already has rank 0 (line 1); one rank per node");
  EXPECT_EQ(error_of("0 0\n2 2\n", 4, 4), ": no node given for rank(s) 1, 3 (every rank 0..3 needs a line)");
  EXPECT_EQ(error_of("", 1, 1), ": no node given for rank(s) 0 (every rank 0..0 needs a line)");
  EXPECT_EQ(error_of("0 0\n", 5, 4), ": 5 ranks do not fit on 4 nodes (one rank per node)");
  try {
    load_mapping("/nonexistent/x.map", 1, 1);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/x.map: cannot open mapping file: No such file or directory");
  }
}

}  // namespace
}  // namespace p2
