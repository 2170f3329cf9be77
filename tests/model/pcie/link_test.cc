// link_test.cc - timing, credits, ordering and DLLPs of one PCIe link. Every
// expected time is derived from the parameters, never copied from a run.
// Each test elaborates its own link (ctest runs each in a process of its own).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "pcie/link.h"

#include <gtest/gtest.h>

#include <functional>
#include <systemc>
#include <vector>

#include "test_support.h"

namespace p2 {
namespace {

using sc_core::SC_NS;
using sc_core::sc_start;
using sc_core::sc_time;
using test::at;
using test::Expect;
using test::Sink;

constexpr uint64_t kLowAddr = 0x1000;          // fits 32 bits: 3-DW header
constexpr uint64_t kHighAddr = 0x1'0000'0000;  // needs 64 bits: 4-DW header
constexpr uint32_t kHdr3 = 3 * kDwordBytes;
constexpr uint32_t kHdr4 = 4 * kDwordBytes;

// An RC-EP link with a sink on each end, both with unbounded transmit queues.
struct Bench {
  explicit Bench(const Params& p)
      : params(p),
        expect(p),
        link("link", LinkConfig(p), LinkEndKind::RootComplex, LinkEndKind::Endpoint) {
    link.end_a().attach(&a, 0);
    link.end_b().attach(&b, 0);
  }
  LinkPort& tx() { return link.end_a(); }
  LinkPort& rx() { return link.end_b(); }
  Params params;
  Expect expect;
  Sink a, b;
  PcieLink link;
};

// ---- Latency and bandwidth --------------------------------------------------

void single_tlp_latency(const Params& p) {
  Bench t(p);
  ASSERT_EQ(test::write(kHighAddr, 8)->header_bytes(), kHdr4);
  at(sc_core::SC_ZERO_TIME, [&] { t.tx().send(test::write(kHighAddr, 8)); });
  sc_start();
  ASSERT_EQ(t.b.got.size(), 1u);
  EXPECT_EQ(t.b.got[0].at, t.expect.tlp(kHdr4, 8) + t.expect.latency);
  EXPECT_EQ(t.link.config().latency, t.expect.latency);
  EXPECT_EQ(t.tx().tx_stats().tlps, 1u);
  EXPECT_EQ(t.tx().tx_stats().wire_bytes, p.tlp_framing_bytes + kHdr4 + 8);
  EXPECT_EQ(t.tx().tx_stats().busy, t.expect.tlp(kHdr4, 8));
}

TEST(LinkTiming, PeakIsTheFourGBpsOfGen2x8) {
  // model/README.md, "Published figures": 5 GT/s x 8 lanes after 8b/10b is
  // 4 GB/s, 0.25 ns per byte.
  LinkConfig c{Params{}};
  EXPECT_DOUBLE_EQ(c.bytes_per_ns(), 4.0);
  EXPECT_EQ(c.wire_time(1), sc_time(250, sc_core::SC_PS));
}

TEST(LinkTiming, SingleTlpLatency) { single_tlp_latency(Params{}); }

TEST(LinkTiming, SingleTlpLatencyOverCable) {
  Params p;
  p.cable_m = 3;
  Expect e(p);
  EXPECT_EQ(e.latency, sc_time(p.link_latency_ns, SC_NS) + sc_time(3 * p.cable_ns_per_m, SC_NS));
  single_tlp_latency(p);
}

TEST(LinkTiming, StreamRunsAtTheLinkPayloadRate) {
  Params p;
  Bench t(p);
  t.b.release_on_arrival = true;
  test::Recorder rec;
  t.tx().set_observer(&rec);
  constexpr int kN = 64;
  constexpr uint32_t kLen = 256;
  const sc_time per_tlp = t.expect.tlp(kHdr3, kLen);
  // Posted credits never run out: a credit comes back (serialise, cross,
  // release, UpdateFC, cross back) before the data credits of the TLPs started
  // meanwhile are used up.
  const sc_time credit_loop = per_tlp + t.expect.latency + t.expect.credit_return();
  ASSERT_LT((credit_loop / per_tlp + 1) * (kLen / kCreditDataBytes), p.rx_posted_data_credits);
  at(sc_core::SC_ZERO_TIME, [&] {
    for (int i = 0; i < kN; ++i) t.tx().send(test::write(kLowAddr + i * kLen, kLen));
  });
  sc_start();
  ASSERT_EQ(t.b.got.size(), size_t(kN));
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(t.b.got[i].at, (i + 1) * per_tlp + t.expect.latency) << i;
    EXPECT_EQ(rec.sent[i].start, i * per_tlp);
    EXPECT_EQ(rec.sent[i].end, (i + 1) * per_tlp);
  }
  // Throughput: payload over everything serialised for it, at the line rate.
  const double gbps = kN * kLen / (t.b.got.back().at - t.expect.latency).to_seconds() / 1e9;
  const double line = p.tlp_framing_bytes + kHdr3 + kLen;
  EXPECT_NEAR(gbps, kLen / line * t.expect.bytes_per_ns, 1e-9);
  const LinkDirStats& s = t.tx().tx_stats();
  EXPECT_EQ(s.tlps, uint64_t(kN));
  EXPECT_EQ(s.payload_bytes, uint64_t(kN) * kLen);
  EXPECT_EQ(s.wire_bytes, uint64_t(kN * line));
  EXPECT_EQ(s.dllps, 0u);  // DLLPs about this traffic go the other way
  EXPECT_EQ(s.busy, kN * per_tlp);
  EXPECT_EQ(s.credit_stall, sc_core::SC_ZERO_TIME);
  // Reverse wire: one UpdateFC per release (the wire is idle when each is
  // ready, so none coalesce) and one Ack per ack_coalesce_tlps TLPs.
  const LinkDirStats& r = t.rx().tx_stats();
  const uint64_t dllps = kN + kN / static_cast<uint64_t>(p.ack_coalesce_tlps);
  EXPECT_EQ(r.dllps, dllps);
  EXPECT_EQ(r.tlps, 0u);
  EXPECT_EQ(r.wire_bytes, dllps * static_cast<uint64_t>(p.dllp_bytes));
  EXPECT_EQ(r.busy, static_cast<double>(dllps) * t.expect.dllp());
}

TEST(LinkTiming, RefillFromTxSpaceKeepsTheWireBusy) {
  Params p;
  Bench t(p);
  t.tx().attach(&t.a, 1);
  constexpr int kN = 6;
  int sent = 0;
  auto send_one = [&] {
    t.tx().send(test::write(kLowAddr, 8));
    ++sent;
  };
  t.a.on_space = [&](LinkPort& port) {
    EXPECT_TRUE(port.can_send());
    if (sent < kN) send_one();
  };
  at(sc_core::SC_ZERO_TIME, [&] {
    send_one();
    EXPECT_FALSE(t.tx().can_send());
    EXPECT_EQ(t.tx().tx_queued(), 1u);
  });
  sc_start();
  ASSERT_EQ(t.b.got.size(), size_t(kN));
  EXPECT_EQ(t.b.got.back().at, kN * t.expect.tlp(kHdr3, 8) + t.expect.latency);
  EXPECT_EQ(t.a.tx_space_calls, kN);
}

// ---- Flow control -------------------------------------------------------------

TEST(LinkCredits, HeaderCreditsStallUntilRelease) {
  Params p;
  p.rx_posted_hdr_credits = 2;
  Bench t(p);
  const sc_time per_tlp = t.expect.tlp(kHdr3, 8);
  const sc_time release = 1000 * per_tlp;
  at(sc_core::SC_ZERO_TIME, [&] {
    for (int i = 0; i < 3; ++i) t.tx().send(test::write(kLowAddr, 8));
  });
  at(release, [&] {
    EXPECT_EQ(t.b.got.size(), 2u);  // the third is held for credits
    t.rx().release(*t.b.got[0].tlp);
  });
  sc_start();
  ASSERT_EQ(t.b.got.size(), 3u);
  EXPECT_EQ(t.b.got[0].at, per_tlp + t.expect.latency);
  EXPECT_EQ(t.b.got[1].at, 2 * per_tlp + t.expect.latency);
  const sc_time resume = release + t.expect.credit_return();
  EXPECT_EQ(t.b.got[2].at, resume + per_tlp + t.expect.latency);
  // The wire stood free from the end of the second TLP until credits came.
  EXPECT_EQ(t.tx().tx_stats().credit_stall, resume - 2 * per_tlp);
  EXPECT_EQ(t.rx().tx_stats().dllps, 1u);  // the UpdateFC; too few TLPs for an Ack
}

TEST(LinkCredits, DataCreditsStallUntilRelease) {
  Params p;
  p.rx_posted_data_credits = p.max_payload_bytes / kCreditDataBytes;  // one full TLP
  Bench t(p);
  const uint32_t len = static_cast<uint32_t>(p.max_payload_bytes);
  const sc_time per_tlp = t.expect.tlp(kHdr3, len);
  const sc_time release = 10 * per_tlp;
  at(sc_core::SC_ZERO_TIME, [&] {
    t.tx().send(test::write(kLowAddr, len));
    t.tx().send(test::write(kLowAddr, len));
  });
  at(release, [&] {
    ASSERT_EQ(t.b.got.size(), 1u);
    t.rx().release(FcClass::Posted, len);  // the client gave the TLP away
    t.b.got[0].tlp.reset();
  });
  sc_start();
  ASSERT_EQ(t.b.got.size(), 2u);
  const sc_time resume = release + t.expect.credit_return();
  EXPECT_EQ(t.b.got[1].at, resume + per_tlp + t.expect.latency);
  EXPECT_EQ(t.tx().tx_stats().credit_stall, resume - per_tlp);
}

TEST(LinkCredits, ReleasesReadyTogetherShareOneUpdateFc) {
  Params p;
  p.rx_posted_hdr_credits = 2;
  Bench t(p);
  const sc_time per_tlp = t.expect.tlp(kHdr3, 8);
  const sc_time release = 100 * per_tlp;
  at(sc_core::SC_ZERO_TIME, [&] {
    for (int i = 0; i < 4; ++i) t.tx().send(test::write(kLowAddr, 8));
  });
  at(release, [&] {
    t.rx().release(*t.b.got[0].tlp);
    t.rx().release(*t.b.got[1].tlp);
  });
  sc_start();
  ASSERT_EQ(t.b.got.size(), 4u);
  // Both credits come back in one UpdateFC, so the two held TLPs go back to back.
  const sc_time resume = release + t.expect.credit_return();
  EXPECT_EQ(t.b.got[2].at, resume + per_tlp + t.expect.latency);
  EXPECT_EQ(t.b.got[3].at, resume + 2 * per_tlp + t.expect.latency);
  // One UpdateFC and the Ack of the fourth TLP.
  EXPECT_EQ(t.rx().tx_stats().dllps, 2u);
}

TEST(LinkCredits, ReleasingWhatIsNotHeldIsAnError) {
  Bench t(Params{});
  auto w = test::write(kLowAddr, 8);
  EXPECT_THROW(t.rx().release(*w), std::logic_error);
}

TEST(LinkCredits, OversizedTlpIsRejected) {
  Params p;
  Bench t(p);
  EXPECT_THROW(t.tx().send(test::write(kLowAddr, static_cast<uint32_t>(p.max_payload_bytes) + 4)),
               std::invalid_argument);
  EXPECT_THROW(
      t.tx().send(test::read(kLowAddr, static_cast<uint32_t>(p.max_read_request_bytes) + 4)),
      std::invalid_argument);
}

// ---- Ordering -------------------------------------------------------------------

std::vector<int> tags(const Sink& s) {
  std::vector<int> out;
  for (const auto& g : s.got) out.push_back(g.tlp ? g.tlp->tag : -1);
  return out;
}

TEST(LinkOrdering, BlockedNonPostedDoesNotBlockPosted) {
  Params p;
  p.rx_nonposted_hdr_credits = 1;
  Bench t(p);
  at(sc_core::SC_ZERO_TIME, [&] {
    t.tx().send(test::read(kLowAddr, 64, 0));
    t.tx().send(test::read(kLowAddr, 64, 1));  // no credit left
    t.tx().send(test::write(kLowAddr, 8, 2));
  });
  sc_start();
  EXPECT_EQ(tags(t.b), (std::vector<int>{0, 2}));
  EXPECT_EQ(t.b.got[1].at, t.expect.tlp(kHdr3, 0) + t.expect.tlp(kHdr3, 8) + t.expect.latency);
  EXPECT_EQ(t.tx().tx_queued(), 1u);
  // The second read is still held: its stall so far counts.
  EXPECT_EQ(t.tx().tx_stats().credit_stall,
            sc_core::sc_time_stamp() - t.expect.tlp(kHdr3, 0) - t.expect.tlp(kHdr3, 8));
}

TEST(LinkOrdering, CompletionPassesBlockedNonPosted) {
  Params p;
  p.rx_nonposted_hdr_credits = 1;
  Bench t(p);
  at(sc_core::SC_ZERO_TIME, [&] {
    t.tx().send(test::read(kLowAddr, 64, 0));
    t.tx().send(test::read(kLowAddr, 64, 1));
    t.tx().send(test::completion(kLowAddr, 8, 2));
  });
  sc_start();
  EXPECT_EQ(tags(t.b), (std::vector<int>{0, 2}));
  EXPECT_EQ(t.b.got[1].at, t.expect.tlp(kHdr3, 0) + t.expect.tlp(kHdr3, 8) + t.expect.latency);
}

TEST(LinkOrdering, BlockedPostedBlocksCompletionBehindIt) {
  Params p;
  p.rx_posted_hdr_credits = 1;
  Bench t(p);
  const sc_time release = sc_time(10 * p.link_latency_ns, SC_NS);
  at(sc_core::SC_ZERO_TIME, [&] {
    t.tx().send(test::write(kLowAddr, 8, 0));
    t.tx().send(test::write(kLowAddr, 8, 1));  // no credit left
    t.tx().send(test::completion(kLowAddr, 8, 2));
  });
  at(release, [&] {
    EXPECT_EQ(tags(t.b), (std::vector<int>{0}));
    t.rx().release(*t.b.got[0].tlp);
  });
  sc_start();
  EXPECT_EQ(tags(t.b), (std::vector<int>{0, 1, 2}));
  const sc_time resume = release + t.expect.credit_return();
  EXPECT_EQ(t.b.got[2].at,
            resume + t.expect.tlp(kHdr3, 8) + t.expect.tlp(kHdr3, 8) + t.expect.latency);
}

TEST(LinkOrdering, NonPostedPassesNothingButPostedPassesAll) {
  Params p;
  p.rx_cpl_hdr_credits = 1;
  Bench t(p);
  const sc_time release = sc_time(10 * p.link_latency_ns, SC_NS);
  at(sc_core::SC_ZERO_TIME, [&] {
    t.tx().send(test::completion(kLowAddr, 8, 0));
    t.tx().send(test::completion(kLowAddr, 8, 1));  // no credit left
    t.tx().send(test::read(kLowAddr, 64, 2));       // may not pass the completion
    t.tx().send(test::write(kLowAddr, 8, 3));       // passes both
  });
  at(release, [&] {
    EXPECT_EQ(tags(t.b), (std::vector<int>{0, 3}));
    t.rx().release(*t.b.got[0].tlp);
  });
  sc_start();
  EXPECT_EQ(tags(t.b), (std::vector<int>{0, 3, 1, 2}));
  const sc_time resume = release + t.expect.credit_return();
  EXPECT_EQ(t.b.got[3].at,
            resume + t.expect.tlp(kHdr3, 8) + t.expect.tlp(kHdr3, 0) + t.expect.latency);
}

// ---- Link ends -------------------------------------------------------------------

std::string construction_error(const char* name, LinkEndKind a, LinkEndKind b,
                               const Params& p = Params{}) {
  try {
    PcieLink link(name, LinkConfig(p), a, b);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "link");
    EXPECT_EQ(e.line(), 0);
    return e.what();
  }
  return "";
}

