#!/usr/bin/env bash
# tables.sh - regenerates the halo programs' measurements
# (workloads/halo/results/*.csv) and their plot, from the repository root
# with the build in build/. Each CSV is the programs' own --csv rows, one
# run per process count (and per mapping), under one header; the README of
# this folder quotes them.
#
#   workloads/halo/tables.sh [NAME...]     (default: every table)
#
# NAME: loop18 (2, 4, 8, 16 ranks, N 256, 1024, 4096, TCA and MPI), image
# (the same, TCA with block-stride columns, TCA with packed columns, MPI),
# mapping (16 ranks on the 2x8 torus: identity, snake and 4x4-mesh maps),
# machine64 (64 ranks on hapacs-tca-64.topo: hybrid, i.e. TCA inside a
# sub-cluster and MPI between, against MPI alone; the image with packed
# columns).
# Simulated figures are the same on every run. Wall time on the shared
# 2-core machine: about 13 minutes in all. Depends on build/emu/p2run,
# build/workloads/halo_*, awk, /usr/bin/python3 with matplotlib (the plot).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=workloads/halo/results
p2run=build/emu/p2run
wl=build/workloads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

# merge OUT HEAD FILE PRE [FILE PRE...]: the CSVs' rows under one header, each
# row led by its prefix values.
merge() {
    local o=$1 head=$2 first=1
    shift 2
    : >"$o"
    while [ $# -gt 0 ]; do
        awk -v pre="$2" -v head="$head" -v first=$first \
            'NR == 1 { if (first) print (head == "" ? $0 : head "," $0); next }
             { print (pre == "" ? $0 : pre "," $0) }' "$1" >>"$o"
        first=0
        shift 2
    done
}

steps=(-n 10 -w 2)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(loop18 image mapping machine64)
for name in "${names[@]}"; do
    case $name in
    loop18)
        args=()
        for p in 2 4 8 16; do
            $p2run -n $p -- $wl/halo_loop18 -b 256 -e 4096 -f 4 "${steps[@]}" -T tca,mpi \
                --csv "$tmp/l18_$p.csv" >/dev/null
            args+=("$tmp/l18_$p.csv" "")
        done
        merge "$out/loop18.csv" "" "${args[@]}" ;;
    image)
        args=()
        for p in 2 4 8 16; do
            $p2run -n $p -- $wl/halo_image -b 256 -e 4096 -f 4 "${steps[@]}" -T tca,mpi \
                --csv "$tmp/img_$p.csv" >/dev/null
            $p2run -n $p -- $wl/halo_image -b 256 -e 4096 -f 4 "${steps[@]}" -T tca --pack \
                --csv "$tmp/imgp_$p.csv" >/dev/null
            args+=("$tmp/img_$p.csv" "block-stride" "$tmp/imgp_$p.csv" "packed")
        done
        merge "$out/image.csv" "columns" "${args[@]}" ;;
    mapping)
        args=()
        for map in identity snake mesh4x4; do
            m=()
            [ $map = identity ] || m=(--map topologies/hapacs-2x8-$map.map)
            $p2run -n 16 "${m[@]}" -- $wl/halo_loop18 -b 256 -e 4096 -f 4 "${steps[@]}" -T tca \
                --csv "$tmp/ml_$map.csv" >/dev/null
            $p2run -n 16 "${m[@]}" -- $wl/halo_image -b 1024 -e 8192 -f 8 "${steps[@]}" -T tca \
                --csv "$tmp/mi_$map.csv" >/dev/null
            $p2run -n 16 "${m[@]}" -- $wl/halo_image -b 1024 -e 8192 -f 8 "${steps[@]}" -T tca \
                --pack --csv "$tmp/mp_$map.csv" >/dev/null
            args+=("$tmp/ml_$map.csv" "$map,loop18,rows" "$tmp/mi_$map.csv" "$map,image,block-stride"
                   "$tmp/mp_$map.csv" "$map,image,packed")
        done
        merge "$out/mapping.csv" "map,program,columns" "${args[@]}" ;;
    machine64)
        t=(--topology topologies/hapacs-tca-64.topo)
        $p2run -n 64 "${t[@]}" -- $wl/halo_loop18 -b 256 -e 4096 -f 4 "${steps[@]}" \
            -T hybrid,mpi --csv "$tmp/m64_l18.csv" >/dev/null
        $p2run -n 64 "${t[@]}" -- $wl/halo_image -b 256 -e 4096 -f 4 "${steps[@]}" \
            -T hybrid,mpi --pack --csv "$tmp/m64_img.csv" >/dev/null
        merge "$out/machine64.csv" "program,columns" "$tmp/m64_l18.csv" "loop18,rows" \
            "$tmp/m64_img.csv" "image,packed" ;;
    *) echo "tables.sh: unknown table '$name' (loop18 image mapping machine64)" >&2; exit 2 ;;
    esac
    echo "$out/$name.csv"
done
if [ -s "$out/loop18.csv" ] && [ -s "$out/image.csv" ]; then
    /usr/bin/python3 plots/halo.py "$out/halo.png" "$out/loop18.csv" "$out/image.csv"
fi
