#!/usr/bin/env bash
# verify recomputes legality: a result edited to overlap (circle 0 moved onto
# circle 1) exits 1 with "NOT legal", though its JSON still says legal. The
# radii must be the instance's; verify refuses results it cannot check; it
# takes seconds for 100,000 circles or blocks.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
jrun run circles --n 8 --device cpu --seed 1 --time 3 --out "$d/ok.json" --quiet
expect_rc 0
check_result "$d/ok.json" 8

jrun verify_ok verify "$d/ok.json"
expect_rc 0
grep -q 'legal' "$W/verify_ok.out" "$W/verify_ok.err" || fail "jostle $CMD: expected a line containing 'legal'"
if grep -q 'NOT legal' "$W/verify_ok.out" "$W/verify_ok.err"; then fail "jostle $CMD: said NOT legal"; fi

jpy '
d = load(sys.argv[1])
c = d["circles"]
c[0]["x"], c[0]["y"] = c[1]["x"], c[1]["y"]
with open(sys.argv[2], "w") as f:
    json.dump(d, f, indent=2)
' "$d/ok.json" "$d/bad.json" || fail "cannot write the overlapping packing"

jrun verify_bad verify "$d/bad.json"
expect_rc 1
grep -q 'NOT legal' "$W/verify_bad.out" "$W/verify_bad.err" || fail "jostle $CMD: expected 'NOT legal' in its output"

expect_out() {  # expect_out PATTERN WHAT: the last run's stdout matches
  grep -Eq -- "$1" "$W/$LAST.out" || fail "jostle $CMD: expected stdout to name $2 (/$1/)"
}

# --- the radii must be the instance's: a packing of smaller circles is legal
# but no packing of zimmermann-08 ---
jpy '
d = load(sys.argv[1])
for c in d["circles"]:
    c["x"], c["y"], c["r"] = c["x"] / 2, c["y"] / 2, c["r"] / 2
json.dump(d, open(sys.argv[2], "w"))
d = load(sys.argv[1])
d["circles"][7]["r"] = 1
json.dump(d, open(sys.argv[3], "w"))
d = load(sys.argv[1])
for c in d["circles"]:
    c["x"], c["y"], c["r"] = c["x"] / 2, c["y"] / 2, c["r"] / 2
d["problem"]["name"], d["problem"]["best_known_R"] = "mine", None
json.dump(d, open(sys.argv[4], "w"))
' "$d/ok.json" "$d/half.json" "$d/shrunk.json" "$d/mine.json" || fail "cannot write the edited results"

jrun half_n verify "$d/half.json" --n 8
expect_rc 1
expect_out 'NOT legal: circles\[0\]\.r is 0\.5, the instance zimmermann-08 says 1$' "the first circle that differs"
jrun half verify "$d/half.json"
expect_rc 1
expect_out 'NOT legal: circles\[0\]\.r is 0\.5, the instance zimmermann-08 says 1$' "the built-in instance its name says"
jrun shrunk verify "$d/shrunk.json" --n 8
expect_rc 1
expect_out 'circles\[7\]\.r is 1, the instance zimmermann-08 says 8' "the shrunk circle"
jrun equal verify "$d/ok.json" --equal 8
expect_rc 1
expect_out 'circles\[1\]\.r is 2, the instance equal-8 says 1' "the circle that differs"
jrun count verify "$d/ok.json" --n 9
expect_rc 1
expect_out 'has 8 circles, the instance zimmermann-09 has 9' "the counts"
jrun problem verify "$d/ok.json" --problem "$SRC/problems/circles/zimmermann-08.json"
expect_rc 0
jrun mine verify "$d/mine.json"
expect_rc 0
expect_out 'mine\.json: legal' "legal: a problem of its own holds its own radii"
jrun two verify "$d/ok.json" --n 8 --equal 8
expect_rc 2
expect_err 'give only one of' "the clash"

# --- verify checks circles and trunk results, nothing else ---
jrun scene scene "$SRC/problems/scenes/demo-drop.json" --steps 2 --device cpu --out "$d/scene.json" --quiet
expect_rc 0
jrun verify_scene verify "$d/scene.json"
expect_rc 2
expect_err 'verify checks "circles" and "trunk" results, this one is "scene"' "the kinds it checks"

# --- 100,000 circles (a lattice of touching unit circles) in seconds, not minutes ---
jpy '
import math
n, side = 100000, 317
cs = [{"x": 2.0 * (i % side) - side, "y": 2.0 * (i // side) - side, "r": 1} for i in range(n)]
R = max(math.hypot(c["x"], c["y"]) + 1 for c in cs)
json.dump({"format": "jostle-result", "version": 1, "kind": "circles",
           "problem": {"name": "lattice", "n": n}, "R": R, "circles": cs}, open(sys.argv[1], "w"))
' "$d/big.json" || fail "cannot write the 100,000 circles"
t0=$SECONDS
JL_TIMEOUT=60 jrun big verify "$d/big.json"
expect_rc 0
expect_out 'big\.json: legal: 100000 circles, .*max overlap 0\.000e\+00 \(circles 0, 1\)' "the touching pair"
[ $((SECONDS - t0)) -le 20 ] || fail "verify of 100,000 circles took $((SECONDS - t0)) s"

# --- a trunk result of 100,000 copies of one block: said at once; one more is refused ---
jpy '
blocks = [{"c": [500, 250, 200], "q": [1, 0, 0, 0]}] * int(sys.argv[3])
json.dump({"format": "jostle-result", "version": 1, "kind": "trunk",
           "problem": {"name": "c", "mesh": sys.argv[2], "units": "mm", "block": [200, 100, 50]},
           "blocks": blocks}, open(sys.argv[1], "w"))
' "$d/copies.json" "$SRC/meshes/cuboid-1000x500x400.stl" 100000 || fail "cannot write the trunk result"
t0=$SECONDS
JL_TIMEOUT=60 jrun copies verify "$d/copies.json"
expect_rc 1
expect_out 'NOT legal: blocks 0 and 1 overlap by 50 mm' "the first overlapping pair"
[ $((SECONDS - t0)) -le 20 ] || fail "verify of 100,000 blocks took $((SECONDS - t0)) s"
jrun trunk_n verify "$d/copies.json" --n 8
expect_rc 2
expect_err 'apply to circle results' "the options that do not apply"
jpy '
d = load(sys.argv[1]); d["blocks"].append(d["blocks"][0]); json.dump(d, open(sys.argv[1], "w"))
' "$d/copies.json" || fail "cannot add a block"
jrun too_many verify "$d/copies.json"
expect_rc 2
expect_err 'copies\.json: blocks: 100001 blocks, at most 100000 allowed' "the cap"

echo "PASS: cli_verify"
