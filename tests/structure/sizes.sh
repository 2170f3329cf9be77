#!/usr/bin/env bash
# sizes.sh SOURCE_DIR - no source file of the project grows past 700 lines: a
# longer one holds several units, to be cut along its seams (README.md, "Where things are").
set -u
cd "${1:?usage: sizes.sh SOURCE_DIR}" || exit 2
limit=700
long=$(git ls-files '*.c' '*.cc' '*.h' '*.cu' | xargs wc -l | awk -v m=$limit '$2 != "total" && $1 > m')
if [ -n "$long" ]; then
  echo "files over $limit lines:"
  echo "$long"
  exit 1
fi
echo "sizes: every source file has at most $limit lines"
