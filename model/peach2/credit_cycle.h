// credit_cycle.h - diagnosis of a cluster that stopped with TLPs inside it:
// finds a cycle of board ports whose TLPs all wait for credits of the next
// board's input buffer, whose head TLP waits for the next port of the cycle.
//
// PEACH2 forwards in fixed minimal-hop order through one FIFO input buffer per
// port, with no virtual channels and no deadlock avoidance: on a ring, enough
// flows crossing the same cables can fill every buffer of the cycle with TLPs
// that must go on, and none of them can ever move. This is the hardware's
// behaviour (a credit deadlock), not a lost wake-up of the model.
#pragma once

#include <string>

namespace p2 {

class Peach2Network;

// "" when no such cycle exists; otherwise one line, e.g. "credit deadlock:
// node 3 E -> node 4 W, node 4 E -> node 5 W, ..., node 2 E -> node 3 W hold
// 96 TLPs waiting for posted credits". Instant: no simulated cost.
std::string describe_credit_cycle(Peach2Network& network, unsigned nodes);

}  // namespace p2
