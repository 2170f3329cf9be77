# mpi_harness.sh - sourced by the MPI layer's case scripts (mpi_cases.sh, mpi_hostile_cases.sh,
# mpi_threads.sh): a temporary directory, p2run run with its output kept, and
# the checks on status, output and leftover shared memory. The sourcing
# script sets CASE, P2RUN and LABEL (how a failure names the case) first.
TMP=$(mktemp -d /tmp/p2mpi-case.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

fail() { echo "FAIL [$LABEL]: $*"; echo "--- stdout"; cat "$TMP/out" 2>/dev/null; echo "--- stderr"; cat "$TMP/err" 2>/dev/null; exit 1; }
run() {
    "$P2RUN" "$@" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait $PID
    RC=$?
}
expect_rc() { [ "$RC" -eq "$1" ] || fail "status $RC, expected $1"; }
expect_err() { grep -qF -- "$1" "$TMP/err" || fail "stderr lacks: $1"; }
expect_out() { grep -qF -- "$1" "$TMP/out" || fail "stdout lacks: $1"; }
expect_clean() {
    local left
    left=$(ls /dev/shm 2>/dev/null | grep "^p2-$PID-")
    [ -z "$left" ] || fail "shared memory left behind: $left"
}
