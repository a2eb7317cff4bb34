#!/usr/bin/env bash
# gpu suite: a checkpoint travels between the paths. A CPU run of 2 rounds
# with --checkpoint, continued on CUDA to round 4, ends in the packing of one
# CUDA run of 4 rounds and of one CPU run of 4 rounds, bit for bit (fixed
# batch and threads, the CUDA runs polishing after each launch as the CPU
# does; docs/design.md, why CPU and GPU agree). With the polish beside the
# launches (the CUDA default) a run of 2 + 2 rounds through a checkpoint
# ends in the bits of one run of 4. Exit 77 (skip) without a CUDA device or
# a CUDA build.
. "$(dirname "$0")/common.sh"

o=$W/o
mkdir -p "$o"
common=(--n 20 --batch 64 --threads 2 --stuck 10 --quiet)

jrun probe circles --n 5 --rounds 1 --device cuda --out "$o/probe.json" --quiet
if [ "$RC" -eq 4 ] && grep -Eq 'no CUDA device|built without CUDA' "$W/probe.err"; then
  echo "no CUDA device: skipped"
  exit 77
fi
expect_rc 0

jrun cuda circles "${common[@]}" --seed 4 --rounds 4 --device cuda --polish after --out "$o/cuda.json"
expect_rc 0
jrun cpu circles "${common[@]}" --seed 4 --rounds 4 --device cpu --out "$o/cpu.json"
expect_rc 0
jrun first circles "${common[@]}" --seed 4 --rounds 2 --device cpu --checkpoint "$o/ck.bin" --out "$o/first.json"
expect_rc 0
jrun rest circles --n 20 --threads 2 --stuck 10 --quiet --continue "$o/ck.bin" --rounds 4 --device cuda \
  --polish after --out "$o/rest.json"
expect_rc 0
jpy '
a, b, c = (load(p) for p in sys.argv[1:4])
for name, x in (("one CPU run", b), ("CPU then CUDA", c)):
    if x["circles"] != a["circles"] or x["R"] != a["R"]:
        fail("%s: R %r, one CUDA run %r" % (name, x["R"], a["R"]))
    for k in ("trials", "relax_steps", "restarts", "adoptions"):
        if x["run"][k] != a["run"][k]:
            fail("%s: run.%s %r, one CUDA run %r" % (name, k, x["run"][k], a["run"][k]))
' "$o/cuda.json" "$o/cpu.json" "$o/rest.json" || fail "a checkpoint moved from the CPU to CUDA"

jrun beside circles "${common[@]}" --seed 5 --rounds 4 --device cuda --out "$o/beside.json"
expect_rc 0
jrun beside1 circles "${common[@]}" --seed 5 --rounds 2 --device cuda --checkpoint "$o/ckb.bin" \
  --out "$o/beside1.json"
expect_rc 0
jrun beside2 circles --n 20 --threads 2 --stuck 10 --quiet --continue "$o/ckb.bin" --rounds 4 \
  --device cuda --out "$o/beside2.json"
expect_rc 0
jpy '
a, b = (load(p) for p in sys.argv[1:3])
for x in (a, b):
    if x["run"]["polish"] != "beside":
        fail("run.polish %r, expected beside on CUDA" % x["run"]["polish"])
if b["circles"] != a["circles"] or b["R"] != a["R"]:
    fail("beside, 2 + 2 rounds: R %r, one run of 4 %r" % (b["R"], a["R"]))
for k in ("trials", "relax_steps", "restarts", "adoptions"):
    if b["run"][k] != a["run"][k]:
        fail("beside, 2 + 2 rounds: run.%s %r, one run of 4 %r" % (k, b["run"][k], a["run"][k]))
' "$o/beside.json" "$o/beside2.json" || fail "the polish beside the launches: a checkpoint changed the run"

echo "PASS: gpu_circles_checkpoint"
