#!/bin/bash
# p2run_cases.sh CASE P2RUN BINDIR - one end-to-end case of the virtual-cluster
# runtime: runs p2run on a small rank program (built in BINDIR) and checks its
# status, its messages, its duration, and that it left no process and no
# shared-memory segment behind. Exit 0 = pass; a failure says what differed.
set -u
CASE=$1 P2RUN=$2 BIN=$3
. "$(dirname "$0")/p2run_harness.sh"

case $CASE in
hostile_stamp_max)
    hostile stamp-max "p2sim: rank 0 (node 0, pid" ; expect_err "stamp_ps of request 0 (op 10) is 18446744073709551615 ps, past the latest time" ;;
hostile_stamp_back)
    hostile stamp-back "stamp_ps of request 1 (op 10) is 0.001 us, before its previous request's 2.000 us" ;;
hostile_head)
    hostile head "req_head is 1000000 with 0 requests consumed" ;;
hostile_op)
    hostile op "op of request 0 (op 99) is no channel operation" ;;
hostile_lock)
    hostile lock "lock (a) of request 0 (op 11) is 5; a rank has one lock, 0" ;;
hostile_len)
    hostile len "len of request 0 is 1073741824 bytes; a request carries 448" ;;
hostile_clock)
    hostile clock "clock_pub is 9223372036854775806 ps, past the latest time a rank may reach" ;;
hostile_truncate_job)
    hostile truncate-job "shrank under" ;;
hostile_truncate_arena)
    hostile truncate-arena "-n0-host shrank under the simulator (a process of the job truncated it)" ;;
hostile_name_decoy|hostile_name_long)
    # The name p2run removes objects by is its own copy: another job's objects
    # (here a decoy named as one) survive, this job's do not.
    decoy=/dev/shm/p2-decoy-$$
    : >"$decoy" || fail "cannot create $decoy"
    run -n 2 --timeout 30 -- "$BIN/emu_hostile" "$(echo "${CASE#hostile_}" | tr _ -)"
    [ -e "$decoy" ] || fail "p2run removed another job's object ($decoy)"
    rm -f "$decoy"
    # Rank 1 waits forever (a deadlock, 3) or, attaching after the damage,
    # refuses the segment (1): either way the job ends.
    [ "$RC" -eq 3 ] || [ "$RC" -eq 1 ] || fail "status $RC, expected 3 or 1"
    expect_out "rank 0: job name overwritten"
    expect_clean ;;
params_read)
    # p2_param (p2.h): the job's value of a rank parameter, a parameter
    # file's where one sets it, the default without p2run, NaN for a name
    # that is no rank parameter (a model parameter is not one).
    P=$TMP/p.params
    printf 'gpu_mem_gbps = 250\n' >"$P"
    run -n 2 --timeout 30 --params "$P" -- "$BIN/emu_compute" param gpu_mem_gbps gpu_dp_gflops
    expect_rc 0
    [ "$(grep -c '^gpu_mem_gbps = 250$' "$TMP/out")" = 2 ] || fail "both ranks should read gpu_mem_gbps = 250"
    expect_out "gpu_dp_gflops = 1100"
    "$BIN/emu_compute" param gpu_mem_gbps no_such_param link_latency_ns >"$TMP/out" 2>/dev/null ||
        fail "emu_compute param without p2run failed"
    expect_out "gpu_mem_gbps = 180"
    expect_out "no_such_param = nan"
    expect_out "link_latency_ns = nan"
    expect_clean ;;
same_times_4_of_16)
    # Four ranks on the 16-node torus, collectives exchanging PIO and DMA at
    # close stamps: the run that once gave other simulated times about one
    # time in five (the simulator read a rank's ring before its published
    # clock, so a request pushed in between could execute late). Eight runs
    # must print the same times.
    for i in 1 2 3 4 5 6 7 8; do
        run -n 4 --timeout 60 -- "$BIN/../ranks/rk_coll" golden
        expect_rc 0
        grep '^rank 0: golden' "$TMP/out" >>"$TMP/all"
    done
    [ "$(sort -u "$TMP/all" | wc -l)" -eq 2 ] ||
        fail "runs gave different simulated times: $(sort "$TMP/all" | uniq -c)"
    expect_clean ;;
