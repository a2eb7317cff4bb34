#!/usr/bin/env bash
# jostle trunk on the 1000 x 500 x 400 mm cuboid: exactly 200 blocks, checked here
# independently (inside the box, no two overlapping), a glTF binary and an SVG
# with the blocks in three views, the whole box reachable (200 L, none with
# --no-reach); verify passes it and fails an edited copy.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
mesh=$SRC/meshes/cuboid-1000x500x400.stl
jrun run trunk "$mesh" --device cpu --threads 2 --out "$d/c.json" --quiet
expect_rc 0
grep -Eq '^cuboid-1000x500x400: 200 blocks = 200 L .*legal' "$W/run.out" \
  || fail "jostle $CMD: expected the line 'cuboid-1000x500x400: 200 blocks = 200 L ... legal'"
grep -q "wrote $d/c.json, $d/c.glb, $d/c.svg" "$W/run.out" || fail "jostle $CMD: expected the 'wrote' line"
grep -q 'upper bound 200, reachable 200.000 L (bound 200),' "$W/run.out" \
  || fail "jostle $CMD: expected 'upper bound 200, reachable 200.000 L (bound 200),' in the summary"

jpy '
d = load(sys.argv[1])
if d.get("format") != "jostle-result" or d.get("kind") != "trunk":
    fail("expected a trunk result, got %r %r" % (d.get("format"), d.get("kind")))
for k, want in (("count", 200), ("liters", 200), ("baseline_count", 200), ("layered_count", 200),
                ("upper_bound", 200), ("legal", True)):
    if d.get(k) != want:
        fail("%s: expected %r, got %r" % (k, want, d.get(k)))
if abs(d["mesh_volume_l"] - 200) > 1e-9 or abs(d["fill_ratio"] - 1) > 1e-9:
    fail("expected mesh volume 200 L and fill 1, got %r, %r" % (d["mesh_volume_l"], d["fill_ratio"]))
if d["problem"]["block"] != [200, 100, 50] or d["problem"]["units"] != "mm":
    fail("unexpected problem %r" % d["problem"])
rv = d.get("reachable")
if not rv or rv["liters"] != 200 or rv["bound"] != 200 or not rv["complete"] or rv["frames_opened"] != rv["frames"]:
    fail("expected the whole cuboid reachable (200 L, bound 200, every frame), got %r" % rv)
bs = d["blocks"]
if len(bs) != 200:
    fail("expected 200 blocks, got %d" % len(bs))
half = [100, 50, 25]
boxes = []
for i, b in enumerate(bs):
    w, x, y, z = b["q"]
    if abs(w * w + x * x + y * y + z * z - 1) > 1e-12:
        fail("block %d: quaternion not unit" % i)
    R = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    for r in range(3):  # axis aligned: every row has one entry of magnitude 1
        if sorted(abs(v) for v in R[r]) != [0, 0, 1]:
            fail("block %d: expected an axis-aligned block, got %r" % (i, b["q"]))
    ext = [sum(abs(R[r][k]) * half[k] for k in range(3)) for r in range(3)]
    lo = [b["c"][r] - ext[r] for r in range(3)]
    hi = [b["c"][r] + ext[r] for r in range(3)]
    if min(lo) < -1e-9 or hi[0] > 1000 + 1e-9 or hi[1] > 500 + 1e-9 or hi[2] > 400 + 1e-9:
        fail("block %d sticks out of the cuboid: %r %r" % (i, lo, hi))
    boxes.append((lo, hi))
for i in range(len(boxes)):
    for j in range(i):
        a, b = boxes[i], boxes[j]
        if all(min(a[1][k], b[1][k]) - max(a[0][k], b[0][k]) > 1e-9 for k in range(3)):
            fail("blocks %d and %d overlap" % (j, i))
' "$d/c.json" || fail "result c.json failed the checks above"

jrun noreach trunk "$mesh" --device cpu --threads 2 --no-reach --out "$d/nr.json" --quiet
expect_rc 0
grep -q reachable "$W/noreach.out" && fail "jostle $CMD: --no-reach still reports a reachable volume"
jpy '
d = load(sys.argv[1])
if "reachable" in d or d["count"] != 200:
    fail("--no-reach: expected 200 blocks and no reachable volume, got %r, %r" % (d["count"], d.get("reachable")))
' "$d/nr.json" || fail "nr.json failed the checks above"

head -c 4 "$d/c.glb" | grep -q glTF || fail "expected c.glb to start with the glTF magic"
n=$(grep -c '<polygon' "$d/c.svg")
[ "$n" -eq 600 ] || fail "expected 600 block polygons in c.svg (200 blocks, 3 views), got $n"

jrun verify verify "$d/c.json"
expect_rc 0
grep -q ': legal: 200 blocks' "$W/verify.out" || fail "jostle $CMD: expected ': legal: 200 blocks'"

