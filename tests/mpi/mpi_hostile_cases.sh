#!/bin/bash
# mpi_hostile_cases.sh CASE P2RUN BINDIR SRCDIR - programs that misuse the
# virtual-time MPI layer's arguments, one-sided windows, threads and
# nonblocking collectives (tests/mpi/mpi_hostile.c and mpi_lifetimes.c, run
# by p2run): each must end with the layer's message naming the call, the rank
# and the argument, or run right, and leave nothing behind. Exit 0 = pass.
set -u
CASE=$1 P2RUN=$2 BIN=$3 SRC=$4
LABEL=$CASE
. "$(dirname "$0")/mpi_harness.sh"

case $CASE in
roots_nbc)
    # Issue 37, item 2: rooted nonblocking collectives whose roots differ
    # between ranks returned, the ranks holding different data, through a
    # later MPI_Ibarrier and MPI_Iallreduce (each has a context of its own,
    # so no later call ever met the other root's message). A receive from
    # a rank of another root, a message into a call in flight made with
    # another root, and one arriving after the call ended here each end the
    # job naming both roots.
    ok() { # N CALL ROOT MESSAGE: status 1, the message, no data printed
        run -n "$1" --timeout 60 -- "$BIN/mpi_hostile" roots "$2" "$3"
        expect_rc 1
        expect_err "$4"
        grep -q "returned\|over the ranks" "$TMP/err" && fail "$2 with roots that differ returned"
        expect_clean
    }
    ok 4 ibcast 2 "p2mpi: rank 3: MPI_Ibcast: the ranks' roots differ: 2 here, 0 at rank 2 (MPI_ERR_ROOT)"
    ok 3 ireduce 1 "p2mpi: rank 1: MPI_Ireduce: a message of rank 2's MPI_Ireduce (root 1) on MPI_COMM_WORLD arrived after the call had ended here: the ranks' roots differ: 0 here, 1 at rank 2 (MPI_ERR_ROOT)"
    ok 4 igather 2 "p2mpi: rank 2: MPI_Igather: the ranks' roots differ: 0 here, 2 at rank 3 (MPI_ERR_ROOT)"
    ok 3 igatherv 1 "p2mpi: rank 1: MPI_Igatherv: a message of rank 2's MPI_Igatherv (root 1) on MPI_COMM_WORLD arrived after the call had ended here: the ranks' roots differ: 0 here, 1 at rank 2 (MPI_ERR_ROOT)"
    ok 3 iscatter 1 "p2mpi: rank 2: MPI_Iscatter: the ranks' roots differ: 1 here, 0 at rank 0 (MPI_ERR_ROOT)"
    ok 4 iscatterv 2 "p2mpi: rank 3: MPI_Iscatterv: the ranks' roots differ: 2 here, 0 at rank 0 (MPI_ERR_ROOT)"
    # 2 ranks, roots 0 and 1: both send, neither receives; either rank may
    # find the other's message first.
    run -n 2 --timeout 60 -- "$BIN/mpi_hostile" roots ibcast 1
    expect_rc 1
    grep -qE "^p2mpi: rank ([01]): MPI_Ibcast: a message of rank [01]'s MPI_Ibcast \(root [01]\) on MPI_COMM_WORLD arrived after the call had ended here: the ranks' roots differ: [01] here, [01] at rank [01] \(MPI_ERR_ROOT\)$" "$TMP/err" ||
        fail "MPI_Ibcast at roots 0 and 1: no report naming both roots"
    grep -q "returned\|over the ranks" "$TMP/err" && fail "MPI_Ibcast with roots that differ returned"
    expect_clean
    # Both ranks roots of an MPI_Igather: both wait, no message is sent; the
    # deadlock diagnosis shows each rank's root.
    run -n 2 --timeout 60 -- "$BIN/mpi_hostile" roots igather 1
    expect_rc 3
    expect_err "rank 0 (node 0): in MPI_Wait (MPI_Igather from rank 1 (root 0))"
    expect_err "rank 1 (node 1): in MPI_Wait (MPI_Igather from rank 0 (root 1))"
    expect_clean ;;
