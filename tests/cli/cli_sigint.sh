#!/usr/bin/env bash
# SIGINT during a run: exits 0 within 10 s, writing the best packing so far
# (stopped_by "signal", legal), and leaves no temporary file behind.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
LAST=s
CMD="circles --n 30 --device cpu --time 120 --out $d/s.json --quiet"
# Background jobs of a non-interactive shell start with SIGINT ignored: exec jostle
# through python with SIGINT back at its default, as from a terminal.
"$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' \
  "$JOSTLE" circles --n 30 --device cpu --time 120 --out "$d/s.json" --quiet \
  >"$W/s.out" 2>"$W/s.err" </dev/null &
pid=$!
BG_PIDS+=("$pid")

sleep 4
kill -0 "$pid" 2>/dev/null || { wait "$pid"; RC=$?; fail "jostle $CMD: exited (status $RC) before SIGINT, expected it to run 120 s"; }
kill -INT "$pid"
start=$(date +%s.%N)
for _ in $(seq 100); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  kill -KILL "$pid" 2>/dev/null
  fail "jostle $CMD: expected exit within 10 s of SIGINT, still running"
fi
RC=0
wait "$pid" || RC=$?
BG_PIDS=()
took=$(jpy 'import time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$start")
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
