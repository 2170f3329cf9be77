// topology.cc - topology files, the torus/ring generators and the checks that
// keep a cabling physically possible (one RC and one EP per link, one cable
// per port, every node reachable, or the PEACH2 networks a `networks` line
// declares). Format: topologies/README.md.
#include "topo/topology.h"
#include "topo/text.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <queue>
#include <sstream>
#include <string_view>

namespace p2 {

namespace {

constexpr const char* kPortNames[P2_PORT_COUNT] = {"N", "E", "W", "S"};

// Our own text for a LinkEndKind: topology must not depend on link.cc being
// linked in just to print an error.
const char* kind_text(LinkEndKind k) {
  return k == LinkEndKind::RootComplex ? "Root Complex" : "Endpoint";
}

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

using Overrides = std::vector<std::pair<std::string, std::string>>;

// Sets or replaces one override, so a later `set` wins over the default and
// each name appears once.
void put_override(Overrides& ov, const std::string& name, const std::string& value) {
  for (auto& [n, v] : ov)
    if (n == name) {
      v = value;
      return;
    }
  ov.emplace_back(name, value);
}

// "0-15" or "0-3, 8-11": sorted node numbers as ranges, for messages.
std::string node_ranges(const std::vector<unsigned>& nodes) {
  std::string out;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(nodes[i]);
    if (j > i) out += "-" + std::to_string(nodes[j]);
    i = j + 1;
  }
  return out;
}

// Builds a Topology step by step, checking each step; shared by the file
// parser and the generators so both obey the same rules and messages.
class Builder {
 public:
  Builder(std::string file, const Params& base) : file_(std::move(file)), base_(base) {
    topo_.file = file_;
  }

  [[noreturn]] void fail(int line, const std::string& reason) const {
    throw ConfigError(file_, line, reason);
  }

  bool has_nodes() const { return nodes_line_ >= 0; }
  int nodes_line() const { return nodes_line_; }
  int crossbar_line() const { return topo_.xbar_line; }
  unsigned nodes() const { return topo_.nodes; }
  void set_name(const std::string& name) { topo_.name = name; }

  void set_nodes(unsigned n, int line, const char* what) {
    if (has_nodes()) fail(line, std::string(what) + ": the node count is already set on line " +
                                    std::to_string(nodes_line_));
    // Only the SR8000 goes past P2_MAX_NODES; the file's devices, read
    // later, are checked against it when it ends (Parser::parse).
    if (n < 1 || n > P2_BUS_NODES)
      fail(line, "node count " + std::to_string(n) + " out of range (1.." + std::to_string(P2_MAX_NODES) +
                     "; 1.." + std::to_string(P2_BUS_NODES) + " with 'device sr8000' alone)");
    topo_.nodes = n;
    nodes_line_ = line;
    used_line_.assign(n, {});
    sport_.assign(n, std::nullopt);
    sport_line_.assign(n, 0);
    topo_.port_kind.assign(n, {LinkEndKind::Endpoint, LinkEndKind::Endpoint,
                               LinkEndKind::RootComplex, LinkEndKind::Endpoint});
  }

  void require_nodes(int line, const char* what) const {
    if (!has_nodes())
      fail(line, std::string("'") + what + "' before the node count: give 'nodes N' or a generator first");
  }

  void check_node(unsigned node, int line) const {
    if (node >= topo_.nodes)
      fail(line, "node " + std::to_string(node) + " out of range (nodes 0.." +
                     std::to_string(topo_.nodes - 1) + ")");
  }

  void set_sport(unsigned node, LinkEndKind kind, int line) {
    require_nodes(line, "sport");
    check_node(node, line);
    if (sport_[node])
      fail(line, "sport for node " + std::to_string(node) + " is already set on line " +
                     std::to_string(sport_line_[node]));
    if (auto used = used_line_[node][P2_PORT_S])
      fail(line, "sport for node " + std::to_string(node) + " comes after its S port was cabled on line " +
                     std::to_string(*used) + "; put 'sport' before the link");
    sport_[node] = kind;
    sport_line_[node] = line;
    topo_.port_kind[node][P2_PORT_S] = kind;
  }

