#!/bin/bash
# install_test.sh BUILD HERE VERSION CMAKE CC CXX PKG_CONFIG - the install as a
# user outside the tree sees it. Installs BUILD into a temporary prefix, then,
# with nothing in the environment pointing at the build or source tree:
#  1. the layout: binaries, library (SONAME, the runtime inside), public headers
#     (each compiles alone as C and C++, none brings in peach2_hw.h),
#     pkg-config file, CMake package, topologies, plots;
#  2. builds HERE/outside.c with pkg-config and with find_package(peach2sim);
#  3. runs both under the installed p2run (2 ranks, one DMA with a notification);
#  4. p2run's discovery: p2sim in libexec/peach2sim, P2_SIM and P2_TOPOLOGY_DIR
#     overrides, and clear errors (no fallback to the build tree) when the
#     installed simulator or topologies are missing.
# Exit 0 = pass; a failure says what differed.
set -u
BUILD=$1 HERE=$2 VERSION=$3 CMAKE=$4 CC=$5 CXX=$6 PKG_CONFIG=$7
TMP=$(mktemp -d /tmp/p2-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
PFX=$TMP/prefix
fail() { echo "FAIL: $*"; for f in "$TMP"/*.log; do [ -s "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done; exit 1; }

"$CMAKE" --install "$BUILD" --prefix "$PFX" >"$TMP/install.log" 2>&1 || fail "cmake --install"
rm -f "$TMP/install.log"

# Nothing may lead to the build tree: the installed files must be enough.
unset P2_SIM P2_TOPOLOGY_DIR P2_JOB P2_RANK P2_SIZE LD_LIBRARY_PATH PKG_CONFIG_PATH \
      CMAKE_PREFIX_PATH CPATH C_INCLUDE_PATH LIBRARY_PATH
export PATH=/usr/local/bin:/usr/bin:/bin
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cd "$TMP"

# ---- 1. Layout ----------------------------------------------------------------
for f in bin/p2run bin/p2sim bin/p2map lib/libp2tca.so include/peach2sim/tca-api.h include/peach2sim/p2.h \
         include/peach2sim/tca_version.h lib/pkgconfig/p2tca.pc \
         lib/cmake/peach2sim/peach2simConfig.cmake lib/cmake/peach2sim/peach2simConfigVersion.cmake \
         share/peach2sim/topologies/hapacs-tca-2x8.topo share/peach2sim/plots/pingpong.py; do
    [ -e "$PFX/$f" ] || fail "not installed: $f"
done
[ ! -e "$PFX/include/peach2sim/peach2_hw.h" ] || fail "the register map peach2_hw.h is installed"
readelf -d "$PFX/lib/libp2tca.so" | grep -q "SONAME.*libp2tca\.so\.[0-9]" || fail "libp2tca.so has no versioned SONAME"
undefined=$(nm -D --undefined-only "$PFX/lib/libp2tca.so" | grep -E " (p2_|tca)" )
[ -z "$undefined" ] || fail "libp2tca.so needs symbols from elsewhere: $undefined"
for h in "$PFX"/include/peach2sim/*.h; do
    h=$(basename "$h")
    src="#include <$h>
#ifdef PEACH2_HW_H
#error $h brings in the register map
#endif"
    echo "$src" | "$CC" -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$PFX/include/peach2sim" -x c - \
        >"$TMP/header.log" 2>&1 || fail "$h does not compile alone as C"
    echo "$src" | "$CXX" -std=c++11 -Wall -Wextra -Werror -fsyntax-only -I"$PFX/include/peach2sim" -x c++ - \
        >"$TMP/header.log" 2>&1 || fail "$h does not compile alone as C++"
done
rm -f "$TMP/header.log"

# ---- 2. Build outside.c both ways ----------------------------------------------
export PKG_CONFIG_PATH=$PFX/lib/pkgconfig
[ "$("$PKG_CONFIG" --modversion p2tca)" = "$VERSION" ] || fail "pkg-config p2tca version is not $VERSION"
"$CC" -std=c11 -Wall -Wextra -Werror -o outside_pc "$HERE/outside.c" \
    $("$PKG_CONFIG" --cflags --libs p2tca) >"$TMP/pkgconfig.log" 2>&1 || fail "build with pkg-config"
unset PKG_CONFIG_PATH
"$CMAKE" -S "$HERE/cmake_project" -B cm -DCMAKE_PREFIX_PATH="$PFX" -DCMAKE_C_COMPILER="$CC" \
    -DCMAKE_BUILD_TYPE=Release >"$TMP/cmake.log" 2>&1 || fail "configure with find_package(peach2sim)"
"$CMAKE" --build cm >>"$TMP/cmake.log" 2>&1 || fail "build with find_package(peach2sim)"
rm -f "$TMP/pkgconfig.log" "$TMP/cmake.log"
ldd cm/outside | grep -q "libp2tca.so.* => $PFX/lib/" || fail "cm/outside does not load the installed libp2tca.so: $(ldd cm/outside)"

# ---- 3. Run both under the installed p2run --------------------------------------
# run NAME [ENV=V...] -- p2run args: sets RC; output in NAME.out / NAME.err.
run() {
    local name=$1; shift
    env "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
expect_ok() {
    [ "$RC" -eq 0 ] || fail "$1: status $RC: $(cat "$TMP/$1.err")"
    grep -qF "outside: $2" "$TMP/$1.out" || fail "$1: no version line 'outside: $2': $(cat "$TMP/$1.out")"
    grep -qF "rank 1 got 64 bytes by DMA" "$TMP/$1.out" || fail "$1: no DMA line: $(cat "$TMP/$1.out")"
}
run pkgconfig LD_LIBRARY_PATH="$PFX/lib" "$PFX/bin/p2run" -n 2 -- ./outside_pc
expect_ok pkgconfig "peach2sim $VERSION"
run cmake "$PFX/bin/p2run" -n 2 -- ./cm/outside
expect_ok cmake "peach2sim $VERSION"
# The installed p2map finds p2run, p2sim and the topology beside itself.
"$PFX/bin/p2map" search -n 2 --budget 2 -o "$TMP/best.map" -- ./cm/outside > p2map.out 2> p2map.err ||
    fail "p2map: status $?: $(cat p2map.err)"
grep -q "^# best: " p2map.out || fail "p2map printed no result: $(cat p2map.out p2map.err)"
grep -q "^1 [0-9]" "$TMP/best.map" || fail "p2map wrote no mapping: $(cat "$TMP/best.map")"

# ---- 4. How p2run finds the simulator and the topology ---------------------------
mkdir -p "$PFX/libexec/peach2sim" elsewhere topos
mv "$PFX/bin/p2sim" "$PFX/libexec/peach2sim/p2sim"
run libexec "$PFX/bin/p2run" -n 2 -- ./cm/outside
expect_ok libexec "peach2sim $VERSION"
mv "$PFX/libexec/peach2sim/p2sim" elsewhere/p2sim
run nosim "$PFX/bin/p2run" -n 2 -- ./cm/outside
[ "$RC" -eq 127 ] || fail "without an installed p2sim: status $RC, expected 127"
grep -qF "simulator p2sim not found (looked in: $PFX/bin/p2sim" "$TMP/nosim.err" ||
    fail "without an installed p2sim: $(cat "$TMP/nosim.err")"
run p2sim_env P2_SIM="$TMP/elsewhere/p2sim" "$PFX/bin/p2run" -n 2 -- ./cm/outside
expect_ok p2sim_env "peach2sim $VERSION"
mv "$TMP/elsewhere/p2sim" "$PFX/bin/p2sim"
mv "$PFX/share/peach2sim/topologies/hapacs-tca-2x8.topo" topos/
run notopo "$PFX/bin/p2run" -n 2 -- ./cm/outside
[ "$RC" -eq 2 ] || fail "without the installed topology: status $RC, expected 2"
grep -qF "default topology hapacs-tca-2x8.topo not found (looked in: $PFX/bin/../share/peach2sim/topologies/hapacs-tca-2x8.topo)" \
    "$TMP/notopo.err" || fail "without the installed topology: $(cat "$TMP/notopo.err")"
run topo_env P2_TOPOLOGY_DIR="$TMP/topos" "$PFX/bin/p2run" -n 2 -- ./cm/outside
expect_ok topo_env "peach2sim $VERSION"
echo "install: ok ($PFX; outside.c built with pkg-config and find_package, run by the installed p2run)"
