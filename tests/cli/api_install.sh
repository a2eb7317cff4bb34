#!/usr/bin/env bash
# The public API from outside: `meson install` into a fresh prefix, then the
# example programs built only against the installed headers and libraries
# through pkg-config (shared and static) pack 10 circles to the record.
. "$(dirname "$0")/common.sh"
BUILD=$(dirname "$JOSTLE")
CC=${CC:-cc}

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
for h in common.h circles.h; do
  [ -f "$(dirname "$hdr")/$h" ] || fail "include/jostle/$h not installed"
done
# nothing private is installed
[ -z "$(find "$dest" -name 'circle_search.h' -o -name 'error.h')" ] || fail "private headers were installed"
# the .pc is relocatable (its prefix follows its own place), so the
# destdir works as the prefix
export PKG_CONFIG_PATH=$(dirname "$pc")
pkgc() { pkg-config "$@" jostle; }
libdir=$(pkgc --variable=libdir)
case $libdir in "$dest"/*) ;; *) fail "jostle.pc is not relocatable (libdir $libdir)" ;; esac
[ -f "$libdir/libjostle.so" ] && [ -f "$libdir/libjostle.a" ] || fail "libjostle.so and libjostle.a not both in $libdir"

# only the public API is exported from the shared library
extra=$(nm -D --defined-only "$libdir/libjostle.so" | awk '{print $3}' | grep -v '^jl_\(circles\|trunk\|scene\|version\|device_cuda_count\)' | grep -v '^_' || true)
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
LD_LIBRARY_PATH=$libdir check_run "$W/pack_shared" shared
LD_LIBRARY_PATH=$libdir ldd "$W/pack_shared" | grep -q "$libdir/libjostle.so" || fail "pack_shared does not use the installed libjostle.so"

LAST=cc-static
CMD="$CC examples/pack_circles.c libjostle.a \$(pkg-config --static --libs jostle)"
RC=0
$CC -std=c11 -Wall -Wextra -Werror "$SRC/examples/pack_circles.c" $(pkgc --cflags) \
  "$libdir/libjostle.a" $(pkgc --static --libs | sed 's/-ljostle\b//') -lstdc++ \
  -o "$W/pack_static" >"$W/cc-static.out" 2>"$W/cc-static.err" || RC=$?
expect_rc 0
check_run "$W/pack_static" static
ldd "$W/pack_static" | grep -q libjostle && fail "pack_static still loads libjostle.so"
exit 0