param_rules)
    # Issue 18: in-range values that broke the job only once it ran (MPI_Init
    # said "mpi_host_bytes (0) is too small", or refused mpi_eager_bytes in
    # every rank), a parameter set twice (the second line won silently) and a
    # NUL byte in a value (read up to the NUL) are refused when the simulator
    # loads them, naming the parameter file's line.
    P=$TMP/p.params
    printf 'mpi_eager_bytes = 1048576\n' >"$P"
    refused --params "$P" -- "$P:1: mpi_host_bytes = 67108864 cannot hold the MPI layer's queues and 384 eager buffers of mpi_eager_bytes = 1048576 and 1 MiB of rendezvous staging: they need 403939328 bytes"
    printf '# the MPI layer takes it all\nmpi_host_bytes = 1073741824\n' >"$P"
    refused --params "$P" --topology "$TOPOLOGIES/hapacs-tca-2x8-ib.topo" -- \
        "$P:2: device ib: mpi_host_bytes = 1073741824 leaves nothing of host_memory_bytes = 268435456 to tcaMalloc, less than its minimum 1048576"
    printf 'host_memory_bytes = 67633152\n' >"$P"
    refused --params "$P" -- "$P:1: mpi_host_bytes = 67108864 leaves 524288 bytes of host_memory_bytes = 67633152 to tcaMalloc"
    printf 'link_latency_ns = 80\nchip_mhz = 200\nlink_latency_ns = 100\n' >"$P"
    refused --params "$P" -- "$P:3: parameter 'link_latency_ns' is already set on line 1"
    printf 'chip_mhz = 200\nlink_latency_ns = 12\0000\n' >"$P"
    refused --params "$P" -- "$P:2: NUL byte in the line"
    expect_clean
    # The rule is MPI_Init's own: at the least share it accepts, MPI starts.
    [ -x "$BIN/emu_mpi" ] || { echo "SKIP (MPI half): no MPI"; echo "PASS [$CASE]"; exit 0; }
    printf 'mpi_eager_bytes = 1048576\nmpi_host_bytes = 403939328\nhost_memory_bytes = 1073741824\n' >"$P"
    run -n 2 --timeout 60 --params "$P" -- "$BIN/emu_mpi"
    expect_rc 0
    expect_out "rank 1: word arrived at"
    expect_clean ;;
device_rules)
    # Issue 18: a rule between IB or SR8000 parameters broken by the
    # parameter file blamed the shipped topology's `device` line; a crossbar
    # without its device said "node 1 is not connected".
    P=$TMP/p.params
    printf 'ib_host_cpl_bytes = 512\n' >"$P"
    refused --params "$P" --topology "$TOPOLOGIES/hapacs-tca-2x8-ib.topo" -- \
        "$P:1: device ib: ib_host_cpl_bytes = 512 exceeds ib_pcie_max_payload_bytes = 256"
    grep -qF "hapacs-tca-2x8-ib.topo" "$TMP/err" && fail "blames the topology file"
    printf '# bigger packets\nsr8000_packet_bytes = 65536\n' >"$P"
    refused --params "$P" --topology "$TOPOLOGIES/sr8000-8.topo" -- \
        "$P:2: sr8000_rx_buffer_bytes = 16384 cannot hold one packet"
    printf 'name no device\ncrossbar 2 2\n' >"$TMP/x.topo"
    refused --topology "$TMP/x.topo" -- "$TMP/x.topo:2: 'crossbar' joins SR8000 NIAs, but no 'device sr8000' line"
    grep -qF "not connected" "$TMP/err" && fail "says a node is not connected"
    expect_clean ;;
flag_repeats)
    # Issue 18: a repeated flag silently dropped the first value; an empty
    # one was ignored.
    printf 'chip_mhz = 200\n' >"$TMP/a.params"
    printf 'chip_mhz = 100\n' >"$TMP/b.params"
    refused --params "$TMP/a.params" --params "$TMP/b.params" -- "flag '--params' is given twice"
    refused --map "$TOPOLOGIES/identity-16.map" --map="$TOPOLOGIES/identity-16.map" -- "flag '--map' is given twice"
    refused --topology "$TOPOLOGIES/tcamini-ring8.topo" --topology "$TOPOLOGIES/hapacs-tca-2x8.topo" -- \
        "flag '--topology' is given twice"
    refused -n 2 -- "flag '-n' is given twice"
    refused --stats "" -- "flag '--stats' needs a value, not an empty one"
    refused --trace= -- "flag '--trace' needs a value, not an empty one"
    expect_clean ;;
