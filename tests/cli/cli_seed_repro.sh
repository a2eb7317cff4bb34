#!/usr/bin/env bash
# The same --seed with --rounds gives the same packing (circles and R);
# another seed gives another packing.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
export JL_TIMEOUT=170
common=(--n 12 --device cpu --threads 2 --rounds 3 --time 150 --quiet)

for run in a:7 b:7 c:8; do
  name=${run%%:*} seed=${run#*:}
  jrun "$name" circles "${common[@]}" --seed "$seed" --out "$d/$name.json"
  expect_rc 0
  check_result "$d/$name.json" 12
  stop=$(json_get "$d/$name.json" 'd["run"]["stopped_by"]') || exit 1
  [ "$stop" = "'rounds'" ] || fail "jostle $CMD: expected run.stopped_by == \"rounds\", got $stop"
done

jpy '
a, b, c = (load(p) for p in sys.argv[1:4])
if a["circles"] != b["circles"] or a["R"] != b["R"]:
    diff = [i for i, (p, q) in enumerate(zip(a["circles"], b["circles"])) if p != q]
    fail("same seed 7: expected identical circles and R, got R %r vs %r, circles differing at %r"
         % (a["R"], b["R"], diff))
if a["circles"] == c["circles"]:
    fail("seeds 7 and 8: expected different packings, got identical circles")
' "$d/a.json" "$d/b.json" "$d/c.json" || fail "seed reproducibility checks failed"

echo "PASS: cli_seed_repro"