# An edited copy: block 1 put where block 0 is (same centre and orientation:
# they overlap by the block's 50 mm thickness). verify does not trust "legal": true.
jpy '
d = load(sys.argv[1])
d["blocks"][1] = dict(d["blocks"][0])
with open(sys.argv[2], "w") as f:
    json.dump(d, f)
' "$d/c.json" "$d/bad.json" || fail "cannot write bad.json"
jrun verify_bad verify "$d/bad.json"
expect_rc 1
grep -q 'NOT legal' "$W/verify_bad.out" || fail "jostle $CMD: expected 'NOT legal'"
grep -Eq 'blocks 0 and 1 overlap by 50 mm' "$W/verify_bad.out" || fail "jostle $CMD: expected 'blocks 0 and 1 overlap by 50 mm'"

# A result whose mesh is gone: bad input.
jpy '
d = load(sys.argv[1])
d["problem"]["mesh"] = "no-such-mesh.stl"
with open(sys.argv[2], "w") as f:
    json.dump(d, f)
' "$d/c.json" "$d/nomesh.json" || fail "cannot write nomesh.json"
jrun verify_nomesh verify "$d/nomesh.json"
expect_rc 2
expect_err 'no-such-mesh\.stl' "the missing mesh"

# Every problem file (the hatchback's mesh is OBJ; mesh paths are relative to the
# problem file): the mesh volume matches the generator's sidecar, the upper bound is
# floor(volume / 1 L), and the count is at least the grid baseline and the layered fill
# and at most the bound (and the reachable volume's bound, when measured in full);
# the complete grid baseline is never above the complete layered fill.
# a sanitized debug build runs about 5 times slower (slow, common.sh): the fills need the time
for name in cuboid-1000x500x400 slanted-seat-back sedan hatchback; do
  jrun "p_$name" trunk "$SRC/problems/trunk/$name.json" --device cpu --time $((2 * slow)) --out "$d/$name.json" --quiet
  expect_rc 0
  jpy '
import math
d, side = load(sys.argv[1]), load(sys.argv[2])
if abs(d["mesh_volume_mm3"] - side["volume_mm3"]) > 1e-3 * max(1.0, side["volume_mm3"] * 1e-9) + 5e-4:
    fail("mesh volume %r, the sidecar says %r" % (d["mesh_volume_mm3"], side["volume_mm3"]))
if d["upper_bound"] != math.floor(d["mesh_volume_mm3"] / 1e6):
    fail("upper bound %r, expected floor(%r L)" % (d["upper_bound"], d["mesh_volume_l"]))
if not (0 < d["baseline_count"] <= d["count"] <= d["upper_bound"]):
    fail("expected 0 < baseline <= count <= upper bound, got %r %r %r" % (d["baseline_count"], d["count"], d["upper_bound"]))
rv = d.get("reachable")
if rv and rv["complete"] and not (d["count"] <= rv["bound"] <= d["upper_bound"] and rv["liters"] <= d["mesh_volume_l"]):
    fail("expected count <= reachable bound <= upper bound, got %r %r %r" % (d["count"], rv, d["upper_bound"]))
if not (0 <= d["layered_count"] <= d["count"]):
    fail("expected 0 <= layered fill <= count, got %r %r" % (d["layered_count"], d["count"]))
r = d["run"]
if r["baseline_complete"] and r["layered_complete"] and d["baseline_count"] > d["layered_count"]:
    fail("the complete grid baseline %r beats the complete layered fill %r" % (d["baseline_count"], d["layered_count"]))
if d["count"] < d["upper_bound"] and "anneal" not in d["run"] and d["run"]["stopped_by"] != "time":
    fail("below the bound the annealing search must run unless --time ran out first, run = %r" % d["run"])
a = r.get("anneal")
if a is not None and not (0 <= a["legalize_legal"] <= a["legalize_tried"] and 0 <= a["pocket_added"] <= a["pocket_tried"]
                          and a["legalize_dropped"] >= 0 and a["chains_best"] >= 0 and a["legalize_s"] >= 0 and a["pocket_s"] >= 0):
    fail("the search counters are inconsistent: %r" % a)
if d["mesh"]["flipped_triangles"] != 0 or d["mesh"]["degenerate_dropped"] != 0:
    fail("the generated meshes are outward and clean, got %r" % d["mesh"])
' "$d/$name.json" "$SRC/meshes/$name.json" || fail "$name.json failed the checks above"
done
jrun verify_h verify "$d/hatchback.json"
expect_rc 0
jrun resume trunk "$SRC/meshes/hatchback.obj" --resume "$d/hatchback.json" --device cpu --time 2 --out "$d/h2.json" --quiet
expect_rc 0
jrun verify_h2 verify "$d/h2.json"
expect_rc 0

echo "PASS: cli_trunk"
