#!/usr/bin/env bash
# jostle trunk stops on --time and on SIGINT in every phase (grid baseline, layered
# fill, gap fill, annealing) and still writes a legal packing: a --time 1 run on the sedan (whose
# grid baseline and layered fill take about 5 s on 2 cores) finishes, and SIGINT at 1 s and at 4 s
# of a --time 600 run ends it. The time bounds here are generous "it finished"
# limits (a run that ignored the limits would take 600 s or hours).
# A mesh that could hold more than --max-blocks blocks (a units mistake: a 1 km
# trunk) is refused before any work, naming its size; a trunk of 190,000 blocks
# (--max-blocks raised) still stops on --time and on SIGINT within seconds.
# A run whose fills were cut short says so (fills_complete false, a notice,
# the views' title):
# its count is what they reached, not the trunk's volume.
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
ran = [f for f in r["fills"]["frames"] if f["ran"]]
cut = (not ran or not all(f["complete"] for f in ran)) and d["count"] < d["upper_bound"]
if d.get("fills_complete") is not (not cut):
    fail("expected fills_complete %r (frames %r, %r of %r blocks), got %r"
         % (not cut, [(f["frame"], f["complete"]) for f in ran], d["count"], d["upper_bound"],
            d.get("fills_complete")))
' "$1" "$2" || fail "$1 failed the checks above"
}

# fills_cut NAME BY: the run's fills were cut short, and its notice names BY
fills_cut() {
  jpy '
if load(sys.argv[1]).get("fills_complete") is not False:
    fail("expected fills_complete false")
' "$d/$1.json" || fail "$1: the fills ended within the limit (the test assumes they cannot)"
  grep -Eq -- "sedan: $2 cut the fills short: [0-9]+ blocks is what they reached, not the trunk's volume" "$W/$1.err" ||
    fail "$1: expected the notice 'sedan: $2 cut the fills short: ...' on stderr"
  grep -q 'fills cut short, not the volume' "$d/$1.svg" || fail "$1: expected the views' title to say the fills were cut short"
}

JL_TIMEOUT=90 jrun t1 trunk "$prob" --device cpu --threads 2 --time 1 --out "$d/t1.json" --quiet
expect_rc 0
check_trunk "$d/t1.json" time
fills_cut t1 "--time 1"
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
fills_cut s1 "the stop signal"
sigint_run s4 4

# Too large: refused at once with the mesh's size and a hint at --units, nothing written.
cuboid=$SRC/meshes/cuboid-1000x500x400.stl
JL_TIMEOUT=30 jrun km trunk "$cuboid" --units m --time 10 --device cpu --out "$d/km.json"
expect_rc 2
expect_err 'cuboid-1000x500x400\.stl: the mesh measures 1e\+06 x 500000 x 400000 mm \(bounding box\) and 2e\+11 L read in m' "the mesh size"
expect_err 'more than 100000 \(--max-blocks\)' "the limit"
expect_err 'give its unit with --units' "the --units hint"
[ ! -e "$d/km.json" ] || fail "jostle $CMD: wrote $d/km.json"
JL_TIMEOUT=30 jrun b1 trunk "$cuboid" --block 1x1x1 --time 10 --device cpu --out "$d/b1.json"
expect_rc 2
expect_err 'its volume could hold 2e\+08 blocks of 1x1x1 mm, more than 100000' "the block count"
[ ! -e "$d/b1.json" ] || fail "jostle $CMD: wrote $d/b1.json"
# a 10 m cube (in mm)
jpy '
a = 10000.0
tris = [((0,2,3),), ((0,3,1),), ((4,5,7),), ((4,7,6),), ((0,1,5),), ((0,5,4),),
        ((2,6,7),), ((2,7,3),), ((0,4,6),), ((0,6,2),), ((1,3,7),), ((1,7,5),)]
with open(sys.argv[1], "w") as f:
    f.write("solid cube\n")
    for (t,) in tris:
        f.write(" facet normal 0 0 0\n  outer loop\n")
        for k in t:
            f.write("   vertex %g %g %g\n" % (a if k & 1 else 0, a if k & 2 else 0, a if k & 4 else 0))
        f.write("  endloop\n endfacet\n")
    f.write("endsolid cube\n")
' "$W/cube10m.stl" || fail "cannot write the 10 m cube"
JL_TIMEOUT=30 jrun c10 trunk "$W/cube10m.stl" --time 10 --device cpu --out "$d/c10.json"
expect_rc 2
expect_err 'the mesh measures 10000 x 10000 x 10000 mm \(bounding box\) and 1e\+06 L read in mm' "the cube's size"
[ ! -e "$d/c10.json" ] || fail "jostle $CMD: wrote $d/c10.json"
jrun mb0 trunk "$cuboid" --max-blocks 0
expect_rc 2
expect_err '--max-blocks: must be between 1 and' "the --max-blocks range"

# --max-blocks raises the limit: 190,000 blocks (the cuboid read in cm; 210 mm
# blocks, so no lattice reaches the volume bound). A lattice of the grid
# baseline takes up to seconds, and the final check and the outputs of that
# many blocks a few seconds on 2 loaded cores; --time 2 and SIGINT after 1 s
# still end the run within seconds, not hours, with a legal result (the tight
# bounds of the fills themselves are test_trunk's test_fills_stop_within_lattice;
# a sanitized debug build gets `slow` times these).
big=(trunk "$cuboid" --units cm --block 210x100x50 --max-blocks 250000 --device cpu --threads 2 --quiet)
jbg big "${big[@]}" --time 2 --out "$d/big.json"
jwait $((30 * slow))
expect_rc 0
check_trunk "$d/big.json" time
echo "190,000 blocks, --time 2: exit after $TOOK s"
jbg bigint "${big[@]}" --time 600 --out "$d/bigint.json"
sleep 1
kill -0 "$BG_PID" 2>/dev/null || { wait "$BG_PID"; RC=$?; fail "jostle $CMD: exited (status $RC) before SIGINT"; }
kill -INT "$BG_PID"
jwait $((25 * slow))
expect_rc 0
check_trunk "$d/bigint.json" signal
echo "190,000 blocks, SIGINT at 1 s: exit $TOOK s after it"

echo "PASS: cli_trunk_limits"
