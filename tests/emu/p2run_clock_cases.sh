#!/bin/bash
# p2run_clock_cases.sh CASE P2RUN BINDIR - the launcher's cases about time:
# the clock modes and what they charge (model, cpu, instructions), the
# program's own clocks, computation charged with p2_compute, deadlines,
# timeouts and stalls. Each runs p2run on a small rank program (built in
# BINDIR) and checks its status, messages, duration and that nothing is left
# behind. Exit 0 = pass; a failure says what differed.
set -u
CASE=$1 P2RUN=$2 BIN=$3
. "$(dirname "$0")/p2run_harness.sh"

case $CASE in
compute_big)
    run -n 2 --timeout 30 -- "$BIN/emu_hostile" compute-big
    expect_rc 1
    expect_err "p2: rank 0: p2_compute(1e+07 s) takes the rank's clock past the latest simulated time a rank may reach (4611686 s); ending the rank"
    expect_clean ;;
compute_nan)
    run -n 2 --timeout 30 -- "$BIN/emu_hostile" compute-nan
    expect_rc 1
    expect_err "p2: rank 0: p2_compute(nan s) takes the rank's clock past"
    expect_clean ;;
zero_costs)
    # Issue 18 reported a false deadlock ("every rank waits and nothing is in
    # flight") of a plain handle exchange with pio_store_ns = 0 or
    # lib_call_ns = 0, both in range. The exchange must finish, every byte
    # right, whichever costs nothing.
    EXCHANGE=$BIN/../workloads/exchange_check
    for text in 'pio_store_ns = 0' 'lib_call_ns = 0' 'pio_store_ns = 0\nlib_call_ns = 0'; do
        printf "$text\n" >"$TMP/zero.params"
        run -n 4 --timeout 60 --params "$TMP/zero.params" -- "$EXCHANGE"
        expect_rc 0
        expect_out "rank 3 of 4: 40 exchanges, 0 wrong bytes"
        expect_clean
    done ;;
pio_spin_cpu)
    run -n 2 --clock cpu --timeout 60 -- "$BIN/emu_pio_spin"
    expect_rc 0
    expect_out "rank 1: saw the marker at"
    expect_out "0 wrong words"
    expect_clean ;;
timeout)
    # Under --clock=model a rank spinning on memory holds simulated time: the
    # job can only end by --timeout, which prints every rank's state.
    run -n 2 --timeout 1.5 -- "$BIN/emu_pio_spin"
    expect_rc 124
    expect_faster 6
    expect_err "timeout"
    expect_err "rank 1 (node 1): running"
    expect_clean ;;
deadline)
    # Waits with a deadline (emu_deadline.c): answered "not yet" at the
    # deadline (plus poll_detect_ns, 60 ns), or when the word changes before it,
    # or at once when the deadline has passed (lib_call_ns + poll_detect_ns).
    run -n 2 --timeout 60 -- "$BIN/emu_deadline"
    expect_rc 0
    expect_out "rank 0: until +5 us: not yet after 5.060 us"
    expect_out "rank 0: until +50 us: ok after 10.937 us"
    expect_out "rank 0: until 1 us (past): not yet after 0.080 us"
    expect_clean ;;
clocks)
    # The C library's clocks a program reads (gettimeofday, clock_gettime,
    # time, timespec_get) are the rank's virtual clock under --clock model:
    # exact over modelled work, REALTIME from 2014-01-01, reads in a loop
    # cost 25 ns each (emu_clocks.c checks each); twice alike.
    for i in 1 2; do
        run -n 2 --timeout 60 -- "$BIN/emu_clocks"
        expect_rc 0
        expect_out "rank 0: monotonic 0 ns, realtime 1388534400.000000050, gettimeofday 1388534400.000000, time 1388534400; 2.5 ms of compute: 2500000 ns and 2500 us"
        sort "$TMP/out" >"$TMP/run$i"
    done
    cmp -s "$TMP/run1" "$TMP/run2" || fail "two runs differ: $(diff "$TMP/run1" "$TMP/run2")"
    expect_clean ;;