TEST(LinkEnds, SameKindsAreRejected) {
  EXPECT_EQ(construction_error("rcrc", LinkEndKind::RootComplex, LinkEndKind::RootComplex),
            "link: rcrc: a link must join a Root Complex to an Endpoint, not Root Complex to "
            "Root Complex");
  EXPECT_EQ(construction_error("epep", LinkEndKind::Endpoint, LinkEndKind::Endpoint),
            "link: epep: a link must join a Root Complex to an Endpoint, not Endpoint to Endpoint");
  EXPECT_EQ(construction_error("rcep", LinkEndKind::RootComplex, LinkEndKind::Endpoint), "");
  EXPECT_EQ(construction_error("eprc", LinkEndKind::Endpoint, LinkEndKind::RootComplex), "");
}

TEST(LinkEnds, EndsKnowTheirKindAndPeer) {
  PcieLink link("l", LinkConfig(Params{}), LinkEndKind::Endpoint, LinkEndKind::RootComplex);
  EXPECT_EQ(link.end_a().kind(), LinkEndKind::Endpoint);
  EXPECT_EQ(link.end_b().kind(), LinkEndKind::RootComplex);
  EXPECT_EQ(&link.end_a().peer(), &link.end_b());
  EXPECT_EQ(&link.end_b().peer(), &link.end_a());
  EXPECT_EQ(&link.end_a().link(), &link);
}

