#!/usr/bin/env bash
# The same --seed with --rounds gives the same packing (circles and R);
# another seed gives another packing. A crowded elite (--crowding) keeps
# the best packing first and its members apart by at least the distance;
# --walk-k, --tenure, --walk-reset, --stuck and --probe reach the run's record.
# --stuck-behind restarts only candidates whose record lies above the median,
# and --behind-adopt sets how many of those adopt. The result reports the
# population at the end (candidates, records near the best, the median gap).
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
export JL_TIMEOUT=170
common=(--n 12 --device cpu --threads 2 --rounds 3 --time 150 --quiet)

for run in a:7 b:7 c:8 e:7 f:7; do
  name=${run%%:*} seed=${run#*:}
  args=("${common[@]}")
  # n = 20 leaves several families to keep after 3 rounds, n = 12 one
  [ "$name" = e ] && args=(--n 20 "${common[@]:2}" --elite 6 --crowding 0.05 --walk-k 12 --tenure 6 \
    --walk-reset 80 --probe off)
  # adopters spread over the elite by how many candidates are near each
  # member; a low stuck limit makes candidates restart within the 3 rounds
  [ "$name" = f ] && args=(--n 20 "${common[@]:2}" --elite 6 --crowding 0.05 --walk-k 12 --tenure 6 \
    --adopt-by spread --stuck 4)
  jrun "$name" circles "${args[@]}" --seed "$seed" --out "$d/$name.json"
  expect_rc 0
  check_result "$d/$name.json" "$(case $name in e|f) echo 20 ;; *) echo 12 ;; esac)"
  stop=$(json_get "$d/$name.json" 'd["run"]["stopped_by"]') || exit 1
  [ "$stop" = "'rounds'" ] || fail "jostle $CMD: expected run.stopped_by == \"rounds\", got $stop"
done

# the elite's defaults follow the population: from 256 candidates (a GPU's
# batch) 8 members one per shape family 0.02 apart
jrun g circles --n 8 --device cpu --threads 2 --rounds 1 --time 60 --quiet --batch 256 \
  --seed 7 --out "$d/g.json"
expect_rc 0
got=$(json_get "$d/g.json" '(d["run"]["elite"], d["run"]["crowding"])') || exit 1
[ "$got" = "(8, 0.02)" ] || fail "jostle $CMD: expected elite 8 and crowding 0.02 from 256 candidates, got $got"

# --stuck-behind 1 with no other restart due: after each of the first two
# rounds at most the 8 of 16 candidates whose record lies above the median
# restart (the last round's restarts never happen: the run stops first);
# with --behind-adopt 0 none of them adopts, with 1 every one
for ba in 0 1; do
  jrun h$ba circles --n 20 "${common[@]:2}" --stuck 1000000 --stuck-behind 1 --behind-adopt $ba \
    --seed 7 --out "$d/h$ba.json"
  expect_rc 0
  got=$(json_get "$d/h$ba.json" '(d["run"]["stuck"], d["run"]["stuck_behind"], 0 < d["run"]["restarts"] <= 16, d["run"]["adoptions"] == '$ba' * d["run"]["restarts"], d["run"]["restarts"])') || exit 1
  case $got in
    "(1000000, 1, True, True, "*) ;;
    *) fail "jostle $CMD: --behind-adopt $ba: expected stuck 1000000, stuck_behind 1, 1..16 restarts (half of 16 candidates in each of 2 rounds) and $ba x restarts adoptions, got $got" ;;
  esac
done
got=$(json_get "$d/a.json" '(d["run"]["stuck"], d["run"]["stuck_behind"])') || exit 1
[ "$got" = "(120, 120)" ] || fail "jostle $CMD: expected stuck_behind as stuck by default, got $got"

