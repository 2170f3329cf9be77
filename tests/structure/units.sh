#!/usr/bin/env bash
# units.sh NAME OBJECT... - checks that the units (object files) of one
# library call each other one way: builds the graph "unit A calls a function
# or reads data that unit B defines" from nm, and fails naming a cycle if
# there is one (README.md, "Where things are": dependencies between a layer's files run
# one way, as between the layers).
set -u
name=${1:?usage: units.sh NAME OBJECT...}
shift
declare -A def
# a unit: the source's directory and name (model/peach2/network.cc.o -> peach2/network)
unit() { local u=${1%.o}; u=${u%.c}; u=${u%.cc}; echo "$(basename "$(dirname "$u")")/$(basename "$u")"; }
for o in "$@"; do
  u=$(unit "$o")
  # Strong definitions only: a weak one (an inline function or template a
  # header defines, emitted wherever the compiler did not inline it) is no
  # unit's own.
  while read -r _ _ sym; do def[$sym]=$u; done < <(nm --defined-only -g "$o" | grep -E ' [TDBRGS] ')
done
edges=$(for o in "$@"; do
  u=$(unit "$o")
  nm -u "$o" | awk '{print $2}' | while read -r sym; do
    d=${def[$sym]:-}
    [ -n "$d" ] && [ "$d" != "$u" ] && echo "$u $d"
  done
done | sort -u)
# tsort reports a cycle on stderr ("tsort: -: input contains a loop:")
if ! out=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
  echo "$name: units call each other in a cycle:"
  printf '%s\n' "$out" | sed 's/^tsort: /  /'
  exit 1
fi
echo "$name: $# units, $(printf '%s\n' "$edges" | grep -c .) one-way dependencies"