TEST(LinkEnds, DataCreditsBelowOneMaxPayloadAreRejected) {
  Params p;
  p.rx_posted_data_credits = p.max_payload_bytes / kCreditDataBytes - 1;
  EXPECT_NE(construction_error("small", LinkEndKind::RootComplex, LinkEndKind::Endpoint, p), "");
}

// ---- DLLPs -----------------------------------------------------------------------

void ack_count(uint32_t coalesce, int n) {
  Params p;
  p.ack_coalesce_tlps = coalesce;
  Bench t(p);  // the receiver holds every TLP: no UpdateFCs, only Acks
  at(sc_core::SC_ZERO_TIME, [&] {
    for (int i = 0; i < n; ++i) t.tx().send(test::write(kLowAddr, 8));
  });
  sc_start();
  ASSERT_EQ(t.b.got.size(), size_t(n));
  const uint64_t acks = n / coalesce;
  EXPECT_EQ(t.rx().tx_stats().dllps, acks);
  EXPECT_EQ(t.rx().tx_stats().wire_bytes, acks * uint64_t(p.dllp_bytes));
  EXPECT_EQ(t.rx().tx_stats().busy, static_cast<double>(acks) * t.expect.dllp());
  // Acks ride the reverse wire: the forward stream is not slowed.
  EXPECT_EQ(t.b.got.back().at, n * t.expect.tlp(kHdr3, 8) + t.expect.latency);
}