  // Validates name=value overrides against the LINK scope; the values are kept
  // as text so link_params can apply them to any later base.
  void check_overrides(const Overrides& ov, int line) const {
    Params scratch = base_;
    for (const auto& [name, value] : ov) set_param(scratch, name, value, file_, line, {ParamScope::Link});
  }

  void add_link(PortRef a, PortRef b, Overrides ov, int line) {
    require_nodes(line, "link");
    check_node(a.node, line);
    check_node(b.node, line);
    for (const PortRef& p : {a, b}) {
      if (p.port == P2_PORT_N)
        fail(line, "port " + port_ref_name(p) + " is the host port and cannot be cabled (use E, W or S)");
    }
    if (a.node == b.node) fail(line, "link from node " + std::to_string(a.node) + " to itself");
    for (const PortRef& p : {a, b}) {
      if (auto used = used_line_[p.node][p.port])
        fail(line, "port " + port_ref_name(p) + " is already cabled on line " + std::to_string(*used));
    }
    std::optional<LinkEndKind> ka = fixed_kind(a), kb = fixed_kind(b);
    if (!ka && !kb) {
      // Two S ports with no sport: the lower-numbered node is the RC.
      ka = a.node < b.node ? LinkEndKind::RootComplex : LinkEndKind::Endpoint;
    }
    if (!ka) ka = opposite(*kb);
    if (!kb) kb = opposite(*ka);
    if (*ka == *kb)
      fail(line, "link " + port_ref_name(a) + " - " + port_ref_name(b) + " joins two " + kind_text(*ka) +
                     " ports; a link needs one Root Complex and one Endpoint");
    check_overrides(ov, line);
    topo_.port_kind[a.node][a.port] = *ka;
    topo_.port_kind[b.node][b.port] = *kb;
    used_line_[a.node][a.port] = line;
    used_line_[b.node][b.port] = line;
    TopoLink l;
    l.a = *ka == LinkEndKind::RootComplex ? a : b;
    l.b = *ka == LinkEndKind::RootComplex ? b : a;
    l.overrides = std::move(ov);
    l.line = line;
    topo_.links.push_back(std::move(l));
  }

  // Every generated link gets `ov` (cable_m and anything the file added).
  // With `at`, the generator's node (r, c) is node at + r*C + c of a cluster
  // whose node count is already set (several generators then lay out several
  // PEACH2 networks side by side); without, it is node r*C + c and the
  // generator sets the node count (or must match it).
  void torus(unsigned rows, unsigned cols, const Overrides& ov, int line,
             std::optional<unsigned> at = std::nullopt) {
    if (rows != 1 && rows != 2)
      fail(line, "torus rows must be 1 or 2 (PEACH2 has one S port), not " + std::to_string(rows));
    if (cols < 1) fail(line, "torus needs at least 1 column");
    unsigned n = rows * cols;
    const std::string what = rows == 1 ? "ring " + std::to_string(cols)
                                       : "torus " + std::to_string(rows) + "x" + std::to_string(cols);
    if (cols > P2_MAX_NODES || n > P2_MAX_NODES)
      fail(line, what + " has more than " + std::to_string(P2_MAX_NODES) + " nodes");
    const unsigned base = at.value_or(0);
    if (at) {
      if (!has_nodes())
        fail(line, what + " at=" + std::to_string(base) +
                       ": give 'nodes N' first (a generator placed with at= does not set the node count)");
      if (base >= topo_.nodes || n > topo_.nodes - base)
        fail(line, what + " at=" + std::to_string(base) + " needs nodes " + std::to_string(base) + ".." +
                       std::to_string(base + n - 1) + ", but 'nodes' on line " + std::to_string(nodes_line_) +
                       " gives 0.." + std::to_string(topo_.nodes - 1));
    } else if (!has_nodes()) {
      set_nodes(n, line, "torus");
    } else if (topo_.nodes != n) {
      fail(line, what + " has " + std::to_string(n) + " nodes but 'nodes' on line " +
                     std::to_string(nodes_line_) + " says " + std::to_string(topo_.nodes) +
                     " (place it with at=FIRST_NODE to lay out several networks)");
    }
    check_overrides(ov, line);
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned c = 0; c < cols && cols > 1; ++c)
        add_link({base + r * cols + c, P2_PORT_E}, {base + r * cols + (c + 1) % cols, P2_PORT_W}, ov, line);
    // Row 0 first so that, with no sport given, its S ports become the RCs.
    if (rows == 2)
      for (unsigned c = 0; c < cols; ++c)
        add_link({base + c, P2_PORT_S}, {base + cols + c, P2_PORT_S}, ov, line);
  }