output_clashes)
    # Issue 18: --stats and --trace naming one file made invalid JSON;
    # --stats naming the program truncated it to nothing. Any output that is
    # the other output, an input, the program, p2run or the simulator is
    # refused before anything starts (by device and inode when it exists).
    # Copies only: a p2run that does overwrite them harms nothing else.
    cp "$BIN/emu_hello" "$TMP/prog"
    cp "$P2RUN" "$TMP/p2run"
    cp "$(dirname "$P2RUN")/../model/sim/p2sim" "$TMP/p2sim"
    mkdir "$TMP/topologies"
    cp "$TOPOLOGIES/hapacs-tca-2x8.topo" "$TMP/topologies/"
    export P2_SIM=$TMP/p2sim P2_TOPOLOGY_DIR=$TMP/topologies
    P2RUN=$TMP/p2run
    printf 'chip_mhz = 250\n' >"$TMP/p.params"
    ln -s "$TMP/prog" "$TMP/prog-link"
    prog_refused() {
        run -n 2 --timeout 20 "$@" -- "$TMP/prog"
        expect_rc 2
        [ -s "$TMP/out" ] && fail "ranks ran despite: $*"
        expect_no_shm
    }
    prog_refused --stats "$TMP/same.json" --trace "$TMP/./same.json"
    expect_err "p2run: --stats and --trace name the same file"
    [ -e "$TMP/same.json" ] && fail "created the clashing output"
    prog_refused --stats "$TMP/prog-link"
    expect_err "p2run: --stats: '$TMP/prog-link' is the program"
    prog_refused --trace "$TMP/p2run"
    expect_err "p2run: --trace: '$TMP/p2run' is p2run itself"
    prog_refused --stats "$TMP/p2sim"
    expect_err "p2run: --stats: '$TMP/p2sim' is the simulator"
    prog_refused --params "$TMP/p.params" --trace "$TMP/p.params"
    expect_err "p2run: --trace: '$TMP/p.params' is the --params file"
    cp "$TOPOLOGIES/hapacs-tca-2x8.topo" "$TMP/t.topo"
    prog_refused --topology "$TMP/t.topo" --stats "$TMP/t.topo"
    expect_err "is the --topology file"
    prog_refused --stats "$TMP/topologies/hapacs-tca-2x8.topo"  # the default one
    expect_err "is the --topology file"
    cmp -s "$TMP/prog" "$BIN/emu_hello" || fail "the program was changed"
    [ -s "$TMP/p2sim" ] && [ -s "$TMP/p2run" ] && grep -q chip_mhz "$TMP/p.params" &&
        cmp -s "$TMP/t.topo" "$TOPOLOGIES/hapacs-tca-2x8.topo" ||
        fail "an input or p2run's own file was overwritten"
    # Distinct files still work.
    run -n 2 --timeout 20 --stats "$TMP/s.json" --trace "$TMP/t.json" -- "$TMP/prog"
    expect_rc 0
    python3 -c "import json,sys; [json.load(open(f)) for f in sys.argv[1:]]" "$TMP/s.json" "$TMP/t.json" ||
        fail "--stats or --trace is not valid JSON"
    expect_clean ;;
output_errors)
    # Issue 18: a --trace or --stats file that cannot be written at the end
    # (a full disk) ended the job with status 0, with no word for --trace.
    for flag in --trace --stats; do
        run -n 2 --timeout 20 $flag /dev/full -- "$BIN/emu_hello"
        expect_rc 2
        expect_err "p2sim: $flag: writing '/dev/full' failed: No space left on device"
        expect_out "rank 1 of 2"
        expect_clean
    done
    run -n 2 --timeout 20 --stats /proc/version -- "$BIN/emu_hello"
    [ "$RC" -ne 0 ] || fail "status 0 although /proc/version took no statistics"
    expect_err "/proc/version"
    expect_clean ;;
sim_false)
    # Issue 18: a simulator that ends at once without a word (a wrong P2_SIM)
    # left the job silent.
    P2_SIM=/bin/false run -n 2 --timeout 20 -- "$BIN/emu_hello"
    expect_rc 1
    expect_err "p2run: the simulator /bin/false (pid "
    expect_err ") exited with status 1 before it was ready"
    expect_clean ;;
shm_names)
    # Issue 18: shm names were /p2-<pid>-..., so anyone could create them
    # first and block every job ("File exists"); p2run even removed such an
    # object when it could. Names carry 64 random bits now: objects made under
    # the predictable names neither block the job nor are touched by it.
    sh -c 'for o in job n0-host n0-gpu n1-host; do : >"/dev/shm/p2-$$-$o"; done
           exec "$0" -n 2 --timeout 20 -- /usr/bin/printenv P2_JOB' "$P2RUN" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait $PID
    RC=$?
    expect_rc 0
    for o in job n0-host n0-gpu n1-host; do
        [ -e "/dev/shm/p2-$PID-$o" ] || fail "p2run removed another user's object p2-$PID-$o"
        rm -f "/dev/shm/p2-$PID-$o"
    done
    grep -qx "/p2-$PID-[0-9a-f]\{16\}-job" "$TMP/out" || fail "job name not /p2-$PID-<16 hex>-job"
    [ "$(sort -u "$TMP/out" | wc -l)" -eq 1 ] || fail "ranks saw different job names"
    cp "$TMP/out" "$TMP/first"
    run -n 1 --timeout 20 -- /usr/bin/printenv P2_JOB
    expect_rc 0
    sed "s/^\/p2-[0-9]*-//" "$TMP/first" >"$TMP/a"
    sed "s/^\/p2-[0-9]*-//" "$TMP/out" >"$TMP/b"
    cmp -s "$TMP/a" "$TMP/b" && fail "two jobs drew the same random name"
    expect_clean
    # A name that exists already is someone else's: p2run draws another.
    FIXED=0123456789abcdef
    LD_PRELOAD=$BIN/libp2_fixed_random.so P2_FIXED_RANDOM=$FIXED \
        sh -c ': >"/dev/shm/p2-$$-'$FIXED'-job"; exec "$0" -n 1 --timeout 20 -- /usr/bin/printenv P2_JOB' \
        "$P2RUN" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait $PID
    RC=$?
    [ -e "/dev/shm/p2-$PID-$FIXED-job" ] || fail "p2run removed another user's p2-$PID-$FIXED-job"
    rm -f "/dev/shm/p2-$PID-$FIXED-job"
    expect_rc 0
    grep -qx "/p2-$PID-[0-9a-f]\{16\}-job" "$TMP/out" || fail "job name not /p2-$PID-<16 hex>-job"
    grep -q "$FIXED" "$TMP/out" && fail "p2run used a name that existed"
    expect_clean ;;
