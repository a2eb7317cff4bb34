#!/usr/bin/env bash
# Packomania text: written beside the result, verified with --n, and both the
# result JSON and the text resume a run without making R worse.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
export JL_TIMEOUT=170
opts=(--device cpu --seed 3 --time 150 --quiet)

jrun x circles --n 10 "${opts[@]}" --rounds 2 --out "$d/x.json"
expect_rc 0
check_result "$d/x.json" 10
[ -s "$d/x.txt" ] || fail "jostle $CMD: expected $d/x.txt beside x.json"

jrun verify_txt verify "$d/x.txt" --n 10
expect_rc 0
if grep -q 'NOT legal' "$W/verify_txt.out" "$W/verify_txt.err"; then fail "jostle $CMD: said NOT legal"; fi

jrun y circles --n 10 "${opts[@]}" --resume "$d/x.json" --rounds 1 --out "$d/y.json"
expect_rc 0
check_result "$d/y.json" 10
jpy '
x, y = load(sys.argv[1]), load(sys.argv[2])
if y["R"] > x["R"] * (1 + 1e-12):
    fail("--resume x.json: expected R(y) <= R(x)*(1+1e-12) = %r, got %r" % (x["R"] * (1 + 1e-12), y["R"]))
' "$d/x.json" "$d/y.json" || fail "jostle $CMD: resumed run made R worse"

# Text holds only centres (container radius 1): allow its rounding.
jrun z circles --n 10 "${opts[@]}" --resume "$d/x.txt" --rounds 1 --out "$d/z.json"
expect_rc 0
check_result "$d/z.json" 10
jpy '
x, z = load(sys.argv[1]), load(sys.argv[2])
if z["R"] > x["R"] * (1 + 1e-6):
    fail("--resume x.txt: expected R(z) <= R(x)*(1+1e-6) = %r, got %r" % (x["R"] * (1 + 1e-6), z["R"]))
' "$d/x.json" "$d/z.json" || fail "jostle $CMD: run resumed from text made R worse"

echo "PASS: cli_resume_txt"
