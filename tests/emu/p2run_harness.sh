# p2run_harness.sh - sourced by the launcher's case scripts (p2run_cases.sh,
# p2run_clock_cases.sh): a temporary directory, p2run run with its output
# and duration kept, and the checks on status, messages, duration and what a
# job leaves behind. The sourcing script sets CASE, P2RUN and BIN first.
TMP=$(mktemp -d /tmp/p2run-case.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

fail() { echo "FAIL [$CASE]: $*"; echo "--- stdout"; cat "$TMP/out" 2>/dev/null; echo "--- stderr"; cat "$TMP/err" 2>/dev/null; exit 1; }

# run [p2run args...]: runs p2run in the background (to learn its pid, which
# names the job's segments), waits, and sets RC, PID and SECS.
run() {
    local start=$(date +%s.%N)
    "$P2RUN" "$@" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait $PID
    RC=$?
    SECS=$(echo "$(date +%s.%N) - $start" | bc)
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "status $RC, expected $1"; }
expect_err() { grep -qF -- "$1" "$TMP/err" || fail "stderr lacks: $1"; }
expect_out() { grep -qF -- "$1" "$TMP/out" || fail "stdout lacks: $1"; }
expect_faster() { (( $(echo "$SECS < $1" | bc) )) || fail "took ${SECS}s, expected under $1 s"; }

# No /dev/shm/p2-$PID-* left: the cheap half of expect_clean, for loops of
# runs that end before any rank starts.
expect_no_shm() {
    local left
    left=$(ls /dev/shm 2>/dev/null | grep "^p2-$PID-")
    [ -z "$left" ] || fail "shared memory left behind: $left"
}

# Nothing of job $PID may survive it: no /dev/shm/p2-$PID-* and no process
# carrying its P2_JOB (/p2-$PID-<random hex>-job) in the environment.
expect_clean() {
    local left
    left=$(ls /dev/shm 2>/dev/null | grep "^p2-$PID-")
    [ -z "$left" ] || fail "shared memory left behind: $left"
    sleep 0.2
    for env in /proc/[0-9]*/environ; do
        if tr '\0' '\n' <"$env" 2>/dev/null | grep -q "^P2_JOB=/p2-$PID-"; then
            fail "process left behind: $(dirname "$env") $(tr '\0' ' ' <"$(dirname "$env")/cmdline")"
        fi
    done
}

# hostile MODE FIELD: rank 0 of emu_hostile breaks the channel's protocol;
# the job ends at once (status 4) naming rank 0 and what it wrote.
hostile() {
    run -n 2 --timeout 30 -- "$BIN/emu_hostile" "$1"
    expect_rc 4
    expect_err "$2"
    expect_faster 10
    expect_clean
}

TOPOLOGIES=$(cd "$(dirname "$0")/../../topologies" && pwd)

# refused ARGS... -- MESSAGE: p2run ARGS ends before any rank runs, with
# status 2 and MESSAGE, leaving nothing behind.
refused() {
    local args=()
    while [ "$1" != "--" ]; do args+=("$1"); shift; done
    run -n 2 --timeout 20 "${args[@]}" -- "$BIN/emu_hello"
    expect_rc 2
    expect_err "$2"
    [ -s "$TMP/out" ] && fail "ranks ran despite: $2"
    expect_no_shm
}
