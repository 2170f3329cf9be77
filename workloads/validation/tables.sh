#!/usr/bin/env bash
# tables.sh - regenerates the CSVs behind the measurement tables of the
# results page (workloads/validation/results/results.md): each table NAME is
# results/NAME.csv, written here by running the commands its section of the
# page gives, under p2run, from the repository root with the build in build/.
# plots/tables.py then renders the page from these CSVs and results.csv.
#
#   workloads/validation/tables.sh [NAME...]     (default: every table)
#   /usr/bin/python3 plots/tables.py            (rewrites results/results.md)
#
# NAME: pingpong fmpl_pingpong collectives_2x8 tca_vs_mpi_16 recdoubling_16
#       cuda_copy speed. Simulated figures are the same on every run; wall and
# CPU times (speed, and the workloads' wall_s columns) are not. Wall time on
# the shared 2-core development machine (load about 8): tca_vs_mpi_16 11
# minutes, collectives_2x8 5, speed 3, pingpong 2, the others under a minute.
# Depends on: build/emu/p2run, build/workloads/*, build/tests/ranks/rk_cuda
# (cuda_copy, built when CMake finds the CUDA toolkit), awk.
set -euo pipefail
cd "$(dirname "$0")/../.."
results=workloads/validation/results
p2run=build/emu/p2run
wl=build/workloads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# cat_csv OUT PREFIX_HEADER FILE PREFIX_VALUES [FILE PREFIX_VALUES...]:
# the CSVs' rows under one header (the first file's), each row led by its
# prefix values (comma-separated, matching PREFIX_HEADER).
cat_csv() {
    local out=$1 head=$2
    shift 2
    local first=1
    : >"$out"
    while [ $# -gt 0 ]; do
        awk -v pre="$2" -v head="$head" -v first=$first \
            'NR == 1 { if (first) print head "," $0; next } { print pre "," $0 }' "$1" >>"$out"
        first=0
        shift 2
    done
}

# The TCA ping-pong on the default 2x8 torus, ranks 0 and 1 (the calibration).
pingpong() {
    "$p2run" -n 2 -- "$wl"/pingpong --csv "$tmp"/pp.csv >/dev/null
    cp "$tmp"/pp.csv "$results"/pingpong.csv
}

# FMPL ping-pong on the three SR8000 topologies (8 B latency, 16 MB throughput).
fmpl_pingpong() {
    "$p2run" --topology topologies/sr8000-8.topo -n 2 -- "$wl"/fmpl_pingpong --csv "$tmp"/f8.csv >/dev/null
    "$p2run" --topology topologies/sr8000-2x8.topo -n 16 -- "$wl"/fmpl_pingpong -p 0,15 --csv "$tmp"/f2x8.csv >/dev/null
    "$p2run" --topology topologies/sr8000-8x8.topo -n 2 -- "$wl"/fmpl_pingpong --csv "$tmp"/f8x8.csv >/dev/null
    cat_csv "$results"/fmpl_pingpong.csv topology,pair \
        "$tmp"/f8.csv sr8000-8,0-1 "$tmp"/f2x8.csv sr8000-2x8,0-15 "$tmp"/f8x8.csv sr8000-8x8,0-1
}

# Every collective at 2, 4, 8 and 16 ranks on the 2x8 torus, identity mapping,
# CPU buffers of int, sum, root 0, the cost model's algorithm.
collectives_2x8() {
    local files=()
    for n in 2 4 8 16; do for c in bcast scatter gather reduce allgather allreduce; do
        "$p2run" -n $n -- "$wl"/collectives -C $c -b 8 -e 1K -f 128 -n 2 -w 1 --csv "$tmp"/${c}_n${n}_a.csv >/dev/null
        "$p2run" -n $n -- "$wl"/collectives -C $c -b 64K -e 1M -f 16 -n 2 -w 1 --csv "$tmp"/${c}_n${n}_b.csv >/dev/null
        files+=("$tmp"/${c}_n${n}_a.csv $n "$tmp"/${c}_n${n}_b.csv $n)
    done; "$p2run" -n $n -- "$wl"/collectives -C barrier -n 2 -w 1 --csv "$tmp"/barrier_n${n}.csv >/dev/null
        files+=("$tmp"/barrier_n${n}.csv $n)
    done
    cat_csv "$results"/collectives_2x8.csv ranks "${files[@]}"
}

# TCA (GPU buffers, persistent requests) beside MPI over the IB rail, 16
# ranks: the validation suite's three *_vs_mpi_16 cases, both runs of each.
tca_vs_mpi_16() {
    build/workloads/validate --only allgather_vs_mpi_16,bcast_vs_mpi_16,scatter_vs_mpi_16 \
        --out "$tmp"/vs >/dev/null
    local files=()
    for c in allgather bcast scatter; do
        files+=("$tmp"/vs/${c}_vs_mpi_16.1.csv tca "$tmp"/vs/${c}_vs_mpi_16.2.csv mpi)
    done
    # Two runs of different workloads: keep the columns both have.
    for f in "${files[@]}"; do
        [ -f "$f" ] || continue
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
                 { print (NR == 1 ? "collective" : c) "," $col["bytes"] "," $col["avg_us"] "," \
                         (col["max_us"] ? $col["max_us"] : $col["time_us"]) }' \
            c="$(basename "$f" | cut -d_ -f1)" "$f" >"$f".cut
    done
    local cut=()
    for ((i = 0; i < ${#files[@]}; i += 2)); do cut+=("${files[i]}".cut "${files[i + 1]}"); done
    cat_csv "$results"/tca_vs_mpi_16.csv transport "${cut[@]}"
    sed -i '1s/.*/transport,collective,bytes,avg_us,max_us/' "$results"/tca_vs_mpi_16.csv
}

# Recursive-doubling allgather, 16 ranks, CPU buffers, identity mapping and
# the Gray map (topologies/hapacs-2x8-recdoubling.map), 8 B to 64 KB.
recdoubling_16() {
    "$p2run" -n 16 -- "$wl"/collectives -C allgather -a recursive_doubling \
        -b 8 -e 64K -f 2 -n 1 -w 1 --csv "$tmp"/rd_identity.csv >/dev/null
    "$p2run" -n 16 --map topologies/hapacs-2x8-recdoubling.map -- "$wl"/collectives -C allgather \
        -a recursive_doubling -b 8 -e 64K -f 2 -n 1 -w 1 --csv "$tmp"/rd_gray.csv >/dev/null
    cat_csv "$results"/recdoubling_16.csv mapping "$tmp"/rd_identity.csv identity "$tmp"/rd_gray.csv gray
}

# A copy within one GPU: PEACH2 DMA from a node to itself against cudaMemcpy
# device to device on registered memory (the emulated CUDA runtime's test
# program, which prints the table).
cuda_copy() {
    "$p2run" -n 2 --gpu emulated -- build/tests/ranks/rk_cuda >"$tmp"/cuda.out 2>&1
    awk 'BEGIN { print "bytes,peach2_dma_us,cudamemcpy_d2d_reg_us" }
         $1 == "rank" && $3 == "within-GPU" { print $4 "," $5 "," $6 }' \
        "$tmp"/cuda.out >"$results"/cuda_copy.csv
    [ "$(wc -l <"$results"/cuda_copy.csv)" -gt 1 ] ||
        { cat "$tmp"/cuda.out; echo "tables.sh: no copy table in rk_cuda's output" >&2; exit 1; }
}

# The simulator speed benchmark, its seven full cases. Wall and CPU times
# depend on what else the machine runs: a comment line says what it was.
speed() {
    "$wl"/p2bench --csv "$tmp"/speed.csv >/dev/null
    { echo "# $(date -u +%Y-%m-%d), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, niceness $(nice)"
      cat "$tmp"/speed.csv; } >"$results"/speed.csv
}

all=(pingpong fmpl_pingpong collectives_2x8 tca_vs_mpi_16 recdoubling_16 cuda_copy speed)
[ $# -gt 0 ] || set -- "${all[@]}"
for name in "$@"; do
    case " ${all[*]} " in
    *" $name "*) ;;
    *) echo "tables.sh: no table '$name' (tables: ${all[*]})" >&2; exit 2 ;;
    esac
    echo "tables.sh: $name" >&2
    "$name"
done
