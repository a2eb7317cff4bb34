#!/usr/bin/env bash
# The floor's frame and the fills' budget. The 1000 x 500 x 400 mm cuboid turned 7 degrees
# about y and then 10 about z, written as a binary STL (32-bit floats, as CAD exports store
# it) by scripts/turn-mesh: the fills in the mesh's frame fall short of 200, in the floor's
# frame they hold exactly 200, turned back and legal (verify agrees); run.fills reports both
# frames and the turn. The cuboid as it is: one frame, not turned. The sedan with --time 10:
# the fills end within their share of the run (4 s, plus the finishing allowance of the fills
# cut short) and the search runs after them (without the reachable volume, which comes before).
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
"$PY" "$SRC/scripts/turn-mesh" "$SRC/meshes/cuboid-1000x500x400.stl" "$d/turned.stl" \
  --axis y --degrees 7 --axis z --degrees 10 || fail "scripts/turn-mesh failed"

# a sanitized debug build runs about 5 times slower (slow, common.sh): the fills' share of --time with it
# (scripts/test --sanitize under load left the floor frame's layered fill at 175)
JL_TIMEOUT=$((120 * slow)) jrun turned trunk "$d/turned.stl" --device cpu --threads 2 --time $((60 * slow)) \
  --out "$d/t.json" --quiet
expect_rc 0
grep -Eq '^turned: 200 blocks = 200 L .*fills [0-9]+ in the mesh.s frame and 200 in the floor.s \(turned [0-9.]+ deg\).*legal' \
  "$W/turned.out" || fail "jostle $CMD: expected 200 blocks, 200 of them in the floor's frame"
jpy '
d = load(sys.argv[1])
if d["count"] != 200 or d["legal"] is not True:
    fail("expected 200 legal blocks, got %r %r" % (d["count"], d["legal"]))
f = d["run"]["fills"]
ff = f["floor_frame"]
if f["frame"] != "floor" or ff["turned"] is not True:
    fail("expected the floor frame to win, turned: %r %r" % (f["frame"], ff["turned"]))
# R^T = Rz(10) Ry(7): yaw 10, pitch 7, roll 0 (to the 32-bit floats of the file)
for k, want in (("yaw_deg", 10.0), ("pitch_deg", 7.0), ("roll_deg", 0.0)):
    if abs(ff[k] - want) > 1e-4:
        fail("%s: expected %g, got %r" % (k, want, ff[k]))
m, fl = f["frames"]
if not (m["ran"] and fl["ran"]) or fl["count"] != 200 or m["count"] >= 200:
    fail("expected both frames filled, 200 only in the floor frame: %r %r" % (m, fl))
if fl["layered"] != 200 or fl["grid"] != 200:
    fail("expected the floor frame grid and layered fills at 200, got %r %r" % (fl["grid"], fl["layered"]))
if d["baseline_count"] != m["grid"] or d["layered_count"] != m["layered"]:
    fail("baseline_count and layered_count are the mesh frame fills")
if not (0 <= f["time_s"] <= f["budget_s"] + 2):
    fail("fills took %r s of a %r s budget" % (f["time_s"], f["budget_s"]))
# every block turned by the mesh attitude: its axes along the floor frame axes
R = ff["rotation"]
for i, b in enumerate(d["blocks"]):
    w, x, y, z = b["q"]
    Q = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    for c in range(3):
        col = [Q[r][c] for r in range(3)]
        if max(abs(sum(R[k][r] * col[r] for r in range(3))) for k in range(3)) < 1 - 1e-9:
            fail("block %d: axis %d is not along a floor frame axis" % (i, c))
' "$d/t.json" || fail "t.json failed the checks above"
jrun verify verify "$d/t.json"
expect_rc 0

jrun cuboid trunk "$SRC/meshes/cuboid-1000x500x400.stl" --device cpu --threads 2 --out "$d/c.json" --quiet
expect_rc 0
jpy '
f = load(sys.argv[1])["run"]["fills"]
if f["frame"] != "mesh" or f["floor_frame"]["turned"] is not False or f["floor_frame"]["angle_deg"] != 0:
    fail("expected the cuboid in its own frame, got %r" % f["floor_frame"])
if f["frames"][1]["ran"] is not False or f["frames"][0]["count"] != 200:
    fail("expected one frame of 200, got %r" % f["frames"])
' "$d/c.json" || fail "c.json failed the checks above"

jrun sedan trunk "$SRC/problems/trunk/sedan.json" --device cpu --threads 2 --time 10 --no-reach --out "$d/s.json"
expect_rc 0
jpy '
d = load(sys.argv[1])
r = d["run"]
f = r["fills"]
if d["legal"] is not True or not (3.5 <= f["budget_s"] <= 4.0):
    fail("expected a legal result and a fill budget of 4 s less the loading, got %r %r" % (d["legal"], f["budget_s"]))
if f["time_s"] > f["budget_s"] + 2.0:
    fail("the fills took %r s of their %r s" % (f["time_s"], f["budget_s"]))
if "anneal" not in r:
    fail("expected the search to run after the fills")
' "$d/s.json" || fail "s.json failed the checks above"
grep -q "fills: grid" "$W/sedan.err" || fail "jostle $CMD: expected a progress line with the fills' counts"
