#!/usr/bin/env bash
# n = 5, 6, 7 on the CPU reach the published record (to 1e-6) within 20 s each,
# with a legal packing, .svg and .txt beside the JSON, and verify agreeing.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
for n in 5 6 7; do
  prob=$SRC/problems/circles/zimmermann-0$n.json
  best=$(json_get "$prob" 'd["best_known_R"]') || exit 1
  target=$(jpy 'print(repr(float(sys.argv[1]) * (1 + 1e-9)))' "$best") || fail "bad best_known_R '$best'"

  jrun "z$n" circles --n "$n" --device cpu --seed 1 --time 20 --target "$target" --out "$d/z$n.json" --quiet
  expect_rc 0
  [ -s "$d/z$n.json" ] || fail "jostle $CMD: expected $d/z$n.json, not written"
  check_result "$d/z$n.json" "$n"
  jpy '
path, n, best = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
d = load(path)
R = d["R"]
if R > best * (1 + 1e-6):
    fail("n=%d: expected R <= best_known_R*(1+1e-6) = %.12g, got R = %.12g" % (n, best * (1 + 1e-6), R))
rs = sorted(c["r"] for c in d["circles"])
if rs != list(range(1, n + 1)):
    fail("n=%d: expected radii 1..%d, got %r" % (n, n, rs))
if d.get("problem", {}).get("n") != n:
    fail("n=%d: expected problem.n == %d, got %r" % (n, n, d.get("problem", {}).get("n")))
' "$d/z$n.json" "$n" "$best" || fail "jostle $CMD: result checks failed"

  [ -s "$d/z$n.svg" ] || fail "jostle $CMD: expected $d/z$n.svg beside the JSON"
  [ -s "$d/z$n.txt" ] || fail "jostle $CMD: expected $d/z$n.txt beside the JSON"
  jpy '
path, n = sys.argv[1], int(sys.argv[2])
rows = []
for line in open(path):
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    if len(f) != 3:
        fail("%s: expected lines \"k x y\", got %r" % (path, line))
    rows.append((int(f[0]), float(f[1]), float(f[2])))
if [k for k, _, _ in rows] != list(range(1, n + 1)):
    fail("%s: expected lines numbered 1..%d, got %r" % (path, n, [k for k, _, _ in rows]))
for k, x, y in rows:
    if math.hypot(x, y) > 1 + 1e-9:
        fail("%s: circle %d centre outside the unit container" % (path, k))
' "$d/z$n.txt" "$n" || fail "jostle $CMD: Packomania text checks failed"

  jrun "v$n" verify "$d/z$n.json"
  expect_rc 0
  grep -q 'legal' "$W/v$n.out" "$W/v$n.err" || fail "jostle $CMD: expected a line containing 'legal'"
  if grep -q 'NOT legal' "$W/v$n.out" "$W/v$n.err"; then fail "jostle $CMD: said NOT legal"; fi
done

echo "PASS: cli_circles_record"
