#!/usr/bin/env bash
# version, --help, circles --help, unknown subcommand, bench relax's repeated launches.
. "$(dirname "$0")/common.sh"

ver=$(sed -n "s/^[[:space:]]*version:[[:space:]]*'\([^']*\)'.*/\1/p" "$SRC/meson.build" | head -n 1)
[ -n "$ver" ] || ver=0.1.0

jrun version version
expect_rc 0
first=$(head -n 1 "$W/version.out")
case $first in
  "jostle $ver" | "jostle $ver "*) ;;
  *) fail "jostle version: expected first line 'jostle $ver', got '$first'" ;;
esac

jrun help --help
expect_rc 0
for word in circles verify version; do
  grep -qw -- "$word" "$W/help.out" || fail "jostle --help: expected stdout to list '$word'"
done

jrun circles_help circles --help
expect_rc 0
grep -q -- '--seed' "$W/circles_help.out" || fail "jostle circles --help: expected stdout to mention --seed"

jrun unknown frobnicate
expect_rc 2
expect_err 'frobnicate' "the unknown subcommand 'frobnicate'"

# bench relax: 3 timed launches of 4 candidates x 50 steps; the median launch
# is reported between the fastest and the slowest, with the work of one launch
jrun bench_relax bench relax --n 8 --batch 4 --steps 50 --device cpu --threads 1 --repeat 3
expect_rc 0
jpy '
import json
r = json.loads(open(sys.argv[1]).read())
if (r["steps"], r["repeats"], r["batch"]) != (200, 3, 4):
    fail("bench relax: expected 200 steps per launch, 3 repeats, batch 4: %r" % r)
if not (0 < r["seconds_min"] <= r["seconds"] <= r["seconds_max"]):
    fail("bench relax: expected seconds_min <= seconds (median) <= seconds_max: %r" % r)
if abs(r["steps_per_s"] * r["seconds"] - r["steps"]) > 1e-3 * r["steps"]:
    fail("bench relax: expected steps_per_s = steps / seconds: %r" % r)
' "$W/bench_relax.out" || fail "bench relax output checks"

jrun bench_repeat0 bench relax --n 8 --repeat 0 --device cpu
expect_rc 2
expect_err '--repeat' "the option --repeat and its range"

echo "PASS: cli_basics"
