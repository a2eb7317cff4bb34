#!/usr/bin/env bash
# jostle scene: a run writes the result JSON, the per-step CSV and the .glb; bad scene
# files exit 2 naming the file, the key and the reason, writing nothing; SIGINT stops
# cleanly and writes what was computed.
. "$(dirname "$0")/common.sh"

in=$W/in
o=$W/o
mkdir -p "$in" "$o"
SC=$SRC/problems/scenes

# --- FCLib export: JL_HAVE_FCLIB (tests/meson.build) says whether this build has it ---
fcl=(--fclib "$o/drop.hdf5" --fclib-step 150)
if [ "${JL_HAVE_FCLIB:-1}" != 1 ]; then
  # without FCLib, --fclib is refused before any step runs, and nothing is written
  jrun nofc scene "$SC/demo-drop.json" --steps 200 --out "$o/nofc.json" --fclib "$o/nofc.hdf5" --quiet
  expect_rc 2
  expect_err "built without FCLib" "the missing FCLib"
  [ ! -e "$o/nofc.json" ] && [ ! -e "$o/nofc.hdf5" ] || fail "jostle $CMD: wrote a file"
  fcl=()
fi

# --- a good run ---
jrun drop scene "$SC/demo-drop.json" --steps 200 --threads 2 --out "$o/drop.json" \
  --csv "$o/drop.csv" --glb "$o/drop.glb" "${fcl[@]}" --quiet
