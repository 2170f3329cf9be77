#include "peach2/credit_cycle.h"

#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "peach2/network.h"
#include "peach2/router.h"

namespace p2 {

namespace {

const char* class_name(int c) {
  switch (static_cast<FcClass>(c)) {
    case FcClass::Posted: return "posted";
    case FcClass::NonPosted: return "non-posted";
    case FcClass::Completion: return "completion";
  }
  return "?";
}

struct StuckPort {
  unsigned node;
  p2_port port;
  bool operator<(const StuckPort& o) const {
    return node != o.node ? node < o.node : port < o.port;
  }
  bool operator==(const StuckPort& o) const { return node == o.node && port == o.port; }
};

}  // namespace

std::string describe_credit_cycle(Peach2Network& cluster, unsigned nodes) {
  const p2_port cabled[] = {P2_PORT_E, P2_PORT_W, P2_PORT_S};
  std::map<const LinkPort*, StuckPort> where;
  for (unsigned n = 0; n < nodes; ++n)
    for (p2_port p : cabled)
      if (LinkPort* l = cluster.chip(n).router().link(p)) where[l] = StuckPort{n, p};

  // An output is stuck when its board refuses more TLPs for it and TLPs wait
  // on its link for credits.
  auto stuck = [&](StuckPort r) {
    Router& router = cluster.chip(r.node).router();
    LinkPort* l = router.link(r.port);
    return l && router.output_full(xbar_of(r.port)) && l->tx_queued() > 0;
  };
  // The stuck output that the far end's head TLP waits for, if any.
  auto next = [&](StuckPort r, StuckPort* far_in, StuckPort* out) {
    LinkPort* l = cluster.chip(r.node).router().link(r.port);
    auto it = where.find(&l->peer());
    if (it == where.end()) return false;  // the far end is a host
    *far_in = it->second;
    Router& far = cluster.chip(far_in->node).router();
    Xbar x = far.head_output(xbar_of(far_in->port));
    if (x != Xbar::E && x != Xbar::W && x != Xbar::S) return false;
    *out = StuckPort{far_in->node, static_cast<p2_port>(x)};
    return stuck(*out);
  };

  std::set<StuckPort> seen;
  for (const auto& [link, start] : where) {
    if (seen.count(start) || !stuck(start)) continue;
    // Every stuck output waits for at most one other: follow the chain.
    std::vector<StuckPort> path;
    std::map<StuckPort, size_t> index;
    StuckPort cur = start;
    for (;;) {
      if (index.count(cur)) break;  // a cycle, starting at index[cur]
      if (seen.count(cur)) {
        cur = StuckPort{~0u, P2_PORT_N};
        break;
      }
      index[cur] = path.size();
      path.push_back(cur);
      seen.insert(cur);
      StuckPort far_in{}, out{};
      if (!next(cur, &far_in, &out)) {
        cur = StuckPort{~0u, P2_PORT_N};
        break;
      }
      cur = out;
    }
    if (cur.node == ~0u) continue;
    std::ostringstream s;
    s << "credit deadlock: ";
    size_t tlps = 0;
    int cls = -1;
    bool mixed = false;
    for (size_t i = index[cur]; i < path.size(); ++i) {
      const StuckPort& r = path[i];
      LinkPort* l = cluster.chip(r.node).router().link(r.port);
      const StuckPort far = where[&l->peer()];
      tlps += l->tx_queued() + cluster.chip(far.node).router().input_depth(xbar_of(far.port));
      int c = l->tx_oldest_class();
      if (cls >= 0 && c != cls) mixed = true;
      cls = c;
      s << (i == index[cur] ? "" : ", ") << "node " << r.node << ' ' << xbar_name(xbar_of(r.port))
        << " -> node " << far.node << ' ' << xbar_name(xbar_of(far.port));
    }
    s << " hold " << tlps << " TLPs waiting for " << (mixed ? "link" : class_name(cls))
      << " credits: each board's input buffer is full of TLPs for the next cable of the cycle"
         " (PEACH2 has no virtual channels; topologies/README.md)";
    return s.str();
  }
  return "";
}

}  // namespace p2
