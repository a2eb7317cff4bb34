#!/usr/bin/env bash
# jostle trunk stops on --time and on SIGINT in every phase (grid baseline, layered
# fill, gap fill, annealing) and still writes a legal packing: a --time 1 run on the sedan (whose
# grid baseline and layered fill take about 5 s on 2 cores) finishes, and SIGINT at 1 s and at 4 s
# of a --time 600 run ends it. The only time bounds here are generous "it finished"
# limits (a run that ignored the limits would take 600 s); no timing is asserted.
. "$(dirname "$0")/common.sh"

d=$W/o
mkdir -p "$d"
prob=$SRC/problems/trunk/sedan.json

# check_trunk FILE STOPPED_BY: a legal trunk result that stopped for that reason.
check_trunk() {
  jpy '
d = load(sys.argv[1])
if d.get("kind") != "trunk" or d.get("legal") is not True:
    fail("expected a legal trunk result, got kind %r legal %r" % (d.get("kind"), d.get("legal")))
if not (0 <= d["count"] <= d["upper_bound"]) or len(d["blocks"]) != d["count"]:
    fail("count %r, %d blocks, bound %r" % (d["count"], len(d["blocks"]), d["upper_bound"]))
r = d["run"]
if r["stopped_by"] != sys.argv[2]:
    fail("expected run.stopped_by %r, got %r" % (sys.argv[2], r["stopped_by"]))
if not isinstance(r.get("baseline_complete"), bool):
    fail("expected a boolean run.baseline_complete, got %r" % r.get("baseline_complete"))
if r["baseline_complete"] and d["count"] < d["baseline_count"]:
    fail("count %r below the complete baseline %r" % (d["count"], d["baseline_count"]))
if not isinstance(r.get("layered_complete"), bool):
    fail("expected a boolean run.layered_complete, got %r" % r.get("layered_complete"))
if r["layered_complete"] and d["count"] < d["layered_count"]:
    fail("count %r below the complete layered fill %r" % (d["count"], d["layered_count"]))
' "$1" "$2" || fail "$1 failed the checks above"
}

JL_TIMEOUT=90 jrun t1 trunk "$prob" --device cpu --threads 2 --time 1 --out "$d/t1.json" --quiet
expect_rc 0
check_trunk "$d/t1.json" time
jrun verify_t1 verify "$d/t1.json"
expect_rc 0

# sigint_run NAME DELAY: SIGINT after DELAY s; exit 0 within 60 s of it.
sigint_run() {
  local name=$1 delay=$2
  LAST=$name
  CMD="trunk $prob --device cpu --threads 2 --time 600 --out $d/$name.json --quiet"
  # Background jobs of a non-interactive shell start with SIGINT ignored: exec
  # jostle through python with SIGINT back at its default, as from a terminal.
  "$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' \
    "$JOSTLE" trunk "$prob" --device cpu --threads 2 --time 600 --out "$d/$name.json" --quiet \
    >"$W/$name.out" 2>"$W/$name.err" </dev/null &
  local pid=$!
  BG_PIDS+=("$pid")
  sleep "$delay"
  kill -0 "$pid" 2>/dev/null || { wait "$pid"; RC=$?; fail "jostle $CMD: exited (status $RC) before SIGINT"; }
  kill -INT "$pid"
  for _ in $(seq 600); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null
    fail "jostle $CMD: still running 60 s after SIGINT"
  fi
  RC=0
  wait "$pid" || RC=$?
  BG_PIDS=()
  expect_rc 0
  check_trunk "$d/$name.json" signal
  jrun "verify_$name" verify "$d/$name.json"
  expect_rc 0
}

sigint_run s1 1
sigint_run s4 4

echo "PASS: cli_trunk_limits"