TEST(LinkDllp, OneAckPerCoalescedTlps) { ack_count(4, 10); }
TEST(LinkDllp, OneAckPerCoalescedTlpsOfThree) { ack_count(3, 10); }

TEST(LinkDllp, DllpWaitsForTheWireThenGoesBeforeWaitingTlps) {
  Params p;
  Bench t(p);
  const uint32_t coalesce = static_cast<uint32_t>(p.ack_coalesce_tlps);
  const uint32_t big = static_cast<uint32_t>(p.max_payload_bytes);
  const sc_time small_tlp = t.expect.tlp(kHdr3, 8);
  const sc_time big_tlp = t.expect.tlp(kHdr3, big);
  // a sends enough small TLPs for one Ack; b streams big TLPs back meanwhile.
  at(sc_core::SC_ZERO_TIME, [&] {
    for (uint32_t i = 0; i < coalesce; ++i) t.tx().send(test::write(kLowAddr, 8));
    for (int i = 0; i < 6; ++i) t.rx().send(test::write(kLowAddr, big, i));
  });
  sc_start();
  ASSERT_EQ(t.a.got.size(), 6u);
  // The Ack is owed when a's last small TLP arrives at b; it goes out when the
  // big TLP then on b's wire ends, ahead of the big TLPs still waiting.
  const sc_time ack_owed = coalesce * small_tlp + t.expect.latency;
  const int64_t before = static_cast<int64_t>(ack_owed / big_tlp) + 1;  // big TLPs started by then
  ASSERT_LT(before, 6);
  for (int i = 0; i < 6; ++i) {
    sc_time end = (i + 1) * big_tlp;
    if (i >= before) end += t.expect.dllp();
    EXPECT_EQ(t.a.got[i].at, end + t.expect.latency) << i;
  }
  EXPECT_EQ(t.rx().tx_stats().dllps, 1u);
  EXPECT_EQ(t.rx().tx_stats().busy, 6 * big_tlp + t.expect.dllp());
}

