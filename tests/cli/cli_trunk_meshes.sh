#!/usr/bin/env bash
# The CAD-like trunks of meshes/ (scripts/make-trunk-meshes): each problem file
# loads and validates with no repair, jostle's volume (printed and in the
# result) matches the sidecar's (computed from the coordinates as stored:
# pitched and moved, or in metres), the triangle count and bounding box too,
# and a short run writes a legal packing that verify accepts.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
for name in estate suv-pitched compact-m; do
  # 2 s holds the fills on a quiet machine; a sanitized build runs slower
  jrun "$name" trunk "$SRC/problems/trunk/$name.json" --device cpu --threads 2 --time $((2 * slow)) \
    --out "$d/$name.json"
  expect_rc 0
  if grep -q "repaired" "$W/$name.err"; then fail "jostle $CMD: expected no repair of a generated mesh"; fi
  vol=$(jpy 'print("%.3f" % load(sys.argv[1])["volume_l"])' "$SRC/meshes/$name.json") || fail "$name.json: no volume_l"
  grep -Eq "^$name: [0-9]+ blocks = .*\(mesh $vol L, upper bound [0-9]+, .*legal" "$W/$name.out" \
    || fail "jostle $CMD: expected '$name: N blocks = ... (mesh $vol L, ...) legal' on stdout"
  jpy '
side, d = load(sys.argv[1]), load(sys.argv[2])
if d.get("legal") is not True or not (1 <= d["count"] <= d["upper_bound"]) or len(d["blocks"]) != d["count"]:
    fail("expected a legal packing of 1 to upper_bound blocks, got legal %r count %r bound %r"
         % (d.get("legal"), d.get("count"), d.get("upper_bound")))
v, want = d["mesh_volume_mm3"], side["volume_mm3"]
if abs(v - want) > 1e-9 * want:
    fail("mesh_volume_mm3 %r, the sidecar says %r" % (v, want))
if d["upper_bound"] != int(want // 1e6):
    fail("upper_bound %r, expected floor(%r / 1e6)" % (d["upper_bound"], want))
m = d["mesh"]
if m["triangles"] != side["triangles"] or m["input_triangles"] != side["triangles"] or m["degenerate_dropped"] != 0:
    fail("mesh %r, the sidecar says %d triangles" % (m, side["triangles"]))
r = m["repairs"]
if [r[k] for k in ("welded_vertices", "doubled_removed", "slivers_removed", "overlaps_accepted")] != [0, 0, 0, 0]:
    fail("expected no repairs, got %r" % r)
for got, exp in zip(m["bounds_mm"][0] + m["bounds_mm"][1], side["bounds_mm"][0] + side["bounds_mm"][1]):
    if abs(got - exp) > 1e-6:
        fail("bounds_mm %r, the sidecar says %r" % (m["bounds_mm"], side["bounds_mm"]))
if d["problem"]["units"] != side["units"]:
    fail("problem.units %r, the sidecar says %r" % (d["problem"]["units"], side["units"]))
' "$SRC/meshes/$name.json" "$d/$name.json" || fail "$name: the result failed the checks above"
  jrun "verify_$name" verify "$d/$name.json"
  expect_rc 0
done
echo "PASS: cli_trunk_meshes"