clocks_cpu)
    # Issue 36: one rule for every clock mode. Under --clock cpu the
    # program's clocks are still the rank's (the host's once: a program's
    # timers then disagreed with its simulated time, 8.27 s against 0.44).
    run -n 2 --clock cpu --timeout 60 -- "$BIN/emu_clocks" cpu
    expect_rc 0
    expect_out "rank 0: the rank's clocks under --clock cpu: right"
    expect_out "rank 1: the rank's clocks under --clock cpu: right"
    expect_clean ;;
stall)
    # Under --clock model a rank spinning on memory holds simulated time and
    # nothing moves: --stall ends the job (status 5) in bounded time, naming
    # the running rank, what it left last and the CPU time it spent since.
    run -n 2 --stall 2 --timeout 60 -- "$BIN/emu_pio_spin"
    expect_rc 5
    expect_faster 20
    expect_err "p2sim: no progress for 2 s (--stall) at simulated time 0.000 us; ending the job:"
    expect_err "rank 0 (node 0): leaving (its exit is queued at 0.598 us)"
    expect_err "rank 1 (node 1): running, clock at least 0.000 us; in the program's own code since it left the libraries,"
    expect_err "s of host CPU time since"
    expect_err "--clock cpu runs such programs"
    # the spinning rank's CPU time since its last call counts in the report
    grep -qE "used [0-9.]+ (ms|s) of host CPU time \(rank 1 the most" "$TMP/err" ||
        fail "the report lacks rank 1's spin"
    grep -q "timeout" "$TMP/err" && fail "ended by the timeout, not --stall"
    expect_clean ;;
stall_flags)
    # --stall takes seconds (0: never); --clock instructions[=RATE] a rate.
    for bad in -1 abc ""; do
        run -n 2 --stall "$bad" -- "$BIN/emu_hello"
        expect_rc 2
    done
    run -n 2 --stall abc -- "$BIN/emu_hello"
    expect_err "p2run: --stall: 'abc' is not a number of seconds (0: never)"
    for bad in instructions=abc instructions=0 instructions=-2 bogus; do
        run -n 2 --clock "$bad" -- "$BIN/emu_hello"
        expect_rc 2
        [ -s "$TMP/out" ] && fail "ranks ran despite --clock $bad"
    done
    expect_err "p2run: --clock: 'bogus' is not 'model', 'cpu' or 'instructions[=RATE]'"
    # --stall 0: only --timeout ends a job that makes no progress
    run -n 2 --stall 0 --timeout 3 -- "$BIN/emu_pio_spin"
    expect_rc 124
    "$P2RUN" --help | grep -qF -- "--stall SECONDS" || fail "--help does not list --stall"
    expect_clean ;;
program_work)
    # At the end of a job p2sim says how much host CPU time the ranks' own
    # code used outside the libraries, which --clock model does not charge
    # (emu_compute: a 20-million-iteration loop between two clock reads that
    # takes no simulated time); the --stats JSON has it per rank. Under
    # --clock cpu it is charged.
    run -n 2 --stats "$TMP/stats.json" --timeout 60 -- "$BIN/emu_compute"
    expect_rc 0
    expect_out "rank 0: 20000000 iterations took 0.000000 us of simulated time"
    expect_out "rank 1: 20000000 iterations took 0.000000 us of simulated time"
    expect_err "p2sim: the ranks' own code outside the libraries used"
    expect_err "which --clock=model does not charge: simulated times leave it out"
    python3 - "$TMP/stats.json" <<'PY' || fail "--stats lacks the program's work: $(head -c 600 "$TMP/stats.json")"
import json, sys
p = json.load(open(sys.argv[1]))["program"]
assert p["clock"] == "model" and p["charged_s"] == 0, p
assert len(p["rank_cpu_s"]) == 2 and min(p["rank_cpu_s"]) > 0.002, p
assert abs(sum(p["rank_cpu_s"]) - p["cpu_s"]) < 1e-6 and p["largest_cpu_s"] == max(p["rank_cpu_s"]), p
PY
    run -n 2 --clock cpu --timeout 60 -- "$BIN/emu_compute"
    expect_rc 0
    expect_err "charged to their clocks (--clock=cpu)"
    grep -q "rank 0: 20000000 iterations took 0.000000 us" "$TMP/out" && fail "--clock cpu charged nothing"
    expect_clean ;;