// ---- Silent arrivals -----------------------------------------------------------

// A receiver that says taking in a completion tagged kNotLast changes nothing
// (as the HCA says of a completion that is not its read's last).
constexpr uint8_t kNotLast = 1;
struct SilentSink : Sink {
  bool arrival_is_silent(const LinkPort&, const Tlp& tlp) const override {
    return tlp.kind == TlpKind::Completion && tlp.tag == kNotLast;
  }
};

// a sends b one 64-byte completion per tag at time zero; b's client answers
// arrival_is_silent where `allow`. Returns the serialisation of one.
struct SilentBench {
  SilentBench(const Params& p, bool allow)
      : expect(p), link("link", LinkConfig(p), LinkEndKind::RootComplex, LinkEndKind::Endpoint) {
    link.end_a().attach(&a, 0);
    link.end_b().attach(&b, 0);
    if (allow) link.end_b().allow_silent_arrivals();
  }
  sc_time send(const std::vector<uint8_t>& tags) {
    at(sc_core::SC_ZERO_TIME, [this, tags] {
      for (size_t i = 0; i < tags.size(); ++i)
        link.end_a().send(test::completion(kLowAddr + 64 * i, 64, tags[i]));
    });
    sc_start();
    return expect.tlp(kHdr3, 64);
  }
  Expect expect;
  Sink a;
  SilentSink b;
  PcieLink link;
};