  // `networks K`: the cables join the nodes into K PEACH2 networks.
  void set_networks(unsigned k, int line) {
    if (networks_line_)
      fail(line, "networks is already given on line " + std::to_string(networks_line_));
    if (k < 1 || k > P2_MAX_NODES)
      fail(line, "network count " + std::to_string(k) + " out of range (1.." + std::to_string(P2_MAX_NODES) + ")");
    networks_ = k;
    networks_line_ = line;
  }
  int networks_line() const { return networks_line_; }

  void crossbar(unsigned x, unsigned y, unsigned z, int line) {
    if (topo_.xbar_line)
      fail(line, "crossbar is already given on line " + std::to_string(topo_.xbar_line));
    const std::string what = "crossbar " + std::to_string(x) + " " + std::to_string(y) +
                             (z > 1 ? " " + std::to_string(z) : "");
    if (x < 1 || x > 8 || y < 1 || y > 8 || z < 1 || z > 8)
      fail(line, what + ": an SR8000 crossbar has 8 ports, so X, Y and Z must be in 1..8");
    // The machine grows a dimension only once the one below is full.
    if (z > 1 && (x != 8 || y != 8))
      fail(line, what + ": a third dimension (Z > 1) joins full 8 x 8 planes, so X and Y must be 8");
    if (!has_nodes())
      set_nodes(x * y * z, line, "crossbar");
    else if (topo_.nodes != x * y * z)
      fail(line, what + " has " + std::to_string(x * y * z) + " nodes but 'nodes' on line " +
                     std::to_string(nodes_line_) + " says " + std::to_string(topo_.nodes));
    topo_.xbar_x = x;
    topo_.xbar_y = y;
    topo_.xbar_z = z;
    topo_.xbar_line = line;
  }

  void set_overrides(const PortRef& p, const Overrides& ov, int line) {
    require_nodes(line, "set");
    check_node(p.node, line);
    TopoLink* l = nullptr;
    for (TopoLink& x : topo_.links)
      if (x.a == p || x.b == p) l = &x;
    if (!l) fail(line, "'set' on port " + port_ref_name(p) + ", which is not cabled");
    check_overrides(ov, line);
    for (const auto& [name, value] : ov) put_override(l->overrides, name, value);
    l->set_line = line;
  }