expect_rc 0
[ -s "$o/drop.glb" ] || fail "jostle $CMD: expected $o/drop.glb"
head -c 4 "$o/drop.glb" | grep -q glTF || fail "jostle $CMD: $o/drop.glb does not start with glTF"
if [ ${#fcl[@]} -gt 0 ]; then
  [ "$(head -c 4 "$o/drop.hdf5" | od -An -tx1 | tr -d ' ')" = "89484446" ] \
    || fail "jostle $CMD: $o/drop.hdf5 is not an HDF5 file"
  grep -q "drop.hdf5 (step 150)" "$W/drop.out" || fail "jostle $CMD: expected 'drop.hdf5 (step 150)' on stdout"
fi
jpy '
import csv
d = load(sys.argv[1])
if d.get("format") != "jostle-result" or d.get("kind") != "scene":
    fail("expected format jostle-result, kind scene, got %r %r" % (d.get("format"), d.get("kind")))
if d["run"]["steps"] != 200 or d["run"]["stopped_by"] != "steps":
    fail("expected 200 steps stopped by steps, got %r" % d["run"])
if len(d["bodies"]) != d["scene"]["bodies"] or d["scene"]["bodies"] != 22:
    fail("expected 22 bodies, got %r" % d["scene"]["bodies"])
rows = list(csv.reader(open(sys.argv[2])))
want = ["step", "time", "kinetic", "potential", "contacts", "iterations", "residual", "max_penetration"]
if rows[0] != want:
    fail("CSV header %r, expected %r" % (rows[0], want))
if len(rows) != 202 or rows[-1][0] != "200":
    fail("expected 201 data rows (steps 0..200), got %d" % (len(rows) - 1))
if abs(float(rows[-1][1]) - 0.4) > 1e-12:
    fail("expected time 0.4 at step 200, got %s" % rows[-1][1])
if max(int(r[4]) for r in rows[1:]) == 0:
    fail("expected contacts in the CSV")
if d["summary"].get("diverged_step", "missing") is not None:
    fail("expected no divergence in the drop, got diverged_step %r" % d["summary"].get("diverged_step"))
# free fall before any contact: kinetic + potential is conserved by the midpoint rule
e0 = float(rows[1][2]) + float(rows[1][3]); e1 = float(rows[2][2]) + float(rows[2][3])
if int(rows[2][4]) == 0 and abs(e1 - e0) > 1e-9 * abs(e0):
    fail("energy changed in free fall: %r -> %r" % (e0, e1))
' "$o/drop.json" "$o/drop.csv" \
  || fail "cli_scene: the checks above failed"

grep -q "diverged" "$W/drop.err" && fail "jostle $CMD: a divergence warning on a converging drop"

# --- a diverging solve is said once, with its step, and recorded: JOR with 100 iterations
# cannot hold the 2000-brick wall (penetration 4.6e4 m at step 25, the 1 m ball being the
# largest moving body) ---
jrun wall scene "$SC/tasora-wall-2000.json" --solver jor --steps 26 --threads 2 --quiet \
  --out "$o/wall.json"
expect_rc 0
expect_err "warning: step 25: max penetration .* more than the largest moving body \(1 m\): the JOR solve has diverged" \
  "the diverged step"
[ "$(grep -c diverged "$W/wall.err")" -eq 1 ] || fail "jostle $CMD: expected the warning once"
jpy '
d = load(sys.argv[1])
if d["summary"]["diverged_step"] != 25:
    fail("expected diverged_step 25, got %r" % d["summary"]["diverged_step"])
' "$o/wall.json" \
  || fail "cli_scene: the checks above failed"

# --- bad scene files: exit 2, file + key + reason on stderr, nothing written ---
rm -f "$o"/*
base='"dt": 0.01, "steps": 10, "bodies": [{"shape": "plane", "normal": [0, 0, 1]}, {"shape": "sphere", "radius": 1, "position": [0, 0, 1]}]'
printf '{%s, "bogus": 1}\n' "$base" > "$in/unknown.json"
printf '{"dt": "0.01", "bodies": [{"shape": "sphere", "radius": 1}]}\n' > "$in/type.json"
printf '{"dt": 0.01, "bodies": [{"shape": "sphere", "radius": 1e999}]}\n' > "$in/inf.json"
printf '{%s, "contact": {"mu": -1}}\n' "$base" > "$in/range.json"
printf '{"bodies": [{"shape": "sphere", "radius": 1}]}\n' > "$in/nodt.json"
printf '{"dt": 0.01, "bodies": [{"shape": "sphere", "radius": 1, "material": "steel"}]}\n' > "$in/mat.json"
printf '{"dt": 0.01, "bodies": [{"shape": "cone", "radius": 1}]}\n' > "$in/shape.json"
printf '{"dt": 0.01, "generators": [{"type": "box_stack", "count": 3, "half_extents": [1, 1, 0]}]}\n' > "$in/gen.json"
printf '{"dt": 0.01, "bodies": [{"shape": "sphere", "radius": 1,}]}\n' > "$in/syntax.json"
printf '{"dt": 0.01, "bodies": [{"shape": "sphere", "radius": 1e-100, "density": 1e12}]}\n' > "$in/tiny.json"
printf '{"dt": 0.01, "bodies": [{"shape": "sphere", "radius": 1, "mass": 1e-300}]}\n' > "$in/light.json"

bad() {  # bad NAME PATTERN WHAT
  jrun "$1" scene "$in/$1.json" --out "$o/$1-out.json" --csv "$o/$1.csv" --quiet
  expect_rc 2
  expect_err "$1\\.json" "the file"
  expect_err "$2" "$3"
  local left
  left=$(ls -A "$o")
  [ -z "$left" ] || fail "jostle $CMD: expected no output, found: $left"
}
bad unknown 'bogus: unknown key'                     "the unknown key"
bad type    'dt: must be a number'                   "the key dt and the reason"
bad inf     'bodies\[0\]\.radius: must be finite'     "the radius and the reason"
bad range   'contact\.mu: must be in'                "contact.mu and the range"
bad nodt    'dt: missing'                            "the missing dt"
bad mat     'bodies\[0\]\.material: unknown material' "the unknown material"
bad shape   'bodies\[0\]\.shape: expected sphere, box or plane' "the shape"
bad gen     'generators\[0\]\.half_extents\[2\]: must be in' "the generator key"
bad syntax  'invalid JSON at line 1'                 "the syntax error"
# sizes and masses whose mass or inertia would underflow (before: "contact 0 has no dynamic body", exit 5)
bad tiny    'bodies\[0\]\.radius: must be in \[1e-09, 1e\+12\], got 1e-100' "the radius and its range"
bad light   'bodies\[0\]\.mass: must be in \[1e-30, 1e\+12\], got 1e-300' "the mass and its range"

jrun noopt scene "$in/unknown.json" --frobnicate --quiet
expect_rc 2
expect_err 'frobnicate' "the unknown option"

jrun badorder scene "$SC/demo-drop.json" --body-order morton --out "$o/badorder.json" --quiet
expect_rc 2
expect_err "--body-order: expected auto, spatial or given, got 'morton'" "the option and the reason"
[ ! -e "$o/badorder.json" ] || fail "jostle $CMD: wrote a result"

# --- --body-order spatial: the same run in the file's numbering (only the order of
# additions differs, also after the order's renewal); the drop's 21 bodies, given in
# no spatial order, are renumbered ---
for ord in given spatial; do
  jrun "order-$ord" scene "$SC/demo-drop.json" --steps 300 --threads 2 --body-order "$ord" \
    --out "$o/order-$ord.json"
  expect_rc 0
done
expect_err "bodies stepped along a Z-order curve" "the spatial order"
grep -q "Z-order" "$W/order-given.err" && fail "jostle $CMD: the given order was reordered"
jpy '
a, b = load(sys.argv[1]), load(sys.argv[2])
if (a["run"]["body_order"], b["run"]["body_order"]) != ("given", "spatial"):
    fail("expected run.body_order given and spatial, got %r, %r" % (a["run"]["body_order"], b["run"]["body_order"]))
# the drop travels more than 2 body sizes: the spatial order is renewed at step 250
if (a["run"]["reorders"], b["run"]["reorders"]) != (0, 1):
    fail("expected run.reorders 0 and 1, got %r, %r" % (a["run"]["reorders"], b["run"]["reorders"]))
if a["summary"]["contacts_mean"] != b["summary"]["contacts_mean"]:
    fail("contacts differ: %r, %r" % (a["summary"]["contacts_mean"], b["summary"]["contacts_mean"]))
if [x["shape"] for x in a["bodies"]] != [x["shape"] for x in b["bodies"]]:
    fail("the bodies came back in another order")
d = max(abs(p - q) for x, y in zip(a["bodies"], b["bodies"]) for p, q in zip(x["position"], y["position"]))
if not d < 1e-9:
    fail("positions differ by %g m between the orders" % d)
' "$o/order-given.json" "$o/order-spatial.json" \
  || fail "cli_scene: the checks above failed"
rm -f "$o"/order-*.json

# --- SIGINT: exit 0, result and CSV of the steps done ---
CMD="scene box-pyramid-20.json --steps 1000000"
LAST=sig
"$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' \
  "$JOSTLE" scene "$SC/box-pyramid-20.json" --steps 1000000 --threads 1 --out "$o/sig.json" \
  --csv "$o/sig.csv" --quiet >"$W/sig.out" 2>"$W/sig.err" </dev/null &
pid=$!
BG_PIDS+=("$pid")
sleep 3
kill -0 "$pid" 2>/dev/null || fail "jostle $CMD: exited before SIGINT"
kill -INT "$pid"
for _ in $(seq 100); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid"; fail "jostle $CMD: still running 10 s after SIGINT"; }
RC=0
wait "$pid" || RC=$?
BG_PIDS=()
[ "$RC" -eq 0 ] || fail "jostle $CMD: expected exit 0 after SIGINT, got $RC"
jpy '
d = load(sys.argv[1])
n = d["run"]["steps"]
if d["run"]["stopped_by"] != "signal" or not 0 < n < 1000000:
    fail("expected stopped_by signal after some steps, got %r" % d["run"])
rows = open(sys.argv[2]).read().splitlines()
if len(rows) != n + 2:
    fail("expected %d CSV lines for %d steps, got %d" % (n + 2, n, len(rows)))
' "$o/sig.json" "$o/sig.csv" \
  || fail "cli_scene: the checks above failed"
left=$(cd "$o" && ls -A | grep -v -x -e sig.json -e sig.csv)
[ -z "$left" ] || fail "expected only sig.json and sig.csv, found also: $left"

# --- a step whose solve runs long (tolerance 0, 1e8 iterations): SIGINT and --time end
# the solve under way (before, only the next step boundary looked at them) ---
cat > "$in/long.json" <<'EOF'
{"name": "long", "dt": 0.01, "steps": 5,
 "solver": {"method": "jor", "tol_abs": 0, "tol_rel": 0, "max_iterations": 100000000},
 "generators": [{"type": "container", "min": [0, 0, 0], "max": [1, 1, 2]},
   {"type": "sphere_grid", "counts": [8, 8, 8], "radius": 0.06, "spacing": 0.119,
    "origin": [0.07, 0.07, 0.06], "velocity": [0.3, -0.2, 0]}]}
EOF
jbg long_sig scene "$in/long.json" --device cpu --threads 2 --out "$o/long.json" --quiet
sleep 2
kill -0 "$BG_PID" 2>/dev/null || { wait "$BG_PID"; RC=$?; fail "jostle $CMD: exited (status $RC) before SIGINT"; }
kill -INT "$BG_PID"
jwait $((3 * slow))
expect_rc 0
jpy '
d = load(sys.argv[1])
if d["run"]["stopped_by"] != "signal" or not d["run"]["steps"] < 5:
    fail("expected stopped_by signal before step 5, got %r" % d["run"])
' "$o/long.json" \
  || fail "cli_scene: the checks above failed"
jbg long_time scene "$in/long.json" --device cpu --threads 2 --time 2 --out "$o/long-time.json" --quiet
jwait $((4 * slow))
expect_rc 0
jpy '
d = load(sys.argv[1])
if d["run"]["stopped_by"] != "time" or not d["run"]["steps"] < 5:
    fail("expected stopped_by time before step 5, got %r" % d["run"])
' "$o/long-time.json" \
  || fail "cli_scene: the checks above failed"
jrun time_zero scene "$in/long.json" --time 0 --out "$o/t0.json"
expect_rc 2
expect_err '--time: must be > 0' "the option --time"

# A solve that diverges until the bodies' state is not finite (JOR at 100
# iterations on the 1000-brick wall, from step 64): the run ends there with
# its outputs written, stopped_by "diverged", exit status 1.
jrun blowup scene "$SC/tasora-wall-1000.json" --device cpu --threads 2 --solver jor \
  --steps 200 --out "$o/blowup.json" --csv "$o/blowup.csv" --quiet
expect_rc 1
expect_err 'is no longer finite \(the solve diverged at step [0-9]+\): the run stops here' \
  "the end of a run that blew up"
jpy '
d = load(sys.argv[1])
r = d["run"]
if r["stopped_by"] != "diverged" or not 10 <= r["steps"] < 200:
    fail("expected stopped_by diverged within 200 steps, got %r" % r)
rows = open(sys.argv[2]).read().split("\n")
if len([x for x in rows if x.strip()]) != r["steps"] + 2:
    fail("expected the CSV header, step 0 and %d steps, got %d lines" % (r["steps"], len(rows)))
' "$o/blowup.json" "$o/blowup.csv" \
  || fail "cli_scene: the checks above failed"

echo "PASS: cli_scene"
