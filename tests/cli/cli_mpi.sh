#!/usr/bin/env bash
# Islands over MPI ranks on the CPU path (mpirun --oversubscribe -np 2): both
# ranks search with their own seeds, migrations happen, rank 0 writes a legal
# result holding the best of both, the same seed gives the same packing, and
# SIGINT to one rank stops the run with the outputs written.
# Run with MPIRUN set (tests/meson.build does it when Open MPI is found).
. "$(dirname "$0")/common.sh"

MPIRUN=${MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# under ASan (scripts/test --sanitize) memory errors are still caught, but not
# leaks: Open MPI keeps allocations until exit in plugins it unloads, which
# LeakSanitizer can neither name nor suppress
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# no network in CI: shared memory and loopback only
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none


mrun() {
  LAST=$1
  shift
  CMD="(mpirun -np 2) $*"
  RC=0
  timeout -k 10 $((${JL_TIMEOUT:-180} * slow)) "$MPIRUN" --oversubscribe -np 2 "$JOSTLE" "$@" \
    >"$W/$LAST.out" 2>"$W/$LAST.err" </dev/null || RC=$?
}

d=$W/o
mkdir -p "$d"
args=(circles --n 16 --rounds 6 --migrate 2 --threads 1 --batch 4 --quiet)
mrun a "${args[@]}" --out "$d/a.json"
expect_rc 0
check_result "$d/a.json" 16
jpy '
d = load(sys.argv[1])["run"]
if d.get("ranks") != 2: fail("expected run.ranks == 2, got %r" % d.get("ranks"))
# rounds 2, 4 and 6: three migrations
if d.get("migrations") != 3: fail("expected 3 migrations (every 2 of 6 rounds), got %r" % d.get("migrations"))
isl = d.get("islands")
if not isinstance(isl, list) or len(isl) != 2: fail("expected run.islands with 2 ranks, got %r" % isl)
if [r["rank"] for r in isl] != [0, 1]: fail("expected ranks 0 and 1, got %r" % isl)
if isl[0]["seed"] != 1 or isl[1]["seed"] == 1: fail("expected rank 0 on seed 1 and rank 1 on its own seed, got %r" % [r["seed"] for r in isl])
for r in isl:
    if r["trials"] <= 0 or r["relax_steps"] <= 0: fail("rank %d did not search: %r" % (r["rank"], r))
    if r["device"] != "cpu" or r["cuda_device"] != -1: fail("rank %d: expected the CPU, got %r" % (r["rank"], r))
    if r["failed"]: fail("rank %d failed: %r" % (r["rank"], r))
    if r["host_threads"] != 1 or r["cpus"] < 1: fail("rank %d: expected 1 host thread (--threads 1), got %r" % (r["rank"], r))
if d["trials"] != isl[0]["trials"] + isl[1]["trials"]: fail("run.trials is not the sum of the ranks")
R = load(sys.argv[1])["R"]
if R > min(r["best_R"] for r in isl) * (1 + 1e-12): fail("rank 0 wrote R %r, a rank held %r" % (R, min(r["best_R"] for r in isl)))
' "$d/a.json" || fail "jostle $CMD: run facts (above)"
grep -q "2 ranks (3 migrations)" "$W/a.out" || fail "jostle $CMD: expected the summary to name 2 ranks and 3 migrations"
jrun va verify "$d/a.json"
expect_rc 0

# another command under the launcher refuses instead of running twice
mrun v verify "$d/a.json"
[ "$RC" -ne 0 ] || fail "jostle $CMD: expected a refusal under mpirun -np 2"
expect_err "verify: started by an MPI launcher with 2 ranks; only circles and trunk" "the refusal"

# a rank the launcher binds to fewer CPUs than its share of the node runs
# that many threads and says how to give it its share (here: one rank,
# bound to CPU 0 by taskset, on a node of 2 or more CPUs)
if [ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ]; then
  command -v taskset >/dev/null || fail "taskset (util-linux) is missing"
  LAST=bind
  CMD="(taskset -c 0 mpirun -np 1) circles --n 8 --rounds 1"
  RC=0
  timeout -k 10 $((60 * slow)) taskset -c 0 "$MPIRUN" --bind-to none -np 1 "$JOSTLE" circles --n 8 --rounds 1 \
    --out "$d/bind.json" >"$W/bind.out" 2>"$W/bind.err" </dev/null || RC=$?
  expect_rc 0
  expect_err "the MPI launcher bound this rank to 1 of the node's" "the binding note"
  grep -q "CPU, 1 thread," "$W/bind.err" || fail "jostle $CMD: expected 1 host thread in the first line"
fi

# the same seed, the same packing
mrun b "${args[@]}" --out "$d/b.json"
expect_rc 0
jpy '
a, b = load(sys.argv[1]), load(sys.argv[2])
if a["circles"] != b["circles"] or a["run"]["trials"] != b["run"]["trials"]:
    fail("two runs of seed 1 differ: R %r vs %r, trials %r vs %r" % (a["R"], b["R"], a["run"]["trials"], b["run"]["trials"]))
' "$d/a.json" "$d/b.json" || fail "jostle $CMD: not reproducible"

# SIGINT to rank 1 alone: every rank stops within a migration and a launch,
# rank 0 writes the best packing
LAST=s
CMD="(mpirun -np 2) circles --n 20 --time 120"
"$MPIRUN" --oversubscribe -np 2 "$JOSTLE" circles --n 20 --time 120 --threads 1 --migrate 2 \
  --quiet --out "$d/s.json" >"$W/s.out" 2>"$W/s.err" </dev/null &
mpid=$!
BG_PIDS+=("$mpid")
rank1=""
for _ in $(seq 1 100); do
  sleep 0.2
  for p in $(pgrep -P "$mpid" 2>/dev/null); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then rank1=$p; fi
  done
  [ -n "$rank1" ] && break
done
[ -n "$rank1" ] || fail "could not find rank 1 among mpirun's children"
sleep 4
kill -INT "$rank1"
start=$(date +%s)
RC=0
for _ in $(seq 1 150); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$mpid" 2>/dev/null && fail "jostle $CMD: still running 15 s after SIGINT to rank 1"
wait "$mpid" || RC=$?
took=$(( $(date +%s) - start ))
expect_rc 0
[ -s "$d/s.json" ] || fail "jostle $CMD: expected $d/s.json after SIGINT to rank 1"
check_result "$d/s.json" 20
stop=$(json_get "$d/s.json" 'd["run"]["stopped_by"]') || exit 1
[ "$stop" = "'signal'" ] || fail "jostle $CMD: expected run.stopped_by == \"signal\", got $stop"
jrun vs verify "$d/s.json"
expect_rc 0

# a rank that fails (as on a device error) is reported; the other searches on
# and rank 0 writes its packing
JL_ISLANDS_FAIL_RANK=1 mrun f "${args[@]}" --out "$d/f.json"
[ "$RC" -ne 0 ] || fail "jostle $CMD: expected a non-zero status with rank 1 failed"
expect_err "rank 1 .*failure injected.*the other ranks go on" "the failed rank"
check_result "$d/f.json" 16
jpy '
isl = load(sys.argv[1])["run"]["islands"]
if isl[0]["failed"] or not isl[1]["failed"] or "injected" not in isl[1].get("error", ""):
    fail("expected rank 1 failed with its message, rank 0 not: %r" % isl)
if isl[0]["trials"] <= 0: fail("rank 0 did not search on")
' "$d/f.json" || fail "jostle $CMD: failed rank (above)"

# trunks: both ranks search the slanted seat back, migrate, rank 0 writes the
# largest legal packing; the cuboid is filled to its bound by the fills, so
# no rank searches and the ranks still end together
# (a sanitized debug build needs 5 times the time to reach the search)
mrun t trunk "$SRC/meshes/slanted-seat-back.stl" --time $((40 * slow)) --migrate 2 --threads 1 --quiet --out "$d/t.json"
expect_rc 0
jpy '
d = load(sys.argv[1]); run = d["run"]
if run.get("ranks") != 2 or run.get("migrations", 0) < 1: fail("expected 2 ranks and migrations, got %r, %r" % (run.get("ranks"), run.get("migrations")))
isl = run.get("islands")
if not isinstance(isl, list) or len(isl) != 2 or any(r["failed"] for r in isl): fail("expected 2 islands, none failed: %r" % isl)
if isl[0]["seed"] == isl[1]["seed"]: fail("both ranks ran seed %r" % isl[0]["seed"])
# (a sanitized debug build may spend the time before the first move ends)
if sys.argv[2] == "1" and any(r["moves"] <= 0 for r in isl): fail("a rank made no annealing move: %r" % isl)
if d["count"] != max(r["count"] for r in isl): fail("wrote %r blocks, the ranks held %r" % (d["count"], [r["count"] for r in isl]))
if d["count"] < 330: fail("expected at least the fills'"'"' 330 blocks, got %r" % d["count"])
'  "$d/t.json" "$slow" || fail "jostle $CMD: run facts (above)"
jrun vt verify "$d/t.json"
expect_rc 0
mrun c trunk "$SRC/meshes/cuboid-1000x500x400.stl" --time 20 --threads 1 --quiet --out "$d/c.json"
expect_rc 0
jpy '
d = load(sys.argv[1])
if d["count"] != 200 or d["run"]["ranks"] != 2: fail("cuboid: expected 200 blocks from 2 ranks, got %r, %r" % (d["count"], d["run"]["ranks"]))
' "$d/c.json" || fail "jostle $CMD: cuboid"

echo "PASS: cli_mpi (stopped $took s after SIGINT to rank 1)"