  // `cabled`: the nodes are joined by PEACH2 cables, so each must reach node
  // 0 over them, or, with a `networks K` line, they form exactly K networks
  // (a topology of other devices only has none).
  Topology finish(bool cabled = true) {
    if (!has_nodes()) fail(0, "no node count: give 'nodes N' or a generator ('torus R C', 'ring N')");
    if (!cabled) {
      if (networks_line_)
        fail(networks_line_, "'networks' counts PEACH2 networks, but no 'device peach2' line gives the "
                             "nodes a PEACH2 board");
      return std::move(topo_);
    }
    std::vector<unsigned> net = peach2_networks(topo_);
    const unsigned count = net.empty() ? 0 : *std::max_element(net.begin(), net.end()) + 1;
    if (!networks_line_) {
      for (unsigned v = 1; v < topo_.nodes; ++v)
        if (net[v] != 0)
          fail(0, "node " + std::to_string(v) + " is not connected to node 0 (a file whose cables form "
                  "several PEACH2 networks says how many with 'networks K')");
    } else if (count != networks_) {
      std::string list;
      for (unsigned k = 0; k < count; ++k) {
        std::vector<unsigned> members;
        for (unsigned v = 0; v < topo_.nodes; ++v)
          if (net[v] == k) members.push_back(v);
        list += (k ? "; " : "") + node_ranges(members);
      }
      fail(networks_line_, "the cables form " + std::to_string(count) + " PEACH2 network" +
                               (count == 1 ? "" : "s") + " (nodes " + list + "), not " +
                               std::to_string(networks_));
    }
    topo_.networks = count;
    topo_.network = std::move(net);
    return std::move(topo_);
  }

  static constexpr unsigned kUnreachable = ~0u;

 private:
  std::optional<LinkEndKind> fixed_kind(const PortRef& p) const {
    switch (p.port) {
      case P2_PORT_E: return LinkEndKind::Endpoint;
      case P2_PORT_W: return LinkEndKind::RootComplex;
      case P2_PORT_S: return sport_[p.node];
      default: return LinkEndKind::Endpoint;
    }
  }
  static LinkEndKind opposite(LinkEndKind k) {
    return k == LinkEndKind::RootComplex ? LinkEndKind::Endpoint : LinkEndKind::RootComplex;
  }

  std::string file_;
  const Params& base_;
  Topology topo_;
  int nodes_line_ = -1;
  std::vector<std::array<std::optional<int>, P2_PORT_COUNT>> used_line_;  // line that cabled each port
  std::vector<std::optional<LinkEndKind>> sport_;
  std::vector<int> sport_line_;
  unsigned networks_ = 1;
  int networks_line_ = 0;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> words;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}


}  // namespace

const std::vector<std::string>& known_device_kinds() {
  static const std::vector<std::string> kinds = {"peach2", "ib", "sr8000"};
  return kinds;
}

namespace {

class Parser {
 public:
  Parser(const std::string& file, const Params& base) : b_(file, base) {}

  Topology run(const std::string& text) {
    std::istringstream in(text);
    std::string raw;
    while (std::getline(in, raw)) {
      ++line_;
      std::string_view s(raw);
      if (auto hash = s.find('#'); hash != std::string_view::npos) s = s.substr(0, hash);
      s = trim(s);
      if (s.empty()) continue;
      directive(s);
    }
    bool cabled = devices_.empty(), sr8000 = false;
    for (const TopoDevice& d : devices_) {
      cabled |= d.kind == "peach2";
      sr8000 |= d.kind == "sr8000";
    }
    // Without the device the crossbars mean nothing, and the nodes would be
    // checked for PEACH2 cables they were never meant to have.
    if (b_.crossbar_line() && !sr8000)
      b_.fail(b_.crossbar_line(), "'crossbar' joins SR8000 NIAs, but no 'device sr8000' line gives "
                                  "the nodes one; add 'device sr8000'");
    if (b_.has_nodes() && b_.nodes() > P2_MAX_NODES) {
      const bool only_sr8000 = sr8000 && std::all_of(devices_.begin(), devices_.end(),
                                                     [](const TopoDevice& d) { return d.kind == "sr8000"; });
      if (!only_sr8000)
        b_.fail(b_.nodes_line(), std::to_string(b_.nodes()) + " nodes: PEACH2 and InfiniBand clusters have at most " +
                                     std::to_string(P2_MAX_NODES) + "; only an SR8000 ('device sr8000' alone) has up to " +
                                     std::to_string(P2_BUS_NODES));
    }
    Topology t = b_.finish(cabled);
    if (!devices_.empty()) t.devices = devices_;
    return t;
  }