TEST(LinkSilent, SilentCompletionsAreTakenInWithTheNextArrival) {
  Params p;
  ASSERT_EQ(static_cast<int>(p.ack_coalesce_tlps), 4);
  SilentBench t(p, true);
  // The 4th TLP owes an Ack: it arrives as an event whatever its client says.
  const sc_time per = t.send({kNotLast, kNotLast, 0, kNotLast, 0});
  ASSERT_EQ(t.b.got.size(), 5u);
  const sc_time lat = t.expect.latency;
  const sc_time taken[] = {3 * per + lat, 3 * per + lat, 3 * per + lat, 4 * per + lat,
                           5 * per + lat};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(t.b.got[i].tlp->addr, kLowAddr + 64 * i) << i;  // in order
    EXPECT_EQ(t.b.got[i].at, taken[i]) << i;
  }
  // The wire and the reverse wire carry what they would have: one Ack.
  EXPECT_EQ(t.link.end_a().tx_stats().busy, 5 * per);
  EXPECT_EQ(t.link.end_b().tx_stats().dllps, 1u);
  EXPECT_EQ(t.link.end_b().tx_stats().busy, t.expect.dllp());
}

TEST(LinkSilent, WithoutTheClientsLeaveEveryArrivalIsAnEvent) {
  Params p;
  SilentBench t(p, false);
  const sc_time per = t.send({kNotLast, kNotLast, 0, kNotLast, 0});
  ASSERT_EQ(t.b.got.size(), 5u);
  for (size_t i = 0; i < 5; ++i)
    EXPECT_EQ(t.b.got[i].at, static_cast<double>(i + 1) * per + t.expect.latency) << i;
  EXPECT_EQ(t.link.end_b().tx_stats().dllps, 1u);
}

TEST(LinkSilent, FiniteCompletionCreditsMakeNoArrivalSilent) {
  // Releasing such a TLP would send an UpdateFC, whose time counts.
  Params p;
  p.rx_cpl_hdr_credits = 16;
  SilentBench t(p, true);
  const sc_time per = t.send({kNotLast, kNotLast, 0});
  ASSERT_EQ(t.b.got.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(t.b.got[i].at, static_cast<double>(i + 1) * per + t.expect.latency) << i;
}

}  // namespace
}  // namespace p2
