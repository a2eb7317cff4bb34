#!/usr/bin/env bash
# gpu suite: two MPI ranks on a host with two CUDA devices each take their own
# device (rank r on device r), for circles and trunks; the result names each
# rank's device. Exit 77 (skip) with fewer than two devices or without MPI.
. "$(dirname "$0")/common.sh"

MPIRUN=${MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
command -v nvidia-smi >/dev/null 2>&1 || { echo "no nvidia-smi: skipped"; exit 77; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
# CUDA sees only the devices CUDA_VISIBLE_DEVICES names, when it is set
if [ -n "${CUDA_VISIBLE_DEVICES+x}" ]; then
  visible=$(printf '%s' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  [ "$visible" -lt "$gpus" ] && gpus=$visible
fi
[ "$gpus" -ge 2 ] || { echo "$gpus CUDA device(s), two needed: skipped"; exit 77; }

d=$W/o
mkdir -p "$d"
run2() {
  LAST=$1
  shift
  CMD="(mpirun -np 2) $*"
  RC=0
  timeout -k 10 300 "$MPIRUN" -np 2 "$JOSTLE" "$@" >"$W/$LAST.out" 2>"$W/$LAST.err" </dev/null || RC=$?
}
check_devices() {
  jpy '
run = load(sys.argv[1])["run"]
isl = run.get("islands") or []
got = [(r["device"], r["cuda_device"]) for r in isl]
if got != [("cuda", 0), ("cuda", 1)]: fail("expected rank 0 on CUDA device 0 and rank 1 on 1, got %r" % got)
if run.get("migrations", 0) < 1: fail("expected migrations, got %r" % run.get("migrations"))
' "$1" || fail "jostle $CMD: devices (above)"
}
run2 c circles --n 20 --device cuda --time 8 --migrate 2 --quiet --out "$d/c.json"
expect_rc 0
check_result "$d/c.json" 20
check_devices "$d/c.json"
run2 t trunk "$SRC/meshes/slanted-seat-back.stl" --device cuda --time 20 --migrate 2 --quiet --out "$d/t.json"
expect_rc 0
check_devices "$d/t.json"
jrun vt verify "$d/t.json"
expect_rc 0
echo "PASS: gpu_mpi"