 private:
  void directive(std::string_view s) {
    std::vector<std::string> w = split_words(s);
    const std::string& d = w[0];
    if (d == "name") {
      std::string_view rest = trim(s.substr(4));
      if (rest.empty()) fail("'name' needs a text");
      if (name_line_) fail("name is already given on line " + std::to_string(name_line_));
      name_line_ = line_;
      b_.set_name(std::string(rest));
    } else if (d == "nodes") {
      arity(w, 2, "nodes N");
      b_.set_nodes(number(w[1], "the node count"), line_, "nodes");
    } else if (d == "torus") {
      if (w.size() < 3) fail("expected 'torus R C [at=NODE] [name=value ...]'");
      auto at = take_at(w, 3);
      b_.torus(number(w[1], "torus rows"), number(w[2], "torus columns"), cable_overrides(w, 3), line_, at);
    } else if (d == "ring") {
      if (w.size() < 2) fail("expected 'ring N [at=NODE] [name=value ...]'");
      auto at = take_at(w, 2);
      b_.torus(1, number(w[1], "the ring size"), cable_overrides(w, 2), line_, at);
    } else if (d == "networks") {
      arity(w, 2, "networks K");
      b_.set_networks(number(w[1], "the network count"), line_);
    } else if (d == "sport") {
      arity(w, 3, "sport NODE rc|ep");
      unsigned node = number(w[1], "a node");
      LinkEndKind k;
      if (w[2] == "rc")
        k = LinkEndKind::RootComplex;
      else if (w[2] == "ep")
        k = LinkEndKind::Endpoint;
      else
        fail("sport mode must be 'rc' or 'ep', not '" + w[2] + "'");
      b_.set_sport(node, k, line_);
    } else if (d == "link") {
      if (w.size() < 3) fail("expected 'link A.P B.Q [name=value ...]'");
      b_.require_nodes(line_, "link");
      PortRef a = port(w[1]), p = port(w[2]);
      b_.add_link(a, p, cable_overrides(w, 3), line_);
    } else if (d == "set") {
      if (w.size() < 3) fail("expected 'set A.P name=value ...'");
      b_.require_nodes(line_, "set");
      PortRef p = port(w[1]);
      b_.set_overrides(p, overrides(w, 2), line_);
    } else if (d == "crossbar") {
      if (w.size() != 3 && w.size() != 4) fail("expected 'crossbar X Y' or 'crossbar X Y Z'");
      b_.crossbar(number(w[1], "nodes per x-crossbar"), number(w[2], "x-crossbars per plane"),
                  w.size() == 4 ? number(w[3], "planes") : 1, line_);
    } else if (d == "device") {
      arity(w, 2, "device KIND");
      device(w[1]);
    } else {
      fail("unknown directive '" + d +
           "' (name, nodes, torus, ring, networks, sport, link, set, device, crossbar)");
    }
  }

  [[noreturn]] void fail(const std::string& reason) const { b_.fail(line_, reason); }

  void device(const std::string& kind) {
    const auto& known = known_device_kinds();
    if (std::find(known.begin(), known.end(), kind) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      fail("unknown device '" + kind + "' (known: " + list + ")");
    }
    for (const TopoDevice& d : devices_)
      if (d.kind == kind) fail("device '" + kind + "' is already given on line " + std::to_string(d.line));
    devices_.push_back({kind, line_});
  }

  void arity(const std::vector<std::string>& w, size_t n, const char* form) const {
    if (w.size() != n) fail(std::string("expected '") + form + "'");
  }

  unsigned number(const std::string& s, const char* what) const {
    auto v = to_unsigned(s);
    if (!v) fail("bad number '" + s + "' for " + what);
    return *v;
  }