small_shm)
    # Issue 37, item 12: with a 64 MB /dev/shm (many containers' default) the
    # job started, a rank writing its memory died of SIGBUS with no cause
    # given. p2run warns before the ranks start that the nodes' memory does
    # not fit, and names the full /dev/shm when a rank dies of it. Needs a
    # mount namespace of its own (unshare -m): skipped where there is none.
    unshare -m true 2>/dev/null ||
        { echo "SKIP [$CASE]: no mount namespace here (unshare -m) to give the job a small /dev/shm"; exit 77; }
    PP=$BIN/../../workloads/pingpong
    unshare -m bash -c "mount -t tmpfs -o size=64m tmpfs /dev/shm &&
        '$P2RUN' -n 2 --timeout 60 -- '$PP' -m dma -b 64M -e 64M >'$TMP/out' 2>'$TMP/err';
        echo \$? >'$TMP/rc'; ls /dev/shm >'$TMP/left'"
    RC=$(cat "$TMP/rc")
    [ "$RC" -ne 0 ] || fail "a job whose memory does not fit in /dev/shm exited 0"
    expect_err "p2run: warning: /dev/shm holds 64 MiB, less than the 16 nodes' host memory (4096 MiB"
    expect_err "was killed by signal 7 (Bus error): /dev/shm is full ("
    [ ! -s "$TMP/left" ] || fail "left in the small /dev/shm: $(cat "$TMP/left")" ;;
grandchild)
    # Issue 18: a process a rank forked outlived the job. Each rank runs in a
    # process group of its own, which the job ends whole (SIGTERM, then
    # SIGKILL for one that ignores it); expect_clean finds any process left
    # with the job's P2_JOB.
    run -n 2 --timeout 20 -- /bin/sh -c '(trap "" TERM; exec sleep 300) & sleep 300 & exit 0'
    expect_rc 0
    expect_faster 10
    expect_clean
    # Issue 36: a daemon leaves every group of the job: a child that calls
    # setsid() and forks again, its parent gone (setsid -f forks, the new
    # session's shell starts sleep and exits). p2run adopts such orphans
    # (it is its descendants' subreaper) and ends them with the job.
    run -n 2 --timeout 20 -- /bin/sh -c 'setsid -f /bin/sh -c "sleep 300 & exit 0"; sleep 0.2; exit 0'
    expect_rc 0
    expect_faster 10
    expect_clean
    # A rank that forked and then failed: the job ends with its status.
    run -n 2 --timeout 20 -- /bin/sh -c 'sleep 300 & exec "$0"' "$BIN/emu_crash"
    expect_rc 7
    expect_clean ;;
leaks)
    # Issue 18: p2run leaked its rank table on every run. p2run built with
    # AddressSanitizer (p2run_asan) must exit without LeakSanitizer's report,
    # whichever way the job ends.
    [ -x "$BIN/p2run_asan" ] || { echo "SKIP: no AddressSanitizer"; exit 0; }
    P2RUN=$BIN/p2run_asan
    export ASAN_OPTIONS=detect_leaks=1:exitcode=99 P2_SIM=$(dirname "$2")/../model/sim/p2sim
    run -n 2 --timeout 20 --topology "$TOPOLOGIES/hapacs-tca-2x8.topo" -- "$BIN/emu_hello"
    expect_rc 0
    grep -q "LeakSanitizer" "$TMP/err" && fail "p2run leaks"
    run -n 2 --timeout 20 --topology "$TOPOLOGIES/hapacs-tca-2x8.topo" -- "$BIN/emu_crash" exit7
    expect_rc 7
    grep -q "LeakSanitizer" "$TMP/err" && fail "p2run leaks"
    expect_clean ;;
hello)
    run -n 2 --timeout 20 -- "$BIN/emu_hello"
    expect_rc 0
    expect_out "rank 0 of 2: t0 0.000000 us, after 1.5 us of compute 1.500000 us"
    expect_out "rank 1 of 2"
    expect_clean ;;