comm_free_nbc)
    # Issue 37, item 8: MPI_Comm_free with a nonblocking collective pending
    # on the communicator (legal: MPI frees it once the operation completes)
    # freed the layer's communicator at once, and the MPI_Wait after it
    # ended in a false deadlock verdict. Each kind at 2 and 3 ranks: the
    # results right, the world's collectives after it too, twice alike.
    for kind in ibarrier iallreduce ibcast; do
        for n in 2 3; do
            for i in 1 2; do
                run -n $n --timeout 60 -- "$BIN/mpi_lifetimes" comm_free $kind
                expect_rc 0
                expect_out "mpi_lifetimes: comm_free ok"
                expect_clean
                sort "$TMP/out" >"$TMP/free$i"
            done
            cmp -s "$TMP/free1" "$TMP/free2" ||
                fail "$kind at $n ranks: two runs differ: $(diff "$TMP/free1" "$TMP/free2")"
        done
    done ;;
lock_never)
    # Issue 37, item 7: a window lock that can never be granted (its holder
    # waits in MPI_Barrier or MPI_Finalize) was retried with InfiniBand
    # atomics for ever, simulated time running to seconds with no verdict.
    # A failed attempt now waits until the lock word changes (polling its
    # completions meanwhile): the job ends in the deadlock diagnosis, which
    # names the lock and its holder, and the holder's line what it waits in.
    for how in barrier finalize shared; do
        run -n 2 --timeout 60 -- "$BIN/mpi_hostile" lock $how
        expect_rc 3
        expect_err "p2sim: deadlock at simulated time"
        case $how in
        shared) held="held shared by 1 rank(s)" ;;
        *) held="held by rank 0" ;;
        esac
        expect_err "rank 1 (node 1): in MPI_Win_lock for rank 1's exclusive lock, $held"
        case $how in
        finalize) expect_err "rank 0 (node 0): in MPI_Finalize" ;;
        *) expect_err "rank 0 (node 0): in MPI_Barrier" ;;
        esac
        grep -qE "^p2sim: deadlock at simulated time [0-9.]+ us" "$TMP/err" ||
            fail "$how: no deadlock line"
        t=$(sed -nE 's/^p2sim: deadlock at simulated time ([0-9]+)\..*/\1/p' "$TMP/err")
        [ "${t:-999999}" -lt 1000 ] || fail "$how: the verdict came at ${t} us: retries moved time on"
        expect_clean
    done ;;
coll_args)
    # Issue 37, item 4: a reduction whose op, datatype or count differs
    # between ranks returned different results at the ranks (or, for some
    # counts, "truncated" naming no argument). Each message of the call
    # carries the sender's arguments in its header and the receiver compares
    # them with its own. Either side of a differing pair may report first;
    # a rank whose part ends before a receiver compares (a non-root of
    # MPI_Reduce) returns as MPI lets it, and the job ends at the comparison.
    for call in reduce allreduce reduce_scatter reduce_scatter_block scan exscan \
                ireduce iallreduce ireduce_scatter ireduce_scatter_block iscan iexscan; do
        case $call in
        reduce) name=MPI_Reduce ;; allreduce) name=MPI_Allreduce ;;
        reduce_scatter) name=MPI_Reduce_scatter ;; reduce_scatter_block) name=MPI_Reduce_scatter_block ;;
        scan) name=MPI_Scan ;; exscan) name=MPI_Exscan ;; ireduce) name=MPI_Ireduce ;;
        iallreduce) name=MPI_Iallreduce ;; ireduce_scatter) name=MPI_Ireduce_scatter ;;
        ireduce_scatter_block) name=MPI_Ireduce_scatter_block ;; iscan) name=MPI_Iscan ;;
        iexscan) name=MPI_Iexscan ;;
        esac
        case $call in
        *reduce_scatter) arg="recvcounts differ: they add up to (2 here, 3|3 here, 2|4 here, 5|5 here, 4) at rank [0-9]" ;;
        *reduce_scatter_block) arg="counts differ: recvcount = (1 here, 2|2 here, 1) at rank [0-9]" ;;
        *) arg="counts differ: count = (4 here, 2|2 here, 4) at rank [0-9]" ;;
        esac
        for what in op:"ops differ: (MPI_SUM here, MPI_PROD|MPI_PROD here, MPI_SUM) at rank [0-9] \(MPI_ERR_OP\)" \
                    type:"datatypes differ: (MPI_INT here, MPI_FLOAT|MPI_FLOAT here, MPI_INT) at rank [0-9] \(MPI_ERR_TYPE\)" \
                    count:"$arg \(MPI_ERR_COUNT\)"; do
            for n in 2 4; do
                run -n $n --timeout 60 -- "$BIN/mpi_hostile" args $call "${what%%:*}"
                expect_rc 1
                grep -qE "^p2mpi: rank [0-9]: $name: the ranks' ${what#*:}$" "$TMP/err" ||
                    fail "$name at $n ranks, ${what%%:*} differing: no report naming it"
                grep -q "returned" "$TMP/err" && fail "$name with a differing ${what%%:*} returned"
                expect_clean
            done
        done
    done ;;
