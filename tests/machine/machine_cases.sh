#!/bin/bash
# machine_cases.sh CASE P2RUN BINDIR SRCDIR - the whole HA-PACS/TCA machine
# (topologies/hapacs-tca-64.topo) under p2run: status, output, messages, and
# that nothing is left behind. Exit 0 = pass; a failure says what differed.
set -u
CASE=$1 P2RUN=$2 BIN=$3 SRC=$4
LABEL=machine.$CASE
. "$SRC/tests/mpi/mpi_harness.sh"
TOPO=$SRC/topologies

case $CASE in
64)
    # 64 ranks, four sub-clusters of 16: every check of machine.c, and the
    # refusals said on stderr, naming both nodes and sub-clusters.
    run -n 64 --timeout 240 --topology "$TOPO/hapacs-tca-64.topo" -- "$BIN/machine" 16
    expect_rc 0
    expect_out "machine: 64 ranks, 4 sub-clusters of 16 ranks"
    expect_out "machine: all checks passed"
    expect_err "p2tca: rank 0: DMA from node 0 to node 16 refused: node 0 is on PEACH2 sub-cluster 0, node 16 on sub-cluster 1"
    expect_err "p2tca: rank 63: PIO from node 63 to node 15 refused: node 63 is on PEACH2 sub-cluster 3, node 15 on sub-cluster 0"
    expect_err "p2coll: P2_COMM_WORLD: the job's ranks are on 4 PEACH2 networks (sub-clusters)"
    expect_err "p2_exchange: the job's ranks are on several PEACH2 networks (sub-clusters), which no cable joins, and the MPI layer holds the InfiniBand HCA"
    # The figures, pinned (the run is deterministic).
    expect_out "P2_COMM_SUBCLUSTER allreduce 32 doubles: host 16.765 us, GPU 25.601 us"
    expect_out "P2_COMM_SUBCLUSTER allgather 32 ints: host 16.483 us, GPU 18.187 us"
    grep "P2_COMM_SUBCLUSTER" "$TMP/out" >"$TMP/times64"
    expect_clean
    # Each sub-cluster runs its collectives on its own cables, all four at
    # once from the same simulated time: the slowest rank's times are those
    # of a 16-rank job on one 2x8 torus with InfiniBand, within 0.2% (a few
    # ns: the ranks' times in sub-clusters 1-3 differ from sub-cluster 0's by
    # up to 20 ns, also when sub-clusters 2 and 3 have no ranks).
    run -n 16 --timeout 120 --topology "$TOPO/hapacs-tca-2x8-ib.topo" -- "$BIN/machine" 16
    expect_rc 0
    expect_out "machine: 16 ranks, 1 sub-cluster of 16 ranks"
    expect_out "machine: all checks passed"
    grep "P2_COMM_SUBCLUSTER" "$TMP/out" >"$TMP/times16"
    [ -s "$TMP/times16" ] || fail "no times printed"
    paste -d' ' "$TMP/times64" "$TMP/times16" | awk '{
            n = 0
            for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) v[n++] = $i
            if (n != 4) exit 1
            for (i = 0; i < 2; i++) {
                d = v[i] - v[i + 2]; if (d < 0) d = -d
                if (d > 0.002 * v[i + 2]) exit 1
            }
        }' || fail "sub-cluster times at 64 ranks not within 0.2% of one 2x8 torus's: $(paste "$TMP/times64" "$TMP/times16")"
    expect_clean ;;
20)
    # 20 ranks on the 64 nodes: sub-cluster 0 full, sub-cluster 1 with 4
    # ranks (nodes 16-19), the other nodes idle; the refusals name 2 networks.
    run -n 20 --timeout 120 --topology "$TOPO/hapacs-tca-64.topo" -- "$BIN/machine" 16
    expect_rc 0
    expect_out "machine: all checks passed"
    expect_err "p2coll: P2_COMM_WORLD: the job's ranks are on 2 PEACH2 networks (sub-clusters)"
    expect_err "p2tca: rank 19: DMA from node 19 to node 3 refused: node 19 is on PEACH2 sub-cluster 1, node 3 on sub-cluster 0"
    expect_clean ;;
exchange_64)
    # A TCA program without MPI on the 64 nodes: p2_exchange crosses the four
    # sub-clusters over InfiniBand, every byte of every exchange right,
    # sub-cluster collectives between crossings, a handle learnt through it
    # used for a DMA; twice alike, the times pinned.
    for i in 1 2; do
        run -n 64 --timeout 240 --topology "$TOPO/hapacs-tca-64.topo" -- "$BIN/machine_exchange"
        expect_rc 0
        expect_out "exchange: 64 ranks on 4 sub-cluster(s)"
        expect_out "exchange: all checks passed"
        cp "$TMP/out" "$TMP/x$i"
    done
    cmp -s "$TMP/x1" "$TMP/x2" || fail "two runs differ: $(diff "$TMP/x1" "$TMP/x2")"
    expect_out "p2_exchange 8 B: 42.695 us, p2_exchange_barrier: 42.628 us"
    expect_clean ;;