instructions)
    # --clock instructions: the loop's retired user-mode instructions charged
    # at instructions_per_ns (2.8). Where the machine has no counter (or the
    # kernel refuses it) p2run says why and what to do, and the case skips.
    run -n 2 --clock instructions --timeout 60 -- "$BIN/emu_compute"
    if [ "$RC" -eq 2 ] && grep -qF -- "--clock instructions is not available:" "$TMP/err"; then
        grep -qE "perf_event_open|perf_event_paranoid" "$TMP/err" || fail "the refusal names no reason"
        [ -s "$TMP/out" ] && fail "ranks ran without a counter"
        expect_no_shm
        echo "SKIP [$CASE]: $(cat "$TMP/err")"
        exit 77
    fi
    expect_rc 0
    expect_err "--clock=instructions charged its"
    us() { sed -n "s/^rank $1: 20000000 iterations took \([0-9.]*\) us.*/\1/p" "$TMP/out"; }
    A=$(us 0)
    [ -n "$A" ] || fail "no time for rank 0"
    # 20 million iterations of a volatile add: 4-8 instructions each
    (( $(echo "$A > 20000000 * 3 / 2.8 / 1000 && $A < 20000000 * 10 / 2.8 / 1000" | bc) )) ||
        fail "rank 0's loop took $A us: not 3-10 instructions an iteration at 2.8 per ns"
    run -n 2 --clock instructions --timeout 60 -- "$BIN/emu_compute"
    B=$(us 0)
    echo "two runs: $A us and $B us"
    (( $(echo "($A - $B)^2 < ($A / 1000)^2" | bc) )) || fail "two runs differ by more than 0.1%: $A and $B us"
    run -n 2 --clock instructions=5.6 --timeout 60 -- "$BIN/emu_compute"
    H=$(us 0)
    (( $(echo "($H * 2 - $A)^2 < ($A / 100)^2" | bc) )) || fail "at 5.6 per ns $H us, at 2.8 $A us"
    run -n 2 --clock instructions=0.0001 --timeout 60 -- "$BIN/emu_compute"
    expect_rc 2
    expect_err "instructions_per_ns"
    expect_clean ;;
instructions_stand_in)
    # The instructions clock's path (a counter per thread, read at each call,
    # charged at the rate) with the kernel's task clock standing in for the
    # instruction counter (P2_INSTR_EVENT=task-clock, a test hook): it then
    # counts the thread's CPU time in ns, so at 1 per ns the loop is charged
    # its CPU time, about what --clock cpu charges.
    export P2_INSTR_EVENT=task-clock
    run -n 2 --clock instructions=1 --timeout 60 -- "$BIN/emu_compute"
    unset P2_INSTR_EVENT
    if [ "$RC" -eq 2 ] && grep -qF -- "--clock instructions is not available:" "$TMP/err"; then
        echo "SKIP [$CASE]: $(cat "$TMP/err")"
        exit 77
    fi
    expect_rc 0
    expect_err "--clock=instructions charged its"
    T=$(sed -n 's/^rank 0: 20000000 iterations took \([0-9.]*\) us.*/\1/p' "$TMP/out")
    [ -n "$T" ] || fail "no time for rank 0"
    (( $(echo "$T > 1000" | bc) )) || fail "the loop was charged $T us; its CPU time is milliseconds"
    # a rate outside instructions_per_ns's range is refused before any rank runs
    export P2_INSTR_EVENT=task-clock
    run -n 2 --clock instructions=2000 --timeout 60 -- "$BIN/emu_compute"
    unset P2_INSTR_EVENT
    expect_rc 2
    expect_err "--clock instructions: instructions_per_ns = 2000: must be in [0.001, 1000]"
    [ -s "$TMP/out" ] && fail "ranks ran at a refused rate"
    expect_clean ;;
*)
    echo "unknown case $CASE"; exit 2 ;;
esac
echo "PASS [$CASE]"
