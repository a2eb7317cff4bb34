#!/usr/bin/env bash
# SIGINT during a run: exits 0 within 10 s, writing the best packing so far
# (stopped_by "signal", legal), and leaves no temporary file behind.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
jbg s circles --n 30 --device cpu --time 120 --out "$d/s.json" --quiet
sleep 4
kill -0 "$BG_PID" 2>/dev/null || { wait "$BG_PID"; RC=$?; fail "jostle $CMD: exited (status $RC) before SIGINT, expected it to run 120 s"; }
kill -INT "$BG_PID"
jwait 10
took=$TOOK
[ "$RC" -eq 0 ] || fail "jostle $CMD: expected exit status 0 after SIGINT, got $RC (after $took s)"

[ -s "$d/s.json" ] || fail "jostle $CMD: expected $d/s.json after SIGINT, not written"
check_result "$d/s.json" 30
stop=$(json_get "$d/s.json" 'd["run"]["stopped_by"]') || exit 1
[ "$stop" = "'signal'" ] || fail "jostle $CMD: expected run.stopped_by == \"signal\", got $stop"

left=$(cd "$d" && ls -A | grep -v -x -e s.json -e s.svg -e s.txt)
[ -z "$left" ] || fail "jostle $CMD: expected only s.json, s.svg, s.txt in the output folder, found also: $left"

jrun verify verify "$d/s.json"
expect_rc 0

echo "PASS: cli_sigint (exit $took s after SIGINT)"