stats)
    run -n 2 --timeout 20 --stats "$TMP/stats.json" -- "$BIN/emu_hello"
    expect_rc 0
    grep -q '"links"' "$TMP/stats.json" || fail "no statistics in --stats file"
    # The job ends when its last DLLP has arrived, though that arrival is no
    # event of the model (PcieLink::quiet_at): 15.482 us, not 15.434.
    run -n 2 --timeout 20 --stats "$TMP/stream.json" -- "$BIN/../../workloads/stream" -s 4K
    expect_rc 0
    grep -q '"summary": {"simulated_us": 15.482,' "$TMP/stream.json" ||
        fail "stream -s 4K: $(head -c 120 "$TMP/stream.json"), not simulated_us 15.482"
    expect_clean ;;
deadlock)
    run -n 2 --timeout 30 -- "$BIN/emu_deadlock"
    expect_rc 3
    expect_faster 5
    expect_err "deadlock"
    expect_err "rank 0 (node 0): waiting for a DMA notification (ring entry 0) since 2.0"
    expect_err "rank 1 (node 1): waiting for a DMA notification (ring entry 0) since 4.0"
    expect_clean ;;
crash_abort)
    run -n 2 --timeout 30 -- "$BIN/emu_crash" abort
    expect_rc 134
    expect_faster 5
    expect_err "rank 1"
    expect_err "signal 6"
    expect_clean ;;
crash_segv)
    run -n 2 --timeout 30 -- "$BIN/emu_crash" segv
    expect_rc 139
    expect_err "signal 11"
    expect_clean ;;
crash_rank0)
    # Rank 0 dies while rank 1 waits for a notification: the simulator then
    # finds a deadlock, but the rank's signal is the cause and must win. The
    # two race (p2run reaps the rank, the simulator learns of it and decides),
    # so run it several times.
    for i in 1 2 3 4; do
        for mode in segv abort; do
            run -n 2 --timeout 30 -- "$BIN/emu_crash" $mode 0
            if [ $mode = segv ]; then expect_rc 139; expect_err "signal 11"
            else expect_rc 134; expect_err "signal 6"; fi
            expect_err "rank 0 (pid"
            expect_faster 5
        done
    done
    expect_clean ;;
crash_exit7)
    run -n 2 --timeout 30 -- "$BIN/emu_crash" exit7
    expect_rc 7
    expect_faster 5
    expect_err "rank 1 (pid"
    expect_err "exited with status 7"
    expect_clean ;;
bad_flags)
    run -n 2 --bogus -- "$BIN/emu_hello"; expect_rc 2; expect_err "unknown flag '--bogus'"
    run -n 2; expect_rc 2; expect_err "no program given"
    run -n x -- "$BIN/emu_hello"; expect_rc 2; expect_err "-n: 'x'"
    run -n 0 -- "$BIN/emu_hello"; expect_rc 2; expect_err "-n: '0'"
    run -- "$BIN/emu_hello"; expect_rc 2; expect_err "-n N is required"
    run -n 2 --clock fast -- "$BIN/emu_hello"; expect_rc 2; expect_err "--clock: 'fast'"
    run -n 2 --timeout -1 -- "$BIN/emu_hello"; expect_rc 2; expect_err "--timeout: '-1'"
    run -n 2 --launcher srun -- "$BIN/emu_hello"; expect_rc 2; expect_err "--launcher: 'srun'"
    run -n 2 --gpu fake -- "$BIN/emu_hello"; expect_rc 2; expect_err "--gpu: 'fake'"
    run -n 2 --map; expect_rc 2; expect_err "flag '--map' needs a value"
    run -n 2 -- /nonexistent/p2prog; expect_rc 127; expect_err "program '/nonexistent/p2prog'"
    run -n 2 -- p2-no-such-program; expect_rc 127; expect_err "program 'p2-no-such-program': not found"
    run -n 2 --topology /nonexistent.topo -- "$BIN/emu_hello"; expect_rc 2
    expect_err "--topology: cannot read '/nonexistent.topo'"
    run -n 2 --params /nonexistent.params -- "$BIN/emu_hello"; expect_rc 2
    expect_err "--params: cannot read '/nonexistent.params'"
    expect_clean ;;
bad_files)
    printf 'nodes 4\nfrobnicate 1 2\n' >"$TMP/bad.topo"
    run -n 2 --topology "$TMP/bad.topo" -- "$BIN/emu_hello"; expect_rc 2
    expect_err "$TMP/bad.topo:2:"
    expect_clean
    printf 'link_latency_ns = fast\n' >"$TMP/bad.params"
    run -n 2 --params "$TMP/bad.params" -- "$BIN/emu_hello"; expect_rc 2
    expect_err "$TMP/bad.params:1:"
    expect_clean
    printf '0 0\n0 1\n' >"$TMP/bad.map"
    run -n 2 --map "$TMP/bad.map" -- "$BIN/emu_hello"; expect_rc 2
    expect_err "$TMP/bad.map"
    expect_clean
    run -n 2 --routing sideways -- "$BIN/emu_hello"; expect_rc 2
    expect_err "sideways"
    expect_clean
    run -n 17 -- "$BIN/emu_hello"; expect_rc 2
    expect_err "17 ranks"
    expect_clean ;;
