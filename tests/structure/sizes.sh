#!/usr/bin/env bash
# sizes.sh SOURCE_DIR - no source file of the project grows past 700 lines,
# nor a shell script or CMake file: a longer one holds several units, to be
# cut along its seams (README.md, "Where things are").
set -u
cd "${1:?usage: sizes.sh SOURCE_DIR}" || exit 2
limit=700
long=$(git ls-files '*.c' '*.cc' '*.h' '*.cu' '*.sh' '*.cmake' '*CMakeLists.txt' | xargs wc -l |
       awk -v m=$limit '$2 != "total" && $1 > m')
if [ -n "$long" ]; then
  echo "files over $limit lines:"
  echo "$long"
  exit 1
fi
echo "sizes: every source, shell and CMake file has at most $limit lines"
