#!/usr/bin/env bash
# scripts/bench-scenes end to end on tiny sizes (the GPU column's code runs on the CPU
# through --first-device, so the test means the same on any machine): the comparison
# table and the scaling table name both paths with a ratio, the scaling plot is a PNG,
# and problems/scenes/sphere-pile-1000000.json is what --write-pile writes.
. "$(dirname "$0")/common.sh"

B="$SRC/scripts/bench-scenes"
[ -x "$B" ] || fail "expected an executable $B"

"$PY" "$B" --jostle "$JOSTLE" --device cuda --first-device cpu --scenes poulsen-grid-8 --steps 2 \
  --threads 1 > "$W/cmp.out" 2> "$W/cmp.err" || fail "bench-scenes --device cuda failed: $(cat "$W/cmp.err")"
grep -q '^- command: ' "$W/cmp.out" && grep -q '^- date: ' "$W/cmp.out" && grep -q '^- device: GPU: ' "$W/cmp.out" \
  || fail "expected command, date and device lines: $(cat "$W/cmp.out")"
grep -Eq '^\| poulsen-grid-8 \| SOR \| 513 \| 2 \| 1408 \(1408\) \| [0-9.e+]+ \| [0-9.e+]+ \| [0-9.]+ \| 50 \(50\) \| 50 \(50\) \|' "$W/cmp.out" \
  || fail "expected a poulsen-grid-8 row with both paths and the ratio: $(cat "$W/cmp.out")"

# the thread counts, 1 added, each with its stages and the speed-up over 1 thread
"$PY" "$B" --jostle "$JOSTLE" --scenes poulsen-grid-8 --steps 2 --thread-scaling 2 --rounds 2 \
  > "$W/th.out" 2> "$W/th.err" || fail "bench-scenes --thread-scaling failed: $(cat "$W/th.err")"
grep -Eq '^\| poulsen-grid-8 \| [0-9]+ \| 1 \| [0-9.e+]+ \([0-9.e+]+-[0-9.e+]+\) \| 1\.00 \|' "$W/th.out" &&
  grep -Eq '^\| poulsen-grid-8 \| [0-9]+ \| 2 \| [0-9.e+]+ \([0-9.e+]+-[0-9.e+]+\) \| [0-9.]+ \|' "$W/th.out" \
  || fail "expected rows for 1 and 2 threads: $(cat "$W/th.out")"

"$PY" "$B" --jostle "$JOSTLE" --scaling --device cuda --first-device cpu --sizes 100,300 --steps 2 \
  --cpu-large 300 --cpu-large-steps 1 --threads 1 --png "$W/s.png" --data "$W/s.csv" \
  > "$W/sc.out" 2> "$W/sc.err" || fail "bench-scenes --scaling failed: $(cat "$W/sc.err")"
jpy '
import csv
rows = list(csv.DictReader(open(sys.argv[1])))
got = sorted((int(r["bodies"]), r["path"], int(r["steps"]), float(r["iterations_mean"])) for r in rows)
want = [(101, "cpu", 2, 50.0), (101, "gpu", 2, 50.0), (301, "cpu", 1, 50.0), (301, "gpu", 2, 50.0)]
if got != want:
    fail("scaling data: expected %r, got %r" % (want, got))
for r in rows:
    # the whole run splits into the first step and the steps after it
    n, whole, first = int(r["steps"]), float(r["ms_per_step"]), float(r["ms_first_step"])
    after = r["ms_per_step_after_first"]
    if n == 1:
        if after != "":
            fail("a one-step run has no steps after the first: %r" % r)
        after = 0.0
    else:
        after = float(after)
    if not (first > 0 and abs(first + (n - 1) * after - n * whole) <= 1e-3 * n * whole):
        fail("expected ms_first_step + (steps - 1) ms_per_step_after_first = steps ms_per_step: %r" % r)
if any(float(r["contacts_mean"]) < 2 * int(r["bodies"]) for r in rows):
    fail("expected the piles in contact from the first step (>= 2 contacts per sphere): %r" % rows)
d = open(sys.argv[2], "rb").read()
if d[:8] != b"\x89PNG\r\n\x1a\n":
    fail("%s: not a PNG" % sys.argv[2])
' "$W/s.csv" "$W/s.png" || fail "scaling output checks"
grep -Eq '^\| 101 \| [0-9.e+]+ \| [0-9.e+]+ \| [0-9.]+ \| [0-9.e+]+ \| [0-9.e+]+ \| [0-9.]+ \|$' "$W/sc.out" \
  || fail "expected the ratio table, whole runs and after the first step: $(cat "$W/sc.out")"
grep -Eq '^\| 301 \| [0-9.e+]+ \| [0-9.e+]+ \| [0-9.]+ \| - \| - \| - \|$' "$W/sc.out" \
  || fail "expected no steady ratio where the CPU ran one step: $(cat "$W/sc.out")"

"$PY" "$B" --write-pile 1000000 "$W/pile.json" || fail "bench-scenes --write-pile failed"
cmp -s "$W/pile.json" "$SRC/problems/scenes/sphere-pile-1000000.json" \
  || fail "problems/scenes/sphere-pile-1000000.json differs from what --write-pile 1000000 writes"

echo "PASS: cli_scene_bench"
