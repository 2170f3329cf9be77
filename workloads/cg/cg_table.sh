#!/usr/bin/env bash
# cg_table.sh - the CG table of the HA-PACS/TCA papers: every matrix at 2, 4,
# 8 and 16 ranks, TCA and MPI (one `cg -t both` job per matrix and rank
# count, under p2run on the default cluster), gathered into one CSV, and its
# PNG (plots/cg.py). Run from anywhere; the build is in build/ unless
# BUILD=DIR says otherwise.
#
#   workloads/cg/cg_table.sh [-n ITERS] [-m "MATRIX ..."] [-p "RANKS ..."] OUTDIR
#
# Writes OUTDIR/cg.csv (columns of cg's CSV) and OUTDIR/cg.png. -n defaults
# to 20: every iteration runs the same collectives and kernels, so the
# simulated time per iteration is the same for 20 as for the published 1000
# (workloads/README.md, "Conjugate Gradient"; the host runs the numerics and
# the simulator, which for nd24k at 1000 iterations would take hours).
# Depends on: p2run, cg, awk, /usr/bin/python3 with matplotlib.
set -euo pipefail
iters=20
matrices="nasa2910 s1rmq4m1 smt nd3k nd6k nd12k nd24k"
ranks="2 4 8 16"
while getopts "n:m:p:" opt; do
    case $opt in
    n) iters=$OPTARG ;;
    m) matrices=$OPTARG ;;
    p) ranks=$OPTARG ;;
    *) echo "usage: $0 [-n ITERS] [-m \"MATRIX ...\"] [-p \"RANKS ...\"] OUTDIR" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ]; then
    echo "usage: $0 [-n ITERS] [-m \"MATRIX ...\"] [-p \"RANKS ...\"] OUTDIR" >&2
    exit 2
fi
out=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
mkdir -p "$out"
csv=$out/cg.csv
first=1
for m in $matrices; do
    for p in $ranks; do
        one=$out/cg-$m-$p.csv
        echo "cg: $m on $p ranks, $iters iterations" >&2
        "$build"/emu/p2run -n "$p" -- "$build"/workloads/cg -m "$m" -t both -n "$iters" \
            --csv "$one" >"$out/cg-$m-$p.txt"
        if [ $first = 1 ]; then
            cp "$one" "$csv"
            first=0
        else
            tail -n +2 "$one" >>"$csv"
        fi
    done
done
/usr/bin/python3 "$root"/plots/cg.py "$out"/cg.png "$csv"
