#!/usr/bin/env bash
# A trunk as a CAD tool exports it: scripts/make-trunk-meshes --cad-export writes
# an estate trunk as an ASCII STL with 6 significant digits ("%g", as OpenSCAD)
# in vehicle coordinates; the rounding turns slivers over onto their neighbours
# (a self-intersecting surface without repairs). jostle loads it, reports the
# repairs (the notice and mesh.repairs), and its volume is the file's, as read.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
"$PY" "$SRC/scripts/make-trunk-meshes" --cad-export "$W/cad.stl" >/dev/null \
  || fail "scripts/make-trunk-meshes --cad-export failed"
# a sanitized debug build runs about 5 times slower (slow, common.sh): the load and repair took the
# whole --time 2 there under load (scripts/test --sanitize left 0 blocks)
jrun cad trunk "$W/cad.stl" --device cpu --threads 2 --time $((2 * slow)) --out "$d/cad.json"
expect_rc 0
expect_err "cad\.stl: repaired within 0\.0[0-9]+ mm \(1e-05 of the bounding box diagonal\): welded [0-9]+ vertex\(es\), removed [0-9]+ doubled triangle\(s\), flipped away [1-9][0-9]* sliver\(s\)" \
  "the repairs"
grep -Eq '^cad: [0-9]+ blocks = .* legal' "$W/cad.out" || fail "jostle $CMD: expected 'cad: N blocks = ... legal'"
jpy '
d = load(sys.argv[2])
# The volume of the file as written (6-digit coordinates), summed here.
vs = [tuple(map(float, l.split()[1:4])) for l in open(sys.argv[1]) if l.split()[:1] == ["vertex"]]
lo = [min(v[k] for v in vs) for k in range(3)]
hi = [max(v[k] for v in vs) for k in range(3)]
c = [0.5 * (lo[k] + hi[k]) for k in range(3)]
vol = 0.0
for i in range(0, len(vs), 3):
    p, q, r = ([v[k] - c[k] for k in range(3)] for v in vs[i:i + 3])
    vol += (p[0] * (q[1] * r[2] - q[2] * r[1]) - p[1] * (q[0] * r[2] - q[2] * r[0])
            + p[2] * (q[0] * r[1] - q[1] * r[0])) / 6.0
if d.get("legal") is not True or d["count"] < 1:
    fail("expected a legal packing, got legal %r count %r" % (d.get("legal"), d.get("count")))
if abs(d["mesh_volume_mm3"] - vol) > 1e-7 * vol:
    fail("mesh_volume_mm3 %r, the file holds %r" % (d["mesh_volume_mm3"], vol))
m = d["mesh"]
r = m["repairs"]
diag = math.dist(lo, hi)
if abs(r["tol_mm"] - 1e-5 * diag) > 1e-12 * diag:
    fail("repairs.tol_mm %r, expected 1e-5 x the diagonal %r" % (r["tol_mm"], diag))
if r["slivers_removed"] < 1 or r["welded_vertices"] != 0 or r["doubled_removed"] != 0:
    fail("expected slivers removed and nothing welded or doubled, got %r" % r)
if m["triangles"] != len(vs) // 3 or m["degenerate_dropped"] != 0:
    fail("expected every one of the %d triangles kept, got %r" % (len(vs) // 3, m))
' "$W/cad.stl" "$d/cad.json" || fail "cad.json failed the checks above"
jrun verify verify "$d/cad.json"
expect_rc 0
echo "PASS: cli_trunk_cad"
