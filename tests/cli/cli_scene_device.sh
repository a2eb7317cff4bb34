#!/usr/bin/env bash
# jostle scene --device: cuda without a device exits 4 with a message and writes
# nothing; a bad value exits 2; auto without a device falls back to the CPU with a
# one-line notice; the result says which device ran. CUDA_VISIBLE_DEVICES= hides any
# GPU so the test means the same on a machine with one.
. "$(dirname "$0")/common.sh"

o=$W/o
mkdir -p "$o"
SC=$SRC/problems/scenes
export CUDA_VISIBLE_DEVICES=

jrun nocuda scene "$SC/demo-drop.json" --steps 20 --device cuda --out "$o/a.json" --csv "$o/a.csv" \
  --glb "$o/a.glb" --quiet
expect_rc 4
expect_err '^jostle: --device cuda: (no CUDA device is present|this jostle was built without CUDA)' \
  "the device and why it cannot run"
left=$(ls -A "$o")
[ -z "$left" ] || fail "jostle $CMD: expected no output, found: $left"

jrun baddev scene "$SC/demo-drop.json" --steps 20 --device tpu --out "$o/a.json" --quiet
expect_rc 2
expect_err "--device: expected cpu, cuda or auto, got 'tpu'" "the option and the value"
left=$(ls -A "$o")
[ -z "$left" ] || fail "jostle $CMD: expected no output, found: $left"

jrun auto scene "$SC/demo-drop.json" --steps 20 --device auto --threads 1 --out "$o/auto.json" --quiet
expect_rc 0
expect_err '^jostle: no CUDA device found, running on the CPU \(1 threads?\)$' "the fallback"
[ "$(wc -l < "$W/auto.err")" -eq 1 ] || fail "jostle $CMD: expected one line on stderr"
[ "$(json_get "$o/auto.json" 'd["run"]["device_kind"]')" = "'cpu'" ] \
  || fail "jostle $CMD: expected run.device_kind cpu"
[ "$(json_get "$o/auto.json" 'd["run"]["device"]')" = "'CPU, 1 thread'" ] \
  || fail "jostle $CMD: expected run.device 'CPU, 1 thread'"

jrun cpu scene "$SC/demo-drop.json" --steps 20 --device cpu --threads 2 --out "$o/cpu.json" --quiet
expect_rc 0
[ ! -s "$W/cpu.err" ] || fail "jostle $CMD: expected nothing on stderr with --device cpu --quiet"
[ "$(json_get "$o/cpu.json" 'd["run"]["device_kind"]')" = "'cpu'" ] \
  || fail "jostle $CMD: expected run.device_kind cpu"

echo "PASS: cli_scene_device"

# jostle bench scene: the step's stage times; CUDA by default, or the CPU path
jrun benchnocuda bench scene "$SC/demo-drop.json"
expect_rc 4
expect_err '^jostle: --device cuda: (no CUDA device is present|this jostle was built without CUDA)' \
  "that bench scene needs a CUDA device"
jrun benchcpu bench scene "$SC/demo-drop.json" --device cpu --threads 1 --steps 2
expect_rc 0
grep -q '"device_name": "CPU, 1 thread".*"solve_wait_ms_per_step": 0,' "$W/benchcpu.out" \
  || fail "bench scene --device cpu: expected one thread's line, got: $(cat "$W/benchcpu.out")"
jrun benchdev bench scene "$SC/demo-drop.json" --device gpu
expect_rc 2
expect_err "^jostle: --device: expected cuda, cpu or auto, got 'gpu'" "the bad device"
jrun benchbad bench scene "$o/missing.json"
expect_rc 2
expect_err 'missing\.json: cannot open' "the scene file and why"
jrun benchnone bench scene
expect_rc 2
expect_err 'bench scene: expected one SCENE.json' "the missing scene"
# --marks times the device's launches: the CPU path is refused, nothing printed
jrun benchmarks bench scene "$SC/demo-drop.json" --device cpu --marks
expect_rc 2
expect_err 'bench scene: marks: .*the CPU path has none \(use --device cuda\)' "why --marks needs CUDA"
[ ! -s "$W/benchmarks.out" ] || fail "bench scene --marks on the CPU: expected no output, got $(cat "$W/benchmarks.out")"
