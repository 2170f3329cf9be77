#!/usr/bin/env bash
# layers.sh SOURCE_DIR - checks that every quoted #include of the project's
# sources reaches only its own layer or a layer below (README.md, "Where things are"):
#
#   mpi                    the MPI layer: lib's public and internal interfaces
#   lib                    TCA library, collectives, FMPL, rank runtime, CUDA runtime
#   model/sim (p2sim)      the simulator program: the model and emu's transport
#   model    emu           the SystemC model; the launcher and the transport
#   model/contract         register maps, error codes, job layout, params.def
#
# Tests may reach anywhere (they are white-box); workloads are client programs
# of lib's public headers (and emu's options module). A header the include
# cannot find in an allowed directory but finds in another one is a violation,
# named with its file and line; an include found nowhere in the tree is a
# generated file (tca_version.h) or a system header in quotes, and is skipped.
set -u
src=${1:?usage: layers.sh SOURCE_DIR}
cd "$src" || exit 2

roots=(model/contract emu model lib/include lib/internal lib/src mpi workloads/common)

# allowed include roots of a file, besides its own directory
allowed() {
  case $1 in
    model/contract/*) echo model/contract ;;
    emu/*) echo emu model/contract ;;
    model/sim/p2sim*|model/sim/frontend*) echo model model/contract emu ;;
    model/*) echo model model/contract ;;
    lib/include/*) echo lib/include model/contract ;;
    lib/internal/*) echo lib/internal model/contract ;;
    lib/*) echo lib/include lib/internal lib/src model/contract emu ;;
    mpi/*) echo mpi lib/include lib/internal model/contract ;;
    workloads/*) echo workloads/common lib/include model/contract emu ;;
    *) echo ;;
  esac
}

bad=0
checked=0
while IFS= read -r file; do
  roots_ok=$(allowed "$file")
  [ -n "$roots_ok" ] || continue
  dir=$(dirname "$file")
  while IFS=: read -r line inc; do
    checked=$((checked + 1))
    [ -e "$dir/$inc" ] && continue
    found=0
    for r in $roots_ok; do
      if [ -e "$r/$inc" ]; then found=1; break; fi
    done
    [ $found = 1 ] && continue
    for r in "${roots[@]}"; do
      if [ -e "$r/$inc" ]; then
        echo "$file:$line: includes \"$inc\" from $r/, which is not its layer or one below it (allowed: $roots_ok)"
        bad=$((bad + 1))
        break
      fi
    done
  done < <(grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
           sed -E 's/^([0-9]+):[^"]*"([^"]+)".*/\1:\2/')
done < <(git ls-files '*.c' '*.h' '*.cc' '*.inc' '*.def' 2>/dev/null ||
         find . -name '*.[ch]' -o -name '*.cc' | sed 's|^\./||')

echo "layers: $checked includes checked, $bad across layers"
[ $bad = 0 ]