jpy '
a, b, c = (load(p) for p in sys.argv[1:4])
if a["circles"] != b["circles"] or a["R"] != b["R"]:
    diff = [i for i, (p, q) in enumerate(zip(a["circles"], b["circles"])) if p != q]
    fail("same seed 7: expected identical circles and R, got R %r vs %r, circles differing at %r"
         % (a["R"], b["R"], diff))
if a["circles"] == c["circles"]:
    fail("seeds 7 and 8: expected different packings, got identical circles")
# the defaults (run a: 16 candidates on 2 threads, so the 4 best distinct R;
# below 20 circles shallow walks: reset 50, stuck max(100, 10 n)) and the
# options (run e; for 20..63 circles a stuck limit of 4000 by default); at
# n = 20 three rounds leave several families
for name, d, K, D, WK, T, WR, ST, least in (("a", a, 4, 0.0, 8, 4, 50, 120, 1),
                                            ("e", load(sys.argv[4]), 6, 0.05, 12, 6, 80, 4000, 2)):
    r = d["run"]
    if (r["elite"] != K or r["crowding"] != D or r["walk_k"] != WK or r["tenure"] != T
            or r["walk_reset"] != WR or r["stuck"] != ST):
        fail("run %s: expected elite %d, crowding %g, walk_k %d, tenure %d, walk_reset %d, stuck %d, got %r, %r, %r, %r, %r, %r"
             % (name, K, D, WK, T, WR, ST, r["elite"], r["crowding"], r["walk_k"], r["tenure"], r["walk_reset"],
                r["stuck"]))
    el, sp = r["elite_R"], r["elite_spread"]
    if not least <= len(el) <= K or len(sp) != len(el) or el != sorted(el) or el[0] != d["R"] or sp[0] != 0:
        fail("run %s: expected up to %d elite R ascending from R %r, spreads from 0, got %r, %r"
             % (name, K, d["R"], el, sp))
    if any(s < D for s in sp[1:]) or r["adoptions"] > r["restarts"]:
        fail("run %s: expected members at least %g apart and adoptions <= restarts, got %r, %r of %r"
             % (name, D, sp, r["adoptions"], r["restarts"]))
f = load(sys.argv[5])["run"]
if f["walk_reset"] != 400 or f["stuck"] != 4:
    fail("run f (n = 20, --stuck 4): expected walk_reset 400 (deep walks) and stuck 4, got %r and %r"
         % (f["walk_reset"], f["stuck"]))
if a["run"]["adopt_by"] != "uniform" or f["adopt_by"] != "spread":
    fail("adopt_by: expected uniform (default) and spread, got %r and %r" % (a["run"]["adopt_by"], f["adopt_by"]))
if a["run"]["probe"] != "keep" or load(sys.argv[4])["run"]["probe"] != "off":
    fail("probe: expected keep (default) and off, got %r and %r" % (a["run"]["probe"], load(sys.argv[4])["run"]["probe"]))
if not 0 < f["adoptions"] <= f["restarts"]:
    fail("run f (--adopt-by spread --stuck 4): expected adoptions, at most the restarts, got %r of %r"
         % (f["adoptions"], f["restarts"]))
# the population at the end: after 3 rounds all 16 candidates hold a record
# (the last round'"'"'s restarts never happen); the median is the 8th of 16, so it
# lies within 1e-4 of the best exactly when 8 or more records do
for name, r in (("a", a["run"]), ("f", f)):
    p = r["population"]
    if p["candidates"] != 16 or not 0 <= p["near_best"] <= 16 or not p["median_gap"] > -1e-6:
        fail("run %s: expected 16 candidates, 0..16 near the best and a median gap >= 0, got %r" % (name, p))
    if (p["near_best"] >= 8) != (p["median_gap"] <= 1e-4):
        fail("run %s: %d of 16 near the best but a median gap of %r" % (name, p["near_best"], p["median_gap"]))
' "$d/a.json" "$d/b.json" "$d/c.json" "$d/e.json" "$d/f.json" || fail "seed reproducibility checks failed"

echo "PASS: cli_seed_repro"
