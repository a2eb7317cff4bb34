#!/usr/bin/env bash
# The peer drivers agree with jostle on easy physics (skipped when Bullet is not built):
# a unit box resting on the ground for 1 s stays within a millimetre in jostle and in
# Bullet (bench/bullet_driver, through scripts/bench-peers' table), and a sphere in free
# fall for 0.5 s ends where each engine's scheme puts it: jostle's midpoint step is exact
# for constant gravity (z0 - g t^2 / 2), Bullet's semi-implicit Euler falls
# g h^2 n (n + 1) / 2 after n steps of h (h g t / 2 more than the analytic fall).
# The bodies the drivers read are those jostle expands (the result's size and mass).
. "$(dirname "$0")/common.sh"

BULLET=${JL_BULLET_DRIVER:-}
[ -n "$BULLET" ] && [ -x "$BULLET" ] || { echo "SKIP: Bullet driver not built (libbullet-dev)"; exit 77; }
B="$SRC/scripts/bench-peers"

cat > "$W/rest.json" <<'JSON'
{"name": "rest", "dt": 0.005, "duration": 1, "contact": {"mu": 0.6},
 "bodies": [{"shape": "plane", "normal": [0, 0, 1]},
            {"shape": "box", "half_extents": [0.5, 0.5, 0.5], "position": [0, 0, 0.5]}]}
JSON
mkdir "$W/keep"
"$PY" "$B" --jostle "$JOSTLE" --bullet "$BULLET" --no-mujoco --threads 1 --scenes "$W/rest.json" \
  --keep "$W/keep" > "$W/rest.out" 2> "$W/rest.err" || fail "bench-peers failed: $(cat "$W/rest.err")"
jpy '
rows = [l for l in open(sys.argv[1]) if l.startswith("| " + sys.argv[2])]
if len(rows) != 1:
    fail("expected one row for the scene, got %r" % rows)
c = [x.strip() for x in rows[0].strip().strip("|").split("|")]
if c[1:3] != ["2", "200"]:
    fail("expected 2 bodies and 200 steps, got %r" % c[1:3])
# per engine ms, moved, pen from column 4: jostle 1 thread, jostle 1 thread, Bullet 10, Bullet 100
for k, name in enumerate(["jostle", "jostle", "Bullet 10 it", "Bullet 100 it"]):
    ms, moved, pen = (float(x) for x in c[4 + 3 * k:7 + 3 * k])
    if not (moved < 1e-3 and pen < 1e-2 and ms > 0):
        fail("%s: the resting box moved %g m (pen %g): expected < 1 mm" % (name, moved, pen))
if "not asked" not in c[16]:
    fail("expected the MuJoCo column to say it was not asked, got %r" % c[16])
' "$W/rest.out" rest || exit 1
grep -q "^box 1000.0 0.5 0.5 0.5 0.0 0.0 0.5 " "$W/keep/rest.txt" \
  || fail "expected the box's mass 1000 kg and half-extents in the bodies file: $(cat "$W/keep/rest.txt")"

cat > "$W/fall.json" <<'JSON'
{"name": "fall", "dt": 0.01, "steps": 50,
 "bodies": [{"shape": "plane", "normal": [0, 0, 1]},
            {"shape": "sphere", "radius": 0.1, "position": [0, 0, 10]}]}
JSON
"$PY" "$B" --jostle "$JOSTLE" --bullet "$BULLET" --no-mujoco --threads 1 --scenes "$W/fall.json" \
  --keep "$W/keep" > "$W/fall.out" 2> "$W/fall.err" || fail "bench-peers failed: $(cat "$W/fall.err")"
jrun fall scene "$W/fall.json" --device cpu --threads 1 --out "$W/fall-r.json" --quiet
expect_rc 0
"$BULLET" "$W/keep/fall.txt" 50 10 --positions "$W/fall-b.txt" > "$W/fall-b.out" \
  || fail "bullet_driver failed on the free fall"
jpy '
g, h, n, z0 = 9.81, 0.01, 50, 10.0
zj = load(sys.argv[1])["bodies"][1]["position"][2]
zb = float(open(sys.argv[2]).read().split("\n")[1].split()[2])
exact = z0 - g * (n * h) ** 2 / 2
euler = z0 - g * h * h * n * (n + 1) / 2
if abs(zj - exact) > 1e-9:
    fail("jostle: the sphere fell to z = %.12g, expected %.12g (exact for constant g)" % (zj, exact))
# Bullet computes in single precision: 1e-5 m at z = 10
if abs(zb - euler) > 1e-4:
    fail("Bullet: the sphere fell to z = %.9g, expected %.9g (semi-implicit Euler; analytic %.9g)"
         % (zb, euler, exact))
' "$W/fall-r.json" "$W/fall-b.txt" || exit 1
echo "PASS: a resting box stays within 1 mm in jostle and Bullet; free fall: jostle exact, Bullet its Euler fall"