bad_params)
    # Values outside a parameter's range (params.def) used to crash (SIGFPE),
    # eat memory, hang a rank or silently change the model; conflicts between
    # parameters used to fail mid-run. Each now ends the job with status 2 and
    # the simulator's "FILE:LINE: NAME = VALUE: must be in [a, b]".
    while IFS='|' read -r text message; do
        printf '%b' "$text" >"$TMP/bad.params"
        run -n 2 --timeout 20 --params "$TMP/bad.params" -- "$BIN/emu_hello"
        expect_rc 2
        expect_err "$TMP/bad.params$message"
        expect_faster 10
        expect_no_shm
    done <<'CASES'
chip_mhz = 0\n|:1: chip_mhz = 0: must be in [1, 1000]
# comment\ndatapath_bytes = 0\n|:2: datapath_bytes = 0: must be in [1, 512]
pio_store_bytes = 449\n|:1: pio_store_bytes = 449: must be in [1, 448]
tlp_framing_bytes = 1e9\n|:1: tlp_framing_bytes = 1e9: must be in [0, 64]
link_latency_ns = 1e18\n|:1: link_latency_ns = 1e18: must be in [0, 1000000]
host_memory_bytes = 34359738368\n|:1: host_memory_bytes = 34359738368: must be in [1048576, 17179869184]
max_payload_bytes = 0\n|:1: max_payload_bytes = 0: must be in [128, 4096]
read_completion_boundary = 128\nhost_cpl_bytes = 64\n|:2: read_completion_boundary = 128 exceeds host_cpl_bytes = 64
CASES
    # A per-link override: the topology file and line are named.
    printf 'ring 4\nset 1.E pcie_lanes=4294967296\n' >"$TMP/bad.topo"
    run -n 2 --timeout 20 --topology "$TMP/bad.topo" -- "$BIN/emu_hello"
    expect_rc 2
    expect_err "$TMP/bad.topo:2: pcie_lanes = 4294967296: must be in [1, 32]"
    expect_no_shm
    printf 'ring 4\nset 1.E max_payload_bytes=128\n' >"$TMP/bad.topo"
    printf 'pio_store_bytes = 256\n' >"$TMP/bad.params"
    run -n 2 --timeout 20 --topology "$TMP/bad.topo" --params "$TMP/bad.params" -- "$BIN/emu_hello"
    expect_rc 2
    expect_err "$TMP/bad.topo:2: cable 2.W - 1.E: max_payload_bytes = 128 is below pio_store_bytes = 256"
    expect_clean ;;
special_files)
    # A FIFO or a device as an input file used to hang or read without end.
    mkfifo "$TMP/fifo"
    for flag in --topology --params --map; do
        for file in "$TMP/fifo" /dev/zero; do
            run -n 2 --timeout 20 $flag "$file" -- "$BIN/emu_hello"
            expect_rc 2
            expect_err "$flag: $file: not a regular file"
            expect_faster 5
            expect_no_shm
        done
    done
    expect_clean
    # The simulator bounds what it reads too (p2run checks before it starts).
    SIM=$(dirname "$P2RUN")/../model/sim/p2sim
    for file in "$TMP/fifo" /dev/urandom; do
        timeout 10 "$SIM" --list-params --params "$file" >"$TMP/out" 2>"$TMP/err"
        RC=$?
        expect_rc 2
        expect_err "$file: not a regular file"
    done
    head -c 2000000 /dev/zero | tr '\0' '#' >"$TMP/big.params"
    timeout 10 "$SIM" --list-params --params "$TMP/big.params" >"$TMP/out" 2>"$TMP/err"
    RC=$?
    expect_rc 2
    expect_err "$TMP/big.params: parameter file larger than 1048576 bytes" ;;
startup_timeout)
    # A simulator that never becomes ready (stuck reading its input, say) is
    # ended when --timeout passes, with a message and status 124.
    printf '#!/bin/sh\nexec sleep 600\n' >"$TMP/stuck-sim"
    chmod +x "$TMP/stuck-sim"
    export P2_SIM="$TMP/stuck-sim"
    run -n 2 --timeout 1 -- "$BIN/emu_hello"
    unset P2_SIM
    expect_rc 124
    expect_faster 6
    expect_err "p2run: timeout: the simulator was not ready after 1 s"
    expect_clean ;;
sigint)
    "$P2RUN" -n 2 -- "$BIN/emu_pio_spin" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    sleep 1
    kill -INT $PID
    wait $PID
    RC=$?
    expect_rc 130
    expect_err "interrupted"
    expect_clean ;;
