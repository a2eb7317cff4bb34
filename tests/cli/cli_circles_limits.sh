#!/usr/bin/env bash
# --time and SIGINT hold at every size: a search whose launches, walk steps
# and polish each outlast the time limit (n = 200 on the CPU) still stops
# within about a second of --time or of SIGINT, writing a legal packing.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"

# --time 3 at n = 200: ran over 220 s before launches were cut.
jbg t200 circles --n 200 --device cpu --threads 2 --time 3 --out "$d/t.json" --quiet
jwait 8
expect_rc 0
check_result "$d/t.json" 200
stop=$(json_get "$d/t.json" 'd["run"]["stopped_by"]') || exit 1
[ "$stop" = "'time'" ] || fail "jostle $CMD: expected run.stopped_by == \"time\", got $stop"
echo "n = 200, --time 3: exit after $TOOK s"

# SIGINT at n = 200, 3 s in: ignored for 200 s before.
jbg s200 circles --n 200 --device cpu --threads 2 --time 120 --out "$d/s.json" --quiet
sleep 3
kill -0 "$BG_PID" 2>/dev/null || { wait "$BG_PID"; RC=$?; fail "jostle $CMD: exited (status $RC) before SIGINT"; }
kill -INT "$BG_PID"
jwait 4
expect_rc 0
check_result "$d/s.json" 200
stop=$(json_get "$d/s.json" 'd["run"]["stopped_by"]') || exit 1
[ "$stop" = "'signal'" ] || fail "jostle $CMD: expected run.stopped_by == \"signal\", got $stop"
echo "n = 200, SIGINT: exit $TOOK s after it"

# Small instances: --time 2 ran up to 4.9 s on a loaded 2-core machine.
for n in 3 8; do
  jbg t$n circles --n $n --device cpu --threads 2 --time 2 --out "$d/n$n.json" --quiet
  jwait 4
  expect_rc 0
  check_result "$d/n$n.json" $n
  echo "n = $n, --time 2: exit after $TOOK s"
done

echo "PASS: cli_circles_limits"
