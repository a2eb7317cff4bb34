#!/usr/bin/env bash
# gpu suite: jostle scene --device cuda writes every output the CPU path writes
# (result JSON naming the device, per-step CSV, glb trajectory, FCLib problem) and
# agrees with the CPU path while the bodies fall freely. Exit 77 (skip) without a
# CUDA device or a CUDA build.
. "$(dirname "$0")/common.sh"

o=$W/o
mkdir -p "$o"
SC=$SRC/problems/scenes

jrun probe scene "$SC/demo-drop.json" --steps 1 --device cuda --out "$o/probe.json" --quiet
if [ "$RC" -eq 4 ] && grep -Eq 'no CUDA device|built without CUDA' "$W/probe.err"; then
  echo "no CUDA device: skipped"
  exit 77
fi
expect_rc 0
rm -f "$o/probe.json"

jrun gpu scene "$SC/demo-drop.json" --steps 200 --device cuda --out "$o/gpu.json" \
  --csv "$o/gpu.csv" --glb "$o/gpu.glb" --quiet
expect_rc 0
jrun cpu scene "$SC/demo-drop.json" --steps 200 --device cpu --threads 2 --out "$o/cpu.json" \
  --csv "$o/cpu.csv" --quiet
expect_rc 0
head -c 4 "$o/gpu.glb" | grep -q glTF || fail "jostle $CMD: $o/gpu.glb does not start with glTF"
# FCLib export of a device step (or, in a build without FCLib, the message saying so)
jrun fclib scene "$SC/demo-drop.json" --steps 160 --device cuda --out "$o/fc.json" \
  --fclib "$o/gpu.hdf5" --fclib-step 150 --quiet
if grep -q "built without FCLib" "$W/fclib.err"; then
  [ ! -e "$o/gpu.hdf5" ] || fail "jostle $CMD: wrote $o/gpu.hdf5 without FCLib"
else
  expect_rc 0
  grep -q "gpu.hdf5 (step 150)" "$W/fclib.out" || fail "jostle $CMD: expected 'gpu.hdf5 (step 150)'"
  [ "$(head -c 4 "$o/gpu.hdf5" | od -An -tx1 | tr -d ' ')" = "89484446" ] \
    || fail "jostle $CMD: $o/gpu.hdf5 is not an HDF5 file"
fi
jpy '
import csv, math
g, c = load(sys.argv[1]), load(sys.argv[2])
if g["run"]["device_kind"] != "cuda" or c["run"]["device_kind"] != "cpu":
    fail("device_kind: expected cuda and cpu, got %r and %r" % (g["run"]["device_kind"], c["run"]["device_kind"]))
if g["run"]["steps"] != 200 or len(g["bodies"]) != 22:
    fail("expected 200 steps and 22 bodies, got %r" % g["run"])
if not isinstance(g["summary"]["residual_max"], (int, float)) or not math.isfinite(g["summary"]["residual_max"]):
    fail("expected a finite residual_max on the device, got %r" % g["summary"]["residual_max"])
gr = list(csv.reader(open(sys.argv[3])))
cr = list(csv.reader(open(sys.argv[4])))
if gr[0] != cr[0] or len(gr) != len(cr) or len(gr) != 202:
    fail("CSV: expected the CPU header and 201 rows, got %r, %d rows" % (gr[0], len(gr) - 1))
if not all(math.isfinite(float(r[6])) and float(r[6]) >= 0 for r in gr[2:]):
    fail("expected a finite residual in every device row")
# free fall (no contacts on either path): the same energies to round-off
n = 0
for a, b in zip(gr[1:], cr[1:]):
    if int(a[4]) or int(b[4]):
        break
    n += 1
    for k in (2, 3):
        x, y = float(a[k]), float(b[k])
        if abs(x - y) > 1e-12 * max(abs(x), abs(y), 1.0):
            fail("step %s column %s: device %r, CPU %r" % (a[0], gr[0][k], x, y))
if n < 5:
    fail("expected some free-fall steps, got %d" % n)
if max(int(r[4]) for r in gr[1:]) == 0:
    fail("expected contacts on the device")
' "$o/gpu.json" "$o/cpu.json" "$o/gpu.csv" "$o/cpu.csv" \
  || fail "gpu_scene_cli: the checks above failed"

# bench scene --marks: the step's launch groups timed by events; they cover the
# step from its first launch to its end copy, so they add up to no more than the
# step's wall time and to most of it (the stage syncs and the host's last work
# lie outside). With a new pair list every step (--pair-skin 0) the broad phase
# runs each step; by default the wall, at rest, keeps the first step's list
# and checks it instead, counting its contacts in the same copy
for skin in 0 default; do
  if [ "$skin" = 0 ]; then
    jrun marks bench scene "$SC/tasora-wall-1000.json" --solver jor --steps 4 --marks --pair-skin 0
  else
    jrun marks bench scene "$SC/tasora-wall-1000.json" --solver jor --steps 4 --marks
  fi
  expect_rc 0
  jpy '
d = json.loads(open(sys.argv[1]).read())
kept = sys.argv[2] != "0"
m = d["marks_ms_per_step"]
pairs = "pairs: kept check, narrow count" if kept else "broad: head copy"
want = ["half step, free velocity", pairs, "narrow: write",
        "max penetration", "setup: contacts", "warm start", "solve", "memory", "end copy"]
if not kept:
    want.append("pairs: sort")
missing = [k for k in want if k not in m]
if missing or any(not (v >= 0) for v in m.values()):
    fail("marks: expected %r among non-negative marks, got %r" % (missing, m))
if kept and ("broad: head copy" in m or d["pair_lists"] != 0):
    fail("marks: expected the pair list of the first step kept, got %r, %d lists" % (m, d["pair_lists"]))
if not kept and d["pair_lists"] != 4:
    fail("marks: expected a new pair list every step, got %d" % d["pair_lists"])
names = list(m)
if names.index(pairs) > names.index("narrow: write") or names.index("solve") > names.index("end copy"):
    fail("marks: expected launch order, got %r" % names)
total, wall = sum(m.values()), d["ms_per_step"]
if not 0.5 * wall <= total <= 1.02 * wall:
    fail("marks: expected them to add up to most of the step (%.4g ms), got %.4g" % (wall, total))
' "$W/marks.out" "$skin" \
    || fail "gpu_scene_cli: the checks above failed"
done

# scripts/bench-scenes --marks prints that split as a table per scene
"$PY" "$SRC/scripts/bench-scenes" --jostle "$JOSTLE" --scenes tasora-wall-1000 --solver jor \
  --steps 2 --marks > "$W/bm.out" 2> "$W/bm.err" || fail "bench-scenes --marks failed: $(cat "$W/bm.err")"
grep -Eq '^\| solve \| [0-9.]+ \| [0-9.]+% \|$' "$W/bm.out" && grep -q 'narrow: write' "$W/bm.out" \
  || fail "bench-scenes --marks: expected a table of marks with the solve, got: $(cat "$W/bm.out")"

echo "PASS: gpu_scene_cli"
