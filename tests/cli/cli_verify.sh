#!/usr/bin/env bash
# verify recomputes legality: a result edited to overlap (circle 0 moved onto
# circle 1) exits 1 with "NOT legal", though its JSON still says legal.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
jrun run circles --n 8 --device cpu --seed 1 --time 3 --out "$d/ok.json" --quiet
expect_rc 0
check_result "$d/ok.json" 8

jrun verify_ok verify "$d/ok.json"
expect_rc 0
grep -q 'legal' "$W/verify_ok.out" "$W/verify_ok.err" || fail "jostle $CMD: expected a line containing 'legal'"
if grep -q 'NOT legal' "$W/verify_ok.out" "$W/verify_ok.err"; then fail "jostle $CMD: said NOT legal"; fi

jpy '
d = load(sys.argv[1])
c = d["circles"]
c[0]["x"], c[0]["y"] = c[1]["x"], c[1]["y"]
with open(sys.argv[2], "w") as f:
    json.dump(d, f, indent=2)
' "$d/ok.json" "$d/bad.json" || fail "cannot write the overlapping packing"

jrun verify_bad verify "$d/bad.json"
expect_rc 1
grep -q 'NOT legal' "$W/verify_bad.out" "$W/verify_bad.err" || fail "jostle $CMD: expected 'NOT legal' in its output"

echo "PASS: cli_verify"