sim_sigterm)
    # Someone else stops the simulator: the job must say so and fail.
    "$P2RUN" -n 2 -- "$BIN/emu_pio_spin" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    SIM=
    for i in $(seq 1 50); do
        SIM=$(pgrep -P $PID -x p2sim) && break
        sleep 0.1
    done
    [ -n "$SIM" ] || fail "no simulator under p2run $PID"
    sleep 0.5
    kill -TERM $SIM
    wait $PID
    RC=$?
    expect_rc 143
    expect_err "p2sim: terminated by signal 15 (SIGTERM"
    expect_err "at simulated time"
    expect_err "p2run: the simulator (pid $SIM) was terminated by signal 15"
    expect_clean ;;
bad_outputs)
    # An output file that cannot be written ends the job before anything runs.
    for flag in --trace --stats; do
        run -n 2 $flag /nonexistent/dir/x.json -- "$BIN/emu_hello"
        expect_rc 2
        expect_err "p2run: $flag: cannot write '/nonexistent/dir/x.json'"
        [ -s "$TMP/out" ] && fail "ranks ran despite the bad $flag file"
        run -n 2 $flag "$TMP" -- "$BIN/emu_hello"
        expect_rc 2
        expect_err "p2run: $flag: cannot write '$TMP': it is a directory"
        [ -s "$TMP/out" ] && fail "ranks ran despite the bad $flag file"
    done
    expect_clean ;;
ring_credit_deadlock)
    # 21 ranks on a ring of 21, each streaming to the rank 10 hops east: every
    # E cable carries 10 flows. With the boards' bubble flow control (default)
    # the ring keeps moving. A router without it (ring_bubble_tlps = 0) lets
    # the input buffers fill with TLPs that must go on east, and the ring
    # stops (a credit deadlock: PEACH2 has no virtual channels). The report
    # must name the cycle, not claim that nothing is in flight.
    STREAM=$BIN/../../workloads/stream
    [ -x "$STREAM" ] || { echo "SKIP: no stream workload"; exit 0; }
    printf 'ring 21\n' >"$TMP/ring21.topo"
    run -n 21 --topology "$TMP/ring21.topo" --timeout 60 -- "$STREAM" -s 1M --partner half
    expect_rc 0
    printf 'ring_bubble_tlps = 0\n' >"$TMP/nobubble.params"
    run -n 21 --topology "$TMP/ring21.topo" --params "$TMP/nobubble.params" --timeout 60 -- \
        "$STREAM" -s 1M --partner half
    expect_rc 3
    expect_err "credit deadlock: node 0 E -> node 1 W, node 1 E -> node 2 W,"
    expect_err "node 20 E -> node 0 W hold 504 TLPs waiting for posted credits"
    grep -qF "nothing is in flight" "$TMP/err" && fail "claims nothing is in flight"
    expect_clean ;;
golden)
    for i in 1 2 3; do
        run -n 8 --timeout 60 -- "$BIN/emu_golden"
        expect_rc 0
        expect_clean
        sort "$TMP/out" >"$TMP/run$i"
    done
    [ "$(wc -l <"$TMP/run1")" -eq 24 ] || fail "expected 24 lines (8 ranks x 3 rounds)"
    grep -q "wrong [1-9]" "$TMP/run1" && fail "DMA delivered wrong bytes"
    cmp -s "$TMP/run1" "$TMP/run2" && cmp -s "$TMP/run1" "$TMP/run3" ||
        { diff "$TMP/run1" "$TMP/run2"; diff "$TMP/run1" "$TMP/run3"; fail "simulated times differ between runs"; } ;;
mpirun)
    [ -x "$BIN/emu_mpi" ] || { echo "SKIP: no MPI"; exit 0; }
    run -n 2 --launcher mpirun --clock cpu --timeout 60 -- "$BIN/emu_mpi"
    expect_rc 0
    expect_out "rank 1: word arrived at"
    expect_clean ;;
mpi_phases)
    # A public-client-style MPI + TCA program (barriers between DMA phases,
    # handles over MPI_Allgather) under the default --clock=model: it used to
    # stall (a rank in MPI_Barrier held simulated time) or, under --clock=cpu,
    # lose a notification sent "before" the peer's tcaInit. Now it finishes,
    # every byte right, with the same simulated times on every run.
    [ -x "$BIN/emu_mpi_phases" ] || { echo "SKIP: no MPI"; exit 0; }
    run -n 2 --launcher mpirun --timeout 60 -- "$BIN/emu_mpi_phases"
    expect_rc 0
    expect_out "rank 0: 3 phases of 200 round trips, 0 wrong bytes"
    expect_out "rank 1: 3 phases of 200 round trips, 0 wrong bytes"
    grep '^rank' "$TMP/out" | sort >"$TMP/first"
    run -n 2 --launcher mpirun --timeout 60 -- "$BIN/emu_mpi_phases"
    expect_rc 0
    grep '^rank' "$TMP/out" | sort >"$TMP/second"
    cmp -s "$TMP/first" "$TMP/second" ||
        fail "two runs gave different simulated times: $(cat "$TMP/first" "$TMP/second")"
    # --clock=cpu: the old false deadlock came in 2 runs of 3.
    for i in 1 2 3; do
        run -n 2 --launcher mpirun --clock cpu --timeout 60 -- "$BIN/emu_mpi_phases"
        expect_rc 0
        expect_out "rank 0: 3 phases of 200 round trips, 0 wrong bytes"
        expect_out "rank 1: 3 phases of 200 round trips, 0 wrong bytes"
    done
    expect_clean ;;
