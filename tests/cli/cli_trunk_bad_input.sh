#!/usr/bin/env bash
# jostle trunk on bad input: exit status 2, a message naming the file or option
# and the reason, and nothing written.
. "$(dirname "$0")/common.sh"

in=$W/in
o=$W/o
mkdir -p "$in" "$o"
cube=$SRC/meshes/cuboid-1000x500x400.stl

# ASCII STL of the unit cube scaled by $1, facets 0..11; $2: facets to leave out,
# $3: a replacement for the first vertex of facet 5.
stl() {
  "$PY" - "$@" <<'PYEOF'
import sys
a, skip, bad = float(sys.argv[1]), sys.argv[2], sys.argv[3]
tris = [(0, 2, 3), (0, 3, 1), (4, 5, 7), (4, 7, 6), (0, 1, 5), (0, 5, 4),
        (2, 6, 7), (2, 7, 3), (0, 4, 6), (0, 6, 2), (1, 3, 7), (1, 7, 5)]
print("solid t")
for i, t in enumerate(tris):
    if str(i) in skip.split(","):
        continue
    print(" facet normal 0 0 0\n  outer loop")
    for j, k in enumerate(t):
        if i == 5 and j == 0 and bad != "-":
            print("   vertex " + bad)
        else:
            print("   vertex %g %g %g" % (a * (k & 1), a * ((k >> 1) & 1), a * ((k >> 2) & 1)))
    print("  endloop\n endfacet")
print("endsolid t")
PYEOF
}
stl 1000 "-" "-" > "$in/ok.stl"
stl 400 "-" "-" > "$in/ok400.stl"
stl 1000 "11" "-" > "$in/open.stl"
stl 1000 "-" "nan 0 0" > "$in/nonfinite.stl"
stl 100 "-" "-" > "$in/small.stl"
stl 10 "-" "-" > "$in/tiny.stl"
# Two cubes in one file: the second (edge 600, at x 700..1300) pokes out through the
# first one's x = 1000 face.
{ stl 1000 "-" "-" | sed '$d'; stl 600 "-" "-" | sed '1d' | "$PY" -c '
import sys
for line in sys.stdin:
    if line.strip().startswith("vertex"):
        x, y, z = map(float, line.split()[1:])
        line = "   vertex %g %g %g\n" % (x + 700, y + 200, z + 200)
    sys.stdout.write(line)
'; } > "$in/cross.stl"
: > "$in/empty.stl"

# bad NAME PATTERN WHAT ARGS...
bad() {
  local name=$1 pat=$2 what=$3
  shift 3
  jrun "$name" trunk "$@" --device cpu --out "$o/$name.json" --quiet
  expect_rc 2
  expect_err "$pat" "$what"
  no_output
}

bad missing     'nope\.stl: cannot open'            "the missing file"      "$in/nope.stl"
bad empty       'empty\.stl: empty file'            "the empty file"        "$in/empty.stl"
bad open        'open\.stl: open surface'           "the open surface"      "$in/open.stl"
bad nonfinite   'nonfinite\.stl: .*non-finite'      "the non-finite vertex" "$in/nonfinite.stl"
bad small       'small\.stl: trunk too small'       "a trunk too small"     "$in/small.stl"
bad cross       'cross\.stl: self-intersecting surface: triangles 1[01] and (1[2-9]|2[0-3]) \(from 0, in input order\) cross at \(1000, [0-9.]+, [0-9.]+\), [0-9.]+ mm deep, more than the repair tolerance' \
  "the crossing surfaces, where and how deep" "$in/cross.stl"
bad small_units 'tiny\.stl: trunk too small'        "a trunk too small in cm" "$in/tiny.stl" --units cm
bad big_block   'ok\.stl: trunk too small'          "a block larger than the trunk" "$in/ok.stl" --block 1100x1100x1100
bad block       '--block: expected LxWxH'           "the option --block"    "$cube" --block 200x100
bad block_zero  '--block: expected LxWxH'           "the option --block"    "$cube" --block 200x0x50
bad block_tiny  '--block: 1e-300x1x1: edge 1 is 1e-300 mm, not within \[0.01, 1e\+07\] mm' "the edge range" "$cube" --block 1e-300x1x1
bad block_thin  '--block: 1x1x2000: the longest edge \(2000 mm\) is more than 1000 times the shortest' "the edge ratio" "$cube" --block 1x1x2000
bad block_many  'its volume could hold 2e\+08 blocks of 1x1x1 mm, more than 100000 \(--max-blocks\)' "the block count" "$cube" --block 1x1x1
bad units       "--units: expected mm, cm, m or in, got 'ft'" "the option --units" "$cube" --units ft
bad moves_big   "--moves: expected three shares T,S,P in \[0, 0.7\], got '0.8,0,0'" "a move share too large" "$cube" --moves 0.8,0,0
bad moves_short "--moves: expected three shares T,S,P in \[0, 0.7\], got '0.1,0.1'" "two shares for three" "$cube" --moves 0.1,0.1
bad moves_sum   '--moves: the shares sum to 0.9, more than 0.7' "shares summing too high" "$cube" --moves 0.3,0.3,0.3
bad no_mesh     'give a MESH'                       "the missing argument"
# The same writer on a good mesh does write (so the checks above are not vacuous).
jrun ok trunk "$in/ok400.stl" --device cpu --out "$o/ok.json" --quiet
expect_rc 0
[ -s "$o/ok.json" ] && [ -s "$o/ok.glb" ] && [ -s "$o/ok.svg" ] || fail "jostle $CMD: expected ok.json, ok.glb, ok.svg"
echo "PASS: cli_trunk_bad_input"
