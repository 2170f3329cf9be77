// The scheduler's order (core/scheduler.h): instants in time order; in an
// instant, rounds; in a round, arrivals then decisions, each in construction
// order; the earliest notification wins; a zero delay is the next round.
// Driven directly, as p2sim drives it, across the wheel's span and beyond.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <systemc>

#include "core/scheduler.h"

namespace p2 {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_PS;

struct Fired {
  uint64_t at;
  int who;
  bool operator==(const Fired& o) const { return at == o.at && who == o.who; }
};

// A set of wake-ups built in index order; each logs (time, index) when it fires.
struct Units {
  explicit Units(const std::vector<Wakeup::Kind>& kinds) {
    for (size_t i = 0; i < kinds.size(); ++i) {
      wakeups.push_back(std::make_unique<Wakeup>(kinds[i]));
      wakeups.back()->bind([this, i] {
        log.push_back({sim_time().value(), static_cast<int>(i)});
        if (then[i]) then[i]();
      });
    }
    then.resize(kinds.size());
  }
  Wakeup& operator[](size_t i) { return *wakeups[i]; }
  std::vector<std::unique_ptr<Wakeup>> wakeups;
  std::vector<std::function<void()>> then;  // run after logging
  std::vector<Fired> log;
};

Scheduler& started() {
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  Scheduler& s = Scheduler::of_kernel();
  s.drive_directly();
  return s;
}

constexpr auto A = Wakeup::Kind::Arrival;
constexpr auto D = Wakeup::Kind::Decision;

TEST(Scheduler, TimeThenArrivalsThenDecisionsThenBuildOrder) {
  Units u({D, A, D, A});
  Scheduler& s = started();
  u[0].notify(sc_time(10, SC_NS));
  u[1].notify(sc_time(10, SC_NS));
  u[2].notify(sc_time(5, SC_NS));
  u[3].notify(sc_time(10, SC_NS));
  EXPECT_TRUE(s.run_through(Scheduler::kNever));
  const std::vector<Fired> want{{5000, 2}, {10000, 1}, {10000, 3}, {10000, 0}};
  EXPECT_EQ(u.log, want);
}

TEST(Scheduler, EarliestNotificationWinsAndCancelVoids) {
  Units u({A, A, A});
  Scheduler& s = started();
  u[0].notify(sc_time(10, SC_NS));
  u[0].notify(sc_time(4, SC_NS));   // earlier: replaces
  u[1].notify(sc_time(4, SC_NS));
  u[1].notify(sc_time(10, SC_NS));  // later: ignored
  u[2].notify(sc_time(6, SC_NS));
  u[2].cancel();
  u[2].notify(sc_time(6, SC_NS));   // the same time again: once
  EXPECT_TRUE(s.run_through(Scheduler::kNever));
  const std::vector<Fired> want{{4000, 0}, {4000, 1}, {6000, 2}};
  EXPECT_EQ(u.log, want);
}

TEST(Scheduler, ZeroDelayRunsInTheNextRoundAfterTheWholeRound) {
  Units u({A, D, D});
  Scheduler& s = started();
  // At 1 ns: 1 and 2 (decisions) are in the round; 1 wakes 0 (an arrival,
  // built first) with a zero delay: 0 runs after 2, in the next round.
  u.then[1] = [&] { u[0].notify(sc_core::SC_ZERO_TIME); };
  u[1].notify(sc_time(1, SC_NS));
  u[2].notify(sc_time(1, SC_NS));
  EXPECT_TRUE(s.run_through(Scheduler::kNever));
  const std::vector<Fired> want{{1000, 1}, {1000, 2}, {1000, 0}};
  EXPECT_EQ(u.log, want);
}

TEST(Scheduler, AWakeupTakenIntoARoundStillRunsIfNotifiedMeanwhile) {
  Units u({A, A});
  Scheduler& s = started();
  // 0 and 1 are both due at 2 ns; 0 notifies 1 for 5 ns: 1 still runs at
  // 2 ns (it was in the round), and again at 5 ns.
  u.then[0] = [&] {
    if (sim_time().value() == 2000) u[1].notify(sc_time(3, SC_NS));
  };
  u[0].notify(sc_time(2, SC_NS));
  u[1].notify(sc_time(2, SC_NS));
  EXPECT_TRUE(s.run_through(Scheduler::kNever));
  const std::vector<Fired> want{{2000, 0}, {2000, 1}, {5000, 1}};
  EXPECT_EQ(u.log, want);
}

TEST(Scheduler, RunThroughStopsAtItsLimitAndAtAPause) {
  Units u({A, A});
  Scheduler& s = started();
  u.then[0] = [&] { s.pause(); };
  u[0].notify(sc_time(3, SC_NS));
  u[1].notify(sc_time(7, SC_NS));
  EXPECT_EQ(s.next_due(), 3000u);
  EXPECT_FALSE(s.run_through(10000));  // paused at the end of 3 ns
  EXPECT_EQ(sim_time().value(), 3000u);
  EXPECT_TRUE(s.run_through(6000));    // nothing due up to 6 ns: stands there
  EXPECT_EQ(sim_time().value(), 6000u);
  EXPECT_EQ(s.next_due(), 7000u);
  EXPECT_TRUE(s.run_through(Scheduler::kNever));
  const std::vector<Fired> want{{3000, 0}, {7000, 1}};
  EXPECT_EQ(u.log, want);
}

TEST(Scheduler, ADestroyedWakeupNeverRuns) {
  Units u({A, A});
  Scheduler& s = started();
  u[1].notify(sc_time(5, SC_NS));
  u.then[0] = [&] { u.wakeups[1].reset(); };
  u[0].notify(sc_time(5, SC_NS));  // same round, built first: destroys 1
  EXPECT_TRUE(s.run_through(Scheduler::kNever));
  const std::vector<Fired> want{{5000, 0}};
  EXPECT_EQ(u.log, want);
}

// Many wake-ups rescheduling themselves and each other at delays from zero
// to microseconds (inside the wheel's span, at its edge, beyond it, and
// wrapping around it many times), some rescheduled earlier or cancelled on
// the way. The same random scenario runs on a plain reference of the rules
// above (scan every unit's pending time); both must fire the same units at
// the same times in the same order.
struct Scenario {
  static constexpr int kUnits = 40;
  static Wakeup::Kind kind(int i) { return i % 3 ? A : D; }
  std::mt19937_64 rng{7};
  int fires_left = 4000;
  uint64_t delay() {
    static const uint64_t kDelays[] = {0,      1,         255,       256,      4000,
                                       65'000, 1'048'575, 1'048'576, 1'300'000, 9'000'000};
    return kDelays[rng() % (sizeof kDelays / sizeof kDelays[0])] + rng() % 3;
  }
  // What unit i does when it fires, through `notify(j, delay)` and `cancel(j)`.
  template <class Notify, class Cancel>
  void fire(int i, Notify notify, Cancel cancel) {
    if (--fires_left <= 0) return;
    notify(i, delay());
    if (rng() % 4 == 0) {
      const int j = static_cast<int>(rng() % kUnits);
      if (rng() % 2)
        notify(j, delay());
      else
        cancel(j);
    }
  }
};

std::vector<Fired> reference_log() {
  Scenario sc;
  constexpr uint64_t kIdle = UINT64_MAX;
  std::vector<uint64_t> pending(Scenario::kUnits, kIdle);
  uint64_t now = 0;
  auto notify = [&](int j, uint64_t d) { pending[j] = std::min(pending[j], now + d); };
  auto cancel = [&](int j) { pending[j] = kIdle; };
  for (int i = 0; i < Scenario::kUnits; ++i) notify(i, sc.delay());
  std::vector<Fired> log;
  for (;;) {
    now = *std::min_element(pending.begin(), pending.end());
    if (now == kIdle) return log;
    // The rounds of this instant: whoever is due, arrivals then decisions.
    for (;;) {
      std::vector<int> round;
      for (int i = 0; i < Scenario::kUnits; ++i)
        if (pending[i] == now) round.push_back(i);
      if (round.empty()) break;
      std::stable_sort(round.begin(), round.end(), [](int x, int y) {
        return (Scenario::kind(x) == D) < (Scenario::kind(y) == D);
      });
      for (int i : round) pending[i] = kIdle;
      for (int i : round) {
        log.push_back({now, i});
        sc.fire(i, notify, cancel);
      }
    }
  }
}

TEST(Scheduler, MatchesAPlainReferenceAcrossTheWheelAndBeyond) {
  std::vector<Wakeup::Kind> kinds;
  for (int i = 0; i < Scenario::kUnits; ++i) kinds.push_back(Scenario::kind(i));
  Units u(kinds);
  Scheduler& s = started();
  Scenario sc;
  auto notify = [&](int j, uint64_t d) { u[j].notify(sc_time(static_cast<double>(d), SC_PS)); };
  auto cancel = [&](int j) { u[j].cancel(); };
  for (int i = 0; i < Scenario::kUnits; ++i) {
    u.then[i] = [&, i] { sc.fire(i, notify, cancel); };
    notify(i, sc.delay());
  }
  EXPECT_TRUE(s.run_through(Scheduler::kNever));
  const std::vector<Fired> want = reference_log();
  ASSERT_GT(want.size(), 3500u);
  ASSERT_GT(want.back().at, 20 * 1'048'576u);  // many turns of the wheel
  ASSERT_EQ(u.log.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k)
    ASSERT_EQ(u.log[k], want[k]) << "fire " << k << ": unit " << u.log[k].who << " at "
                                 << u.log[k].at << " ps, the reference has unit " << want[k].who
                                 << " at " << want[k].at << " ps";
}

}  // namespace
}  // namespace p2
