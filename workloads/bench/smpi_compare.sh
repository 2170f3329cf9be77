#!/bin/bash
# smpi_compare.sh - the wall and CPU time of p2bench's MPI job (case g:
# mpi_speed.c) under p2run and under SimGrid's SMPI, run alternately on the
# same machine, so that the ratio is measured and not remembered.
#
#   workloads/bench/smpi_compare.sh [BUILD_DIR [ROUNDS [MPI_SPEED_ARGS...]]]
#
# BUILD_DIR: this project's build (default build); ROUNDS: how many times each
# simulator runs the job, alternately (default 3; the table shows each one's
# fastest run, and every run's wall time); MPI_SPEED_ARGS: default
# "-a 1000 -g 20 -s 1M" on 16 ranks (RANKS=N in the environment changes the
# rank count).
#
# SMPI comes from Debian (apt-get install libsimgrid-dev: smpicc, smpirun);
# without it the script says so and exits 2. SMPI simulates the same 16 hosts
# as a flow-level cluster calibrated to the MPI figures the model reproduces
# (hardware.md: 1.9 us latency, one 6 GB/s link per host, SMPI's own
# correction factors off): a 0.95 us, 6 GB/s link from each host to a
# backbone that adds neither; the ranks' own computation is not simulated
# (as under p2run's default clock). It moves every message as one flow and runs the
# ranks as threads of one process; p2run moves every TLP of every message
# through the PCIe and InfiniBand models, with each rank in a process of its
# own. Both print the job's simulated times and its wrong elements (0).
set -euo pipefail

build=${1:-build}
rounds=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-a 1000 -g 20 -s 1M)
ranks=${RANKS:-16}
here=$(cd "$(dirname "$0")" && pwd)

for tool in smpicc smpirun; do
    if ! command -v $tool >/dev/null; then
        echo "smpi_compare.sh: no $tool here: SimGrid's SMPI is Debian's libsimgrid-dev" >&2
        exit 2
    fi
done
for f in "$build/emu/p2run" "$build/workloads/mpi_speed"; do
    if [ ! -x "$f" ]; then
        echo "smpi_compare.sh: no $f: build the project (with MPI) first, or give BUILD_DIR" >&2
        exit 2
    fi
done
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
    echo "smpi_compare.sh: ROUNDS: '$rounds' is not a positive count" >&2
    exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
smpicc -O2 -o "$tmp/mpi_speed_smpi" "$here/mpi_speed.c"
cat >"$tmp/platform.xml" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node" suffix="" radical="0-$((ranks - 1))" speed="1Gf"
           bw="6GBps" lat="0.95us" bb_bw="1000GBps" bb_lat="0us"/>
</platform>
EOF
seq -f "node%g" 0 $((ranks - 1)) >"$tmp/hosts"

# One run: appends "wall cpu" to $tmp/NAME.times and keeps the output line.
run() {
    local name=$1
    shift
    /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || {
        echo "smpi_compare.sh: the $name run failed:" >&2
        cat "$tmp/$name.out" "$tmp/$name.err" >&2
        exit 1
    }
    awk '{printf "%.2f %.2f\n", $1, $2 + $3}' "$tmp/time" >>"$tmp/$name.times"
}

for ((i = 1; i <= rounds; i++)); do
    echo "smpi_compare.sh: round $i of $rounds" >&2
    run p2run "$build/emu/p2run" -n "$ranks" -- "$build/workloads/mpi_speed" "${args[@]}"
    run smpi smpirun -np "$ranks" -platform "$tmp/platform.xml" -hostfile "$tmp/hosts" \
        --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 --cfg=smpi/simulate-computation:no \
        "$tmp/mpi_speed_smpi" "${args[@]}"
done

echo "# job: $ranks ranks, mpi_speed ${args[*]}; $(nproc) CPUs; fastest of $rounds alternate runs"
printf "%-8s %8s %8s  %s\n" simulator wall_s cpu_s "every wall_s"
for name in p2run smpi; do
    best=$(sort -n "$tmp/$name.times" | head -1)
    printf "%-8s %8s %8s  %s\n" $name $best "$(cut -d' ' -f1 "$tmp/$name.times" | tr '\n' ' ')"
done
p2=$(sort -n "$tmp/p2run.times" | head -1 | cut -d' ' -f1)
sm=$(sort -n "$tmp/smpi.times" | head -1 | cut -d' ' -f1)
awk -v a="$p2" -v b="$sm" 'BEGIN { printf "p2run / smpi wall: %.1fx\n", a / b }'
echo "p2run: $(grep ranks "$tmp/p2run.out")"
echo "smpi:  $(grep ranks "$tmp/smpi.out")"