  PortRef port(const std::string& s) const {
    auto dot = s.find('.');
    if (dot == std::string::npos) fail("expected a port as NODE.PORT (e.g. 3.E), got '" + s + "'");
    PortRef p;
    p.node = number(s.substr(0, dot), "a node");
    std::string name = s.substr(dot + 1);
    bool found = false;
    for (int i = 0; i < P2_PORT_COUNT; ++i)
      if (name == kPortNames[i]) {
        p.port = p2_port(i);
        found = true;
      }
    if (!found) fail("unknown port '" + name + "' in '" + s + "' (N, E, W or S)");
    b_.check_node(p.node, line_);
    return p;
  }

  Overrides overrides(const std::vector<std::string>& w, size_t from) const {
    Overrides ov;
    for (size_t i = from; i < w.size(); ++i) {
      auto eq = w[i].find('=');
      if (eq == std::string::npos || eq == 0) fail("expected name=value, got '" + w[i] + "'");
      put_override(ov, w[i].substr(0, eq), w[i].substr(eq + 1));
    }
    return ov;
  }

  // A generator's `at=NODE` (where its node 0 goes), taken out of the words
  // from `from` on so that the rest are the cables' parameters; at most one.
  std::optional<unsigned> take_at(std::vector<std::string>& w, size_t from) const {
    std::optional<unsigned> at;
    for (size_t i = from; i < w.size();) {
      if (w[i].rfind("at=", 0) != 0) {
        ++i;
        continue;
      }
      if (at) fail("at= is given twice");
      at = number(w[i].substr(3), "at= (the generator's first node)");
      w.erase(w.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return at;
  }

  // Cables default to 1 m unless the line says otherwise.
  Overrides cable_overrides(const std::vector<std::string>& w, size_t from) const {
    Overrides given = overrides(w, from);
    Overrides ov = {{"cable_m", "1"}};
    for (const auto& [n, v] : given) put_override(ov, n, v);
    return ov;
  }

  Builder b_;
  int line_ = 0;
  int name_line_ = 0;
  std::vector<TopoDevice> devices_;
};

}  // namespace

std::string port_ref_name(const PortRef& p) {
  const char* port = unsigned(p.port) < P2_PORT_COUNT ? kPortNames[p.port] : "?";
  return std::to_string(p.node) + "." + port;
}

const TopoLink* Topology::link_at(const PortRef& p) const {
  for (const TopoLink& l : links)
    if (l.a == p || l.b == p) return &l;
  return nullptr;
}

Params Topology::link_params(const TopoLink& l, const Params& base) const {
  Params p = base;
  for (const auto& [name, value] : l.overrides)
    set_param(p, name, value, file.empty() ? "topology '" + this->name + "'" : file, l.line,
              {ParamScope::Link});
  return p;
}

unsigned Topology::hop_distance(unsigned from, unsigned to) const {
  if (from >= nodes || to >= nodes) return Builder::kUnreachable;
  std::vector<unsigned> dist(nodes, Builder::kUnreachable);
  std::queue<unsigned> q;
  dist[from] = 0;
  q.push(from);
  while (!q.empty()) {
    unsigned u = q.front();
    q.pop();
    if (u == to) return dist[u];
    for (const TopoLink& l : links) {
      unsigned v;
      if (l.a.node == u)
        v = l.b.node;
      else if (l.b.node == u)
        v = l.a.node;
      else
        continue;
      if (dist[v] == Builder::kUnreachable) {
        dist[v] = dist[u] + 1;
        q.push(v);
      }
    }
  }
  return dist[to];
}

std::vector<unsigned> peach2_networks(const Topology& topo) {
  constexpr unsigned kNone = ~0u;
  std::vector<unsigned> net(topo.nodes, kNone);
  unsigned next = 0;
  for (unsigned s = 0; s < topo.nodes; ++s) {
    if (net[s] != kNone) continue;
    // A breadth-first walk over the cables from the lowest node not yet seen.
    std::queue<unsigned> q;
    net[s] = next;
    q.push(s);
    while (!q.empty()) {
      unsigned u = q.front();
      q.pop();
      for (const TopoLink& l : topo.links) {
        unsigned v = l.a.node == u ? l.b.node : l.b.node == u ? l.a.node : kNone;
        if (v != kNone && v < topo.nodes && net[v] == kNone) {
          net[v] = next;
          q.push(v);
        }
      }
    }
    ++next;
  }
  return net;
}

Topology make_torus(unsigned rows, unsigned cols, double cable_m) {
  Params base;
  Builder b("make_torus", base);
  b.set_name("torus " + std::to_string(rows) + "x" + std::to_string(cols));
  b.torus(rows, cols, {{"cable_m", format_double(cable_m)}}, 0);
  Topology t = b.finish();
  t.file.clear();
  return t;
}

Topology make_ring(unsigned nodes, double cable_m) {
  Topology t = make_torus(1, nodes, cable_m);
  t.name = "ring " + std::to_string(nodes);
  return t;
}

Topology parse_topology(const std::string& text, const std::string& file, const Params& base) {
  return Parser(file, base).run(text);
}

Topology load_topology(const std::string& path, const Params& base) {
  return parse_topology(read_config_file(path, "topology file"), path, base);
}

namespace {

// tcaInit leaves the top mpi_host_bytes of each node's host memory to the MPI
// layer whenever they lie below host_memory_bytes (lib/src/rt/rt_emu.c), and
// the library's own part must keep its minimum (the p2_exchange mailbox and
// the notification ring). With a `device ib` line MPI programs can run, and
// MPI_Init needs the share: it must fit.
void check_mpi_host_share(const Params& params, const std::string& params_file,
                          const std::string& topo_file, const Topology& topo) {
  const double host = params.host_memory_bytes, mpi = params.mpi_host_bytes;
  const auto ib = std::find_if(topo.devices.begin(), topo.devices.end(),
                               [](const TopoDevice& d) { return d.kind == "ib"; });
  const bool needed = ib != topo.devices.end(), taken = mpi < host;
  if (!(needed || taken) || host - mpi >= kMinMemoryBytes) return;
  const std::string reason =
      "mpi_host_bytes = " + format_param_value(mpi) + " leaves " +
      (taken ? format_param_value(host - mpi) + " bytes" : "nothing") + " of host_memory_bytes = " +
      format_param_value(host) + " to tcaMalloc, less than its minimum " + format_param_value(kMinMemoryBytes);
  if (needed)
    throw param_rule_error(params, {"mpi_host_bytes", "host_memory_bytes"}, topo_file, ib->line,
                           "device ib: " + reason + " (the MPI layer takes the top mpi_host_bytes)");
  throw param_rule_error(params, {"mpi_host_bytes", "host_memory_bytes"},
                         params_file.empty() ? "parameters (defaults)" : params_file, 0, reason);
}

}  // namespace

void validate_config(const Params& params, const std::string& params_file, const Topology& topo) {
  check_params(params, params_file);
  const std::string topo_file = topo.file.empty() ? "topology '" + topo.name + "'" : topo.file;
  check_mpi_host_share(params, params_file, topo_file, topo);
  const std::string global_from = params_file.empty() ? "the default" : "from " + params_file;
  for (const TopoLink& l : topo.links) {
    const Params lp = topo.link_params(l, params);
    const std::string what = "cable " + port_ref_name(l.a) + " - " + port_ref_name(l.b) + ": ";
    const int line = l.set_line ? l.set_line : l.line;  // the last line that set its parameters
    check_link_credits(lp, topo_file, line, what);
    // Units split what they send by the links on its way (the DMAC by the
    // smallest MPS on its route); a CPU's PIO store, though, is one TLP
    // whatever cable it crosses.
    if (lp.max_payload_bytes < params.pio_store_bytes)
      throw ConfigError(topo_file, line,
                        what + "max_payload_bytes = " + format_param_value(lp.max_payload_bytes) +
                            " is below pio_store_bytes = " + format_param_value(params.pio_store_bytes) +
                            " (" + global_from + "): a PIO store crosses every cable as one TLP");
  }
}

}  // namespace p2