rma_disp)
    # Issue 37, item 1: displacements whose product with the displacement unit
    # overflows 64 bits, and a negative one a datatype's offset brings back
    # into the window, once wrapped or added reached the target's bytes 8-15
    # or 0-3 (a Get read them, a Put overwrote them). Every one-sided call
    # taking a target displacement must refuse them at the origin.
    for call in put get acc getacc fop cas rput rget racc rgetacc; do
        case $call in
        put) name=MPI_Put ;; get) name=MPI_Get ;; acc) name=MPI_Accumulate ;;
        getacc) name=MPI_Get_accumulate ;; fop) name=MPI_Fetch_and_op ;;
        cas) name=MPI_Compare_and_swap ;; rput) name=MPI_Rput ;; rget) name=MPI_Rget ;;
        racc) name=MPI_Raccumulate ;; rgetacc) name=MPI_Rget_accumulate ;;
        esac
        run -n 2 --timeout 60 -- "$BIN/mpi_hostile" disp $call wrap
        expect_rc 1
        expect_err "p2mpi: rank 0: $name: target_disp = 2305843009213693953 times rank 1's displacement unit 8 overflows 64 bits (MPI_ERR_DISP)"
        grep -q "returned" "$TMP/err" && fail "$name at an overflowing displacement returned"
        expect_clean
    done
    run -n 2 --timeout 60 -- "$BIN/mpi_hostile" disp put wrap20
    expect_rc 1
    expect_err "p2mpi: rank 0: MPI_Put: target_disp = 17592186044416 times rank 1's displacement unit 1048576 overflows 64 bits (MPI_ERR_DISP)"
    for call in put get acc fop cas; do
        run -n 2 --timeout 60 -- "$BIN/mpi_hostile" disp $call neg
        expect_rc 1
        expect_err "target_disp = -1 is negative (MPI_ERR_DISP)"
        grep -q "returned" "$TMP/err" && fail "$call at a negative displacement returned"
    done
    expect_clean ;;
counts)
    # Issue 37, item 9: negative counts (a segfault in the layer, or "out of
    # memory for a 18446744073709551612-byte buffer") and NULL request
    # pointers end the job naming the call, the rank and the argument.
    for pair in send:MPI_Send:count:0 irecv:MPI_Irecv:count:1 sendrecv:MPI_Sendrecv:recvcount:. \
                send_init:MPI_Send_init:count:0 bcast:MPI_Bcast:count:. reduce:MPI_Reduce:count:. \
                allreduce:MPI_Allreduce:count:. scan:MPI_Scan:count:. iallreduce:MPI_Iallreduce:count:. \
                ireduce:MPI_Ireduce:count:. allgather:MPI_Allgather:sendcount:. \
                gatherv:MPI_Gatherv:recvcounts[1]:0 ialltoallv:MPI_Ialltoallv:sendcounts[1]:. \
                neighbor_alltoallv:MPI_Neighbor_alltoallv:sendcounts[1]:. put:MPI_Put:origin_count:0; do
        IFS=: read -r call name arg who <<<"$pair"
        run -n 2 --timeout 60 -- "$BIN/mpi_hostile" count $call
        expect_rc 1
        grep -qE "^p2mpi: rank $who: $name: ${arg//[/\\[} = -4 is negative \(MPI_ERR_COUNT\)$" "$TMP/err" ||
            fail "$name: no MPI_ERR_COUNT report naming $arg"
        grep -q "returned" "$TMP/err" && fail "$name with a negative count returned"
        expect_clean
    done
    for pair in isend:MPI_Isend:0 irecv:MPI_Irecv:1 iallreduce:MPI_Iallreduce:. \
                ineighbor_allgather:MPI_Ineighbor_allgather:. wait:MPI_Wait:. rput:MPI_Rput:0; do
        IFS=: read -r call name who <<<"$pair"
        run -n 2 --timeout 60 -- "$BIN/mpi_hostile" nullreq $call
        expect_rc 1
        grep -qE "^p2mpi: rank $who: $name: request is NULL \(MPI_ERR_REQUEST\)$" "$TMP/err" ||
            fail "$name: no MPI_ERR_REQUEST report for a NULL request"
        grep -q "returned" "$TMP/err" && fail "$name with a NULL request returned"
        expect_clean
    done ;;
