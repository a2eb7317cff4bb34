#!/usr/bin/env bash
# The public API from outside: `meson install` into a fresh prefix, then the
# example programs built only against the installed headers and libraries
# through pkg-config (shared and static) pack 10 circles to the record and
# measure two trunks (the cuboid exactly, the slanted seat back legally, at
# least its grid baseline) and drop a sphere on the ground.
. "$(dirname "$0")/common.sh"
BUILD=$(dirname "$JOSTLE")
CC=${CC:-cc}
# a sanitized build's library needs its runtime in the programs built on it
if ldd "$JOSTLE" 2>/dev/null | grep -q libasan; then CC="$CC -fsanitize=address,undefined"; fi

dest=$W/dest
LAST=install
CMD="meson install -C $BUILD --destdir $dest"
RC=0
meson install -C "$BUILD" --no-rebuild --destdir "$dest" >"$W/install.out" 2>"$W/install.err" || RC=$?
expect_rc 0
pc=$(find "$dest" -name jostle.pc | head -1)
[ -n "$pc" ] || fail "no jostle.pc installed under $dest"
hdr=$(find "$dest" -path '*/include/jostle/jostle.h' | head -1)
[ -n "$hdr" ] || fail "no include/jostle/jostle.h installed under $dest"
for h in common.h circles.h trunk.h; do
  [ -f "$(dirname "$hdr")/$h" ] || fail "include/jostle/$h not installed"