mpi_cuda)
    # The CUDA + MPI + TCA client (emu_mpi_cuda.c, built with mpicc) under
    # mpirun on the emulated CUDA runtime: every byte right, the same
    # simulated times (MPI_Wtime, CUDA events) on every run, and the modelled
    # figures themselves. On a GPU machine also on the real runtime.
    [ -x "$BIN/emu_mpi_cuda" ] || { echo "SKIP: no MPI or no CUDA toolkit"; exit 0; }
    run -n 2 --launcher mpirun --gpu emulated --timeout 60 -- "$BIN/emu_mpi_cuda"
    expect_rc 0
    expect_err "p2run: GPU: emulated CUDA runtime (--gpu emulated)"
    expect_out "all ranks: 0 wrong bytes"
    # 256 KiB GPU to GPU over one hop, both ranks at once (2.78 GB/s: the
    # GPU read rate, gpu_read_gbps); MPI_Wtime is the virtual clock. The copy
    # back is cuda_d2h_latency_ns + 262144 B / cuda_d2h_gbps (pinned) =
    # 8 us + 51.603 us. The ranks leave MPI_Barrier (over the modelled IB
    # rail) a few ns apart, so their DMAs meet PEACH2's 4 ns clock edges at
    # different phases: 94.543 vs 94.544 us ("sent" ends with tcaWaitDMAC's
    # status read, which retires mmio_load_return_ns, 200 ns, after its
    # completion reaches the root port).
    expect_out "rank 0: Tesla K20X (emulated): 262144 bytes GPU-to-GPU from rank 1: sent in 94.543 us, received at 94.623 us (MPI_Wtime), copied back in 59.603 us (events), 0 wrong bytes"
    expect_out "rank 1: Tesla K20X (emulated): 262144 bytes GPU-to-GPU from rank 0: sent in 94.544 us, received at 94.624 us (MPI_Wtime), copied back in 59.603 us (events), 0 wrong bytes"
    grep '^rank' "$TMP/out" | sort >"$TMP/first"
    expect_clean
    # auto: no usable GPU here, so the emulated runtime again, said in one line.
    run -n 2 --launcher mpirun --timeout 60 -- "$BIN/emu_mpi_cuda"
    expect_rc 0
    grep '^rank' "$TMP/out" | sort >"$TMP/second"
    if grep -qF "p2run: GPU: emulated CUDA runtime (no usable GPU: " "$TMP/err"; then
        [ "$(grep -c '^p2run: GPU: ' "$TMP/err")" -eq 1 ] || fail "more than one line about the runtime"
        cmp -s "$TMP/first" "$TMP/second" ||
            fail "two runs gave different simulated times: $(cat "$TMP/first" "$TMP/second")"
    else
        expect_err "p2run: GPU: the real CUDA runtime (a GPU is usable)"
        expect_out "all ranks: 0 wrong bytes"
        # The DMA's modelled times do not depend on which runtime holds the memory.
        expect_out "262144 bytes GPU-to-GPU from rank 1: sent in 94.543 us, received at 94.623 us (MPI_Wtime)"
        echo "real GPU: $(grep '^rank' "$TMP/out")"
    fi
    expect_clean ;;
cudart_static)
    # The static CUDA runtime cannot be swapped for the emulated one: p2run
    # says what to do instead, and still runs the program.
    [ -x "$BIN/emu_cudart_static" ] || { echo "SKIP: no CUDA toolkit"; exit 0; }
    run -n 1 --timeout 20 -- "$BIN/emu_cudart_static"
    expect_rc 0
    expect_err "seems to link the CUDA runtime statically (nvcc's default); build it with -cudart shared"
    expect_out "static runtime: cudaGetDeviceCount"
    # A driver-API program (it needs libcuda.so.1, not the runtime) is no such case.
    LD_LIBRARY_PATH="$BIN/../ranks/fake_cuda" run -n 2 --timeout 20 -- "$BIN/../ranks/rk_cuda_ipc"
    expect_rc 0
    grep -qF "statically" "$TMP/err" && fail "warned about a program without the static runtime"
    expect_clean ;;
*)
    echo "unknown case $CASE"; exit 2 ;;
esac
echo "PASS [$CASE]"