rma_memory)
    # Issue 37, item 10: windows on memory the process cannot write (a
    # SIGSEGV inside the layer at the target's next synchronisation, or at
    # once for MPI_Win_create(NULL, 1 MiB)). Attach and create refuse it;
    # memory unmapped after MPI_Win_create is reported by its owner's next
    # synchronisation, and after MPI_Win_attach at the origin whose
    # operation reached it, not as a SIGSEGV in the target.
    for what in attach-unmapped attach-readonly; do
        run -n 2 --timeout 60 -- "$BIN/mpi_hostile" memory $what
        expect_rc 1
        grep -qE "^p2mpi: rank 1: MPI_Win_attach: base = 0x[0-9a-f]+, size = 65536: the memory is not mapped writable for its whole length \(MPI_ERR_RMA_ATTACH\)$" "$TMP/err" ||
            fail "$what: no MPI_ERR_RMA_ATTACH report"
        grep -qi "segmentation\|signal" "$TMP/err" && fail "$what: a signal"
        expect_clean
    done
    for what in create-null create-readonly; do
        run -n 2 --timeout 60 -- "$BIN/mpi_hostile" memory $what
        expect_rc 1
        grep -qE "^p2mpi: rank 1: MPI_Win_create: base = (0x[0-9a-f]+|\(nil\)), size = 1048576: the memory is not mapped writable for its whole length \(MPI_ERR_ARG\)$" "$TMP/err" ||
            fail "$what: no MPI_ERR_ARG report"
        grep -qi "segmentation\|signal" "$TMP/err" && fail "$what: a signal"
        expect_clean
    done
    run -n 2 --timeout 60 -- "$BIN/mpi_hostile" memory create-freed
    expect_rc 1
    grep -qE "^p2mpi: rank 1: MPI_Win_fence: window [0-9]+: its memory, 1048576 bytes at 0x[0-9a-f]+, is no longer mapped writable \(freed before MPI_Win_free\?\) \(MPI_ERR_ARG\)$" "$TMP/err" ||
        fail "memory unmapped after MPI_Win_create: no report"
    grep -qi "segmentation\|signal" "$TMP/err" && fail "create-freed: a signal"
    expect_clean
    run -n 2 --timeout 60 -- "$BIN/mpi_hostile" memory attach-freed
    expect_rc 1
    grep -qE "^p2mpi: rank 0: MPI_Win_flush_all: MPI_Put to rank 1: window [0-9]+ \(dynamic\): the 8 bytes at 0x[0-9a-f]+ are attached there but no longer mapped writable \(freed after MPI_Win_attach\?\) \(MPI_ERR_RMA_ATTACH\)$" "$TMP/err" ||
        fail "memory unmapped after MPI_Win_attach: no report at the origin"
    grep -qi "segmentation\|signal" "$TMP/err" && fail "attach-freed: a signal"
    expect_clean ;;
eager_min)
    # Issue 37, item 6: mpi_eager_bytes = 0 was accepted at load and failed
    # every MPI_Accumulate at run time (an accumulate's active message
    # carries at least one element in an eager buffer). It is refused at
    # load, naming the minimum; at the minimum every accumulate kind works
    # on the widest predefined type.
    printf 'mpi_eager_bytes = 0\n' >"$TMP/eager.params"
    run -n 2 --timeout 60 --params "$TMP/eager.params" -- "$BIN/mpi_hostile" acc
    expect_rc 2
    expect_err "$TMP/eager.params:1: mpi_eager_bytes = 0: must be in [64, 1048576]"
    [ -s "$TMP/out" ] && fail "ranks ran with mpi_eager_bytes = 0"
    printf 'mpi_eager_bytes = 64\n' >"$TMP/eager.params"
    run -n 2 --timeout 60 --params "$TMP/eager.params" -- "$BIN/mpi_hostile" acc
    expect_rc 0
    expect_out "acc: old 12, got 11+2i, prev 5: ok"
    expect_out "acc: target ok"
    expect_clean ;;
*)
    echo "unknown case $CASE"; exit 2 ;;
esac
echo "PASS [$CASE]"