done
[ -f "$(dirname "$hdr")/scene.h" ] || fail "include/jostle/scene.h not installed"
# nothing private is installed
[ -z "$(find "$dest" -name 'circle_search.h' -o -name 'error.h' -o -name 'trunk_run.h')" ] || fail "private headers were installed"
# the .pc is relocatable (its prefix follows its own place: the project's
# default), so the destdir works as the prefix; a build directory set up
# before that default gets a copy pointed at the destdir
# (ahead of the caller's path, which may be where jostle's own
# dependencies are found)
orig_pc_path=${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH=$(dirname "$pc")$orig_pc_path
pkgc() { pkg-config "$@" jostle; }
libdir=$(pkgc --variable=libdir)
case $libdir in
  "$dest"/*) ;;
  *) mkdir -p "$W/pc"
     sed "s|^prefix=|prefix=$dest|" "$pc" >"$W/pc/jostle.pc"
     export PKG_CONFIG_PATH=$W/pc$orig_pc_path
     libdir=$(pkgc --variable=libdir) ;;
esac
[ -f "$libdir/libjostle.so" ] && [ -f "$libdir/libjostle.a" ] || fail "libjostle.so and libjostle.a not both in $libdir"

# only the public API is exported from the shared library
# (every exported name is a function the installed headers declare JL_API)
api=$(cat "$(dirname "$hdr")"/*.h | tr '\n' ' ' | grep -o 'JL_API [^(;]*(' | sed 's/($//; s/.*[ *]//' | sort -u)
[ -n "$api" ] || fail "found no JL_API functions in the installed headers"
extra=$(nm -D --defined-only "$libdir/libjostle.so" | awk '{print $3}' | grep -v '^_' | grep -vxF "$api" || true)
[ -z "$extra" ] || fail "libjostle.so exports symbols outside the public API: $(echo $extra | head -c 300)"

check_run() {
  local exe=$1 what=$2
  LAST=$what
  CMD="$exe 10 60"
  RC=0
  timeout 120 "$exe" 10 60 >"$W/$what.out" 2>"$W/$what.err" || RC=$?
  expect_rc 0
  "$PY" - "$W/$what.out" <<'PYEOF' || fail "$what: not at the record"
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r"10 circles in R = ([0-9.]+) \(record ([0-9.]+)\)", s)
if not m: sys.exit("no result line in: " + s[:300])
R, rec = float(m.group(1)), float(m.group(2))
if rec <= 0 or abs(R / rec - 1) > 1e-9: sys.exit("R %r against the record %r" % (R, rec))
PYEOF
}

LAST=cc-shared
CMD="$CC examples/pack_circles.c \$(pkg-config --cflags --libs jostle)"
RC=0
$CC -std=c11 -Wall -Wextra -Werror "$SRC/examples/pack_circles.c" $(pkgc --cflags --libs) \
  -o "$W/pack_shared" >"$W/cc-shared.out" 2>"$W/cc-shared.err" || RC=$?
expect_rc 0
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} check_run "$W/pack_shared" shared
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$W/pack_shared" | grep -q "$libdir/libjostle.so" || fail "pack_shared does not use the installed libjostle.so"

LAST=cc-static
CMD="$CC examples/pack_circles.c libjostle.a \$(pkg-config --static --libs jostle)"
RC=0
$CC -std=c11 -Wall -Wextra -Werror "$SRC/examples/pack_circles.c" $(pkgc --cflags) \
  "$libdir/libjostle.a" $(pkgc --static --libs | sed 's/-ljostle\b//') -lstdc++ \
  -o "$W/pack_static" >"$W/cc-static.out" 2>"$W/cc-static.err" || RC=$?
expect_rc 0
check_run "$W/pack_static" static
ldd "$W/pack_static" | grep -q libjostle && fail "pack_static still loads libjostle.so"

# trunk_volume MESH SECONDS prints "N blocks = N L (mesh V L, bound B)" and
# "baseline G (grid), ..."; the cuboid holds exactly 200, the seat back at
# least its grid baseline (a legal packing: the library checks it exactly)
check_trunk() {
  local exe=$1 what=$2 mesh=$3 want=$4
  LAST=$what
  CMD="$exe $mesh 20"
  RC=0
  timeout 120 "$exe" "$SRC/meshes/$mesh" 20 >"$W/$what.out" 2>"$W/$what.err" || RC=$?
  expect_rc 0
  "$PY" - "$W/$what.out" "$want" <<'PYEOF' || fail "$what: $mesh"
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r"^(\d+) blocks = (\d+) L \(mesh ([0-9.]+) L, bound (\d+)\)$", s, re.M)
b = re.search(r"^baseline (\d+) \(grid\)", s, re.M)
if not m or not b: sys.exit("no result lines in: " + s[:300])
n, bound, base = int(m.group(1)), int(m.group(4)), int(b.group(1))
if sys.argv[2] != "baseline" and n != int(sys.argv[2]): sys.exit("%d blocks, expected %s" % (n, sys.argv[2]))
if not (base <= n <= bound): sys.exit("%d blocks outside [baseline %d, bound %d]" % (n, base, bound))
PYEOF
}

for link in shared static; do
  LAST=cc-trunk-$link
  CMD="$CC examples/trunk_volume.c ($link)"
  RC=0
  if [ $link = shared ]; then
    $CC -std=c11 -Wall -Wextra -Werror "$SRC/examples/trunk_volume.c" $(pkgc --cflags --libs) \
      -o "$W/trunk_$link" >"$W/$LAST.out" 2>"$W/$LAST.err" || RC=$?
  else
    $CC -std=c11 -Wall -Wextra -Werror "$SRC/examples/trunk_volume.c" $(pkgc --cflags) \
      "$libdir/libjostle.a" $(pkgc --static --libs | sed 's/-ljostle\b//') -lstdc++ \
      -o "$W/trunk_$link" >"$W/$LAST.out" 2>"$W/$LAST.err" || RC=$?
  fi
  expect_rc 0
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} check_trunk "$W/trunk_$link" "cuboid-$link" cuboid-1000x500x400.stl 200
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} check_trunk "$W/trunk_$link" "seat-back-$link" slanted-seat-back.stl baseline
done
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$W/trunk_shared" | grep -q "$libdir/libjostle.so" || fail "trunk_shared does not use the installed libjostle.so"
ldd "$W/trunk_static" | grep -q libjostle && fail "trunk_static still loads libjostle.so"

# examples/scene_drop.c, shared and static: a sphere dropped from 1 m rests
# on the ground within the midpoint scheme's one step of fall (the band it
# prints); given demo-drop.json it ends where `jostle scene --steps 500`
# (its one second) leaves the bodies.
"$JOSTLE" scene "$SRC/problems/scenes/demo-drop.json" --device cpu --steps 500 --quiet \
  --out "$W/demo-drop.json" >"$W/cli-drop.out" 2>"$W/cli-drop.err" || fail "jostle scene demo-drop.json failed"
check_drop() {
  local exe=$1 what=$2
  LAST=$what
  CMD="$exe"
  RC=0
  timeout 120 "$exe" >"$W/$what.out" 2>"$W/$what.err" || RC=$?
  expect_rc 0
  "$PY" - "$W/$what.out" <<'PYEOF' || fail "$what: the sphere is not at rest on the ground"
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r"2 bodies, 1000 steps, t = 1\.000000 s .*\nsphere: height ([-0-9.]+) m \(expected ([0-9.]+) to ([0-9.]+):.* velocity ([-0-9.]+) m/s", s)
if not m: sys.exit("no result line in: " + s[:300])
z, lo, hi, v = map(float, m.groups())
# r = 0.1, one step of fall at sqrt(2 g h) = 4.43 m/s: 0.1 - 0.00443
if abs(lo - 0.095571) > 1e-6 or hi != 0.1: sys.exit("band %r..%r" % (lo, hi))
if not lo <= z <= hi or abs(v) > 1e-6: sys.exit("height %r, velocity %r" % (z, v))
PYEOF
  LAST=$what-file
  CMD="$exe demo-drop.json"
  RC=0
  timeout 120 "$exe" "$SRC/problems/scenes/demo-drop.json" >"$W/$what-file.out" 2>"$W/$what-file.err" || RC=$?
  expect_rc 0
  "$PY" - "$W/$what-file.out" "$W/demo-drop.json" <<'PYEOF' || fail "$what: demo-drop.json differs from jostle scene"
import json, re, sys
s = open(sys.argv[1]).read()
rows = re.findall(r"^ *(\d+)  at \( *([-0-9.]+), *([-0-9.]+), *([-0-9.]+)\)$", s, re.M)
cli = json.load(open(sys.argv[2]))
if "500 steps" not in s or cli["run"]["steps"] != 500: sys.exit("not 500 steps: " + s[:200])
if len(rows) != len(cli["bodies"]) or len(rows) != 22: sys.exit("%d bodies printed" % len(rows))
for k, x, y, z in rows:
    want = cli["bodies"][int(k)]["position"]
    if max(abs(float(a) - b) for a, b in zip((x, y, z), want)) > 1e-6: sys.exit("body %s at %s %s %s, jostle scene %r" % (k, x, y, z, want))
PYEOF
}
for mode in shared static; do
  LAST=cc-drop-$mode
  CMD="$CC examples/scene_drop.c ($mode)"
  RC=0
  if [ $mode = shared ]; then
    $CC -std=c11 -Wall -Wextra -Werror "$SRC/examples/scene_drop.c" $(pkgc --cflags --libs) -lm \
      -o "$W/drop_$mode" >"$W/$LAST.out" 2>"$W/$LAST.err" || RC=$?
  else
    $CC -std=c11 -Wall -Wextra -Werror "$SRC/examples/scene_drop.c" $(pkgc --cflags) \
      "$libdir/libjostle.a" $(pkgc --static --libs | sed 's/-ljostle\b//') -lstdc++ \
      -o "$W/drop_$mode" >"$W/$LAST.out" 2>"$W/$LAST.err" || RC=$?
  fi
  expect_rc 0
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} check_drop "$W/drop_$mode" drop-$mode
done
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$W/drop_shared" | grep -q "$libdir/libjostle.so" || fail "drop_shared does not use the installed libjostle.so"
ldd "$W/drop_static" | grep -q libjostle && fail "drop_static still loads libjostle.so"
exit 0
