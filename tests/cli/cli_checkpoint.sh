#!/usr/bin/env bash
# Checkpoints: a run of 6 rounds and one of 3 rounds with --checkpoint, then
# --continue to round 6, end in the same packing, bit for bit, with the same
# trials, restarts, adoptions, crossovers and elite (n = 20, a low stuck
# limit and --cross so that restarts, adoptions and crossovers happen after
# the stop); a --time run's checkpoint
# goes on with --time counting from the first run's start; bad checkpoints
# and options that --continue takes from the file exit 2 naming the reason,
# writing nothing.
. "$(dirname "$0")/common.sh"

o=$W/o
mkdir -p "$o"
common=(--n 20 --device cpu --threads 2 --stuck 10 --cross 0.3 --quiet)

jrun whole circles "${common[@]}" --seed 5 --rounds 6 --out "$W/whole.json"
expect_rc 0
jrun first circles "${common[@]}" --seed 5 --rounds 3 --checkpoint "$W/ck.bin" --out "$W/first.json"
expect_rc 0
[ -s "$W/ck.bin" ] || fail "--checkpoint: expected $W/ck.bin written"
ls "$W" | grep -q 'ck.bin.tmp' && fail "--checkpoint: a temporary file was left"
# the file the run goes on from is also the one it rewrites
cp "$W/ck.bin" "$W/ck3.bin"
jrun rest circles "${common[@]}" --continue "$W/ck.bin" --checkpoint "$W/ck.bin" --rounds 6 --out "$W/rest.json"
expect_rc 0
expect_err "going on from .*ck.bin: 3 rounds" "the checkpoint it goes on from"
check_result "$W/rest.json" 20
jpy '
a, f, c = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
if a["circles"] != c["circles"] or a["R"] != c["R"]:
    fail("expected the packing of the whole run, got R %r against %r" % (c["R"], a["R"]))
for k in ("trials", "relax_steps", "restarts", "adoptions", "crossovers", "elite_R", "seed", "stopped_by"):
    if a["run"][k] != c["run"][k]:
        fail("run.%s: %r in two parts, %r whole" % (k, c["run"][k], a["run"][k]))
for k in ("restarts", "adoptions", "crossovers"):
    if not f["run"][k] < a["run"][k]:
        fail("expected %s after round 3 (%r of %r)" % (k, f["run"][k], a["run"][k]))
' "$W/whole.json" "$W/first.json" "$W/rest.json" || fail "a run in two parts differs from one run"

# --time counts from the first run's start: 2 s, then on to 4
jrun t1 circles "${common[@]}" --time 2 --checkpoint "$W/ckt.bin" --out "$W/t1.json"
expect_rc 0
jrun t2 circles "${common[@]}" --continue "$W/ckt.bin" --time 4 --out "$W/t2.json"
expect_rc 0
jpy '
t1, t2 = load(sys.argv[1])["run"], load(sys.argv[2])["run"]
if not (t1["time_s"] >= 2 and 4 <= t2["time_s"] < 5.0 and t2["trials"] > t1["trials"]):
    fail("expected 2 s, then 4 s in all with more trials, got %r and %r s, %r and %r trials" % (
        t1["time_s"], t2["time_s"], t1["trials"], t2["trials"]))
# the seconds in launches and polish go on from the first part, within time_s
if not (0 < t1["launch_s"] < t2["launch_s"] and 0 <= t1["polish_s"] <= t2["polish_s"] and
        t2["launch_s"] + t2["polish_s"] <= t2["time_s"]):
    fail("expected launch and polish seconds going on and within time_s, got %r + %r of %r, then %r + %r of %r" % (
        t1["launch_s"], t1["polish_s"], t1["time_s"], t2["launch_s"], t2["polish_s"], t2["time_s"]))
' "$W/t1.json" "$W/t2.json" || fail "--continue with --time"

bad() { bad_circles "$@"; }
head -c 1000 "$W/ck3.bin" > "$W/short.bin"
"$PY" - "$W/ck3.bin" "$W/nan.bin" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
data[-8:] = struct.pack("d", float("nan"))  # the last centre of the last packing stored
open(sys.argv[2], "wb").write(data)
PY
bad short   "short.bin: .*bytes, its header says"   "a checkpoint cut short" --n 20 --device cpu --continue "$W/short.bin" --rounds 4
bad nan     "nan.bin: .*not a finite number"         "a centre that is NaN"   --n 20 --device cpu --continue "$W/nan.bin" --rounds 4
bad other_n "ck3.bin: n: the checkpoint holds 20 circles, the instance zimmermann-21 21" \
            "the instance's size" --n 21 --device cpu --continue "$W/ck3.bin" --rounds 4
bad radii   "ck3.bin: radii: not those of the instance" \
            "the instance's radii" --equal 20 --device cpu --continue "$W/ck3.bin" --rounds 4
bad json    "whole.json: not a jostle checkpoint"    "a file of another kind" --n 20 --device cpu --continue "$W/whole.json" --rounds 4
bad seed    "--seed: not with --continue"            "the option --seed"      --n 20 --device cpu --continue "$W/ck3.bin" --seed 2 --rounds 4
bad resume  "--resume: not with --continue"          "the option --resume"    --n 20 --device cpu --continue "$W/ck3.bin" --resume "$W/whole.json" --rounds 4
bad ck_dir  "--checkpoint"                           "a folder as checkpoint" --n 20 --device cpu --checkpoint "$o" --rounds 1

echo "PASS: cli_checkpoint"