exchange_scattered)
    # 20 ranks dealt over the four sub-clusters (rank r on node 16 (r % 4) +
    # r / 4): no sub-cluster holds two consecutive ranks, so every leader
    # writes one slot at a time.
    for r in $(seq 0 19); do echo "$r $(( (r % 4) * 16 + r / 4 ))"; done >"$TMP/scattered.map"
    run -n 20 --timeout 240 --topology "$TOPO/hapacs-tca-64.topo" --map "$TMP/scattered.map" -- \
        "$BIN/machine_exchange"
    expect_rc 0
    expect_out "exchange: all checks passed"
    expect_clean ;;
exchange_sizes)
    # Issue 37, item 5: a rank passing p2_exchange other bytes than the
    # others got success, and the others zeros for its missing bytes. Every
    # rank gets TCA_ERROR_INVALID_ARGUMENT and rank 0 says who passed what,
    # on one PEACH2 network (16 ranks) and across four over InfiniBand (20
    # ranks on the 64-node machine, the last on sub-cluster 1); the next
    # exchange works.
    for how in "16 $TOPO/hapacs-tca-2x8-ib.topo 0-14 15" "20 $TOPO/hapacs-tca-64.topo 0-18 19"; do
        set -- $how
        run -n "$1" --timeout 240 --topology "$2" -- "$BIN/machine_exchange" sizes
        expect_rc 0
        [ "$(grep -c ': TCA_ERROR_INVALID_ARGUMENT$' "$TMP/out")" -eq "$1" ] ||
            fail "not every rank's p2_exchange refused sizes that differ"
        [ "$(grep -c 'the next exchange ok$' "$TMP/out")" -eq "$1" ] || fail "the next exchange failed"
        expect_err "p2_exchange: the ranks' sizes differ: 8 bytes at ranks $3; 16 bytes at rank $4 (TCA_ERROR_INVALID_ARGUMENT)"
        [ "$(grep -c 'p2_exchange:' "$TMP/err")" -eq 1 ] || fail "not one line on stderr"
        expect_clean
    done ;;
exchange_no_ib)
    # Two sub-clusters and no HCA: refused on every rank, rank 0 saying why.
    printf 'nodes 32\nnetworks 2\ntorus 2 8 at=0\ntorus 2 8 at=16\ndevice peach2\n' >"$TMP/no-ib.topo"
    run -n 32 --timeout 120 --topology "$TMP/no-ib.topo" -- "$BIN/machine_exchange"
    expect_rc 1
    expect_err "p2_exchange: the job's ranks are on several PEACH2 networks (sub-clusters), which no cable joins, and the topology gives the nodes no InfiniBand HCA"
    expect_clean ;;
pingpong_64)
    # The issue's command: the ping-pong between nodes 0 and 15 of the
    # 64-node machine (its handles exchanged across all four sub-clusters)
    # gives the 16-node torus's times.
    PP=$BIN/../../workloads/pingpong
    run -n 64 --timeout 240 --topology "$TOPO/hapacs-tca-64.topo" -- "$PP" -m dma -p 0,15 -e 64K
    expect_rc 0
    awk '$1 == "dma" {print $2, $4}' "$TMP/out" >"$TMP/pp64"
    run -n 16 --timeout 240 -- "$PP" -m dma -p 0,15 -e 64K
    expect_rc 0
    awk '$1 == "dma" {print $2, $4}' "$TMP/out" >"$TMP/pp16"
    [ "$(wc -l <"$TMP/pp64")" -eq 14 ] || fail "not 14 sizes at 64 ranks: $(cat "$TMP/pp64")"
    paste -d' ' "$TMP/pp64" "$TMP/pp16" | awk '{ d = $2 - $4; if (d < 0) d = -d; if ($1 != $3 || d > 0.002) exit 1 }' ||
        fail "64-node ping-pong differs from the 16-node torus's: $(paste "$TMP/pp64" "$TMP/pp16")"
    expect_clean ;;
tcamini)
    # TCAMINI with its InfiniBand rail: one network of 8.
    run -n 8 --timeout 120 --topology "$TOPO/tcamini-ring8-ib.topo" -- "$BIN/machine" 8
    expect_rc 0
    expect_out "machine: 8 ranks, 1 sub-cluster of 8 ranks"
    expect_out "machine: all checks passed"
    expect_clean ;;
bad_topology)
    # Two tori that no cable joins, without a `networks` line: refused with
    # the file and what to write.
    printf 'nodes 32\ntorus 2 8 at=0\ntorus 2 8 at=16\ndevice peach2\ndevice ib\n' >"$TMP/two.topo"
    run -n 2 --timeout 60 --topology "$TMP/two.topo" -- "$BIN/machine" 16
    expect_rc 2
    expect_err "$TMP/two.topo: node 16 is not connected to node 0 (a file whose cables form several PEACH2 networks says how many with 'networks K')"
    expect_clean ;;
*)
    echo "unknown case $CASE"
    exit 2 ;;
esac
echo "PASS [$LABEL]"
