# Sourced by tests/cli/cli_*.sh (not a test itself). Each test is run as
#   tests/cli/cli_NAME.sh /path/to/jostle /path/to/source_root
# and exits 0 on pass, 1 on fail with a message on stderr.
#
# Gives: JOSTLE, SRC, PY, W (work dir, removed on exit), slow (5 for a sanitized
# debug build, which runs about 5 times slower, else 1: time limits scale by it), and
#   jrun NAME ARGS...      run jostle ARGS (stdin /dev/null, time limit JL_TIMEOUT s, default 120);
#                          stdout in $W/NAME.out, stderr in $W/NAME.err, status in RC
#   expect_rc N            fail unless the last jrun exited with N
#   expect_err PATTERN WHAT   fail unless the last jrun's stderr matches the extended regex
#   jpy CODE ARGS...       run python CODE with sys.argv[1:] = ARGS; CODE can call
#                          load(path) (parsed JSON) and fail(msg)
#   fail MSG               print MSG (and the last run's output) and exit 1
#   bad_circles NAME PATTERN WHAT ARGS...   a circles run that must exit 2 naming WHAT
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 /path/to/jostle /path/to/source_root" >&2
  exit 2
fi
JOSTLE=$1
SRC=$2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
slow=1
ldd "$JOSTLE" 2>/dev/null | grep -q libasan && slow=5

W=$(mktemp -d "${TMPDIR:-/tmp}/jostle-cli.XXXXXX") || { echo "FAIL: mktemp -d failed" >&2; exit 1; }
BG_PIDS=()
jl_cleanup() {
  local p
  for p in "${BG_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$W"
}
trap jl_cleanup EXIT

LAST=""
CMD=""
RC=0

fail() {
  echo "FAIL ($(basename "$0")): $*" >&2
  if [ -n "$LAST" ]; then
    echo "--- last command: jostle $CMD (exit status $RC)" >&2
    echo "--- its stdout (tail):" >&2
    tail -n 20 "$W/$LAST.out" >&2 2>/dev/null
    echo "--- its stderr (tail):" >&2
    tail -n 20 "$W/$LAST.err" >&2 2>/dev/null
  fi
  exit 1
}

[ -x "$JOSTLE" ] || fail "expected an executable jostle at '$JOSTLE'"
[ -d "$SRC" ] || fail "expected the source root at '$SRC'"

jrun() {
  LAST=$1
  shift
  CMD="$*"
  RC=0
  timeout -k 10 "${JL_TIMEOUT:-120}" "$JOSTLE" "$@" >"$W/$LAST.out" 2>"$W/$LAST.err" </dev/null || RC=$?
  if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
    fail "jostle $CMD: did not finish within ${JL_TIMEOUT:-120} s"
  fi
}

# jbg NAME ARGS...: start jostle ARGS in the background (outputs as jrun), with
# SIGINT at its default as from a terminal (a non-interactive shell starts
# background jobs with it ignored); its pid in BG_PID.
jbg() {
  LAST=$1
  shift
  CMD="$*"
  "$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$JOSTLE" "$@" >"$W/$LAST.out" 2>"$W/$LAST.err" </dev/null &
  BG_PID=$!
  BG_PIDS+=("$BG_PID")
}

# jwait SECONDS: wait for the background jostle to exit within SECONDS (else kill
# it and fail); its status in RC, the seconds it took in TOOK.
jwait() {
  local start now
  start=$(date +%s.%N)
  while kill -0 "$BG_PID" 2>/dev/null; do
    now=$(date +%s.%N)
    if "$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) - float(sys.argv[2]) > float(sys.argv[3]) else 1)' "$now" "$start" "$1"; then
      kill -KILL "$BG_PID" 2>/dev/null
      fail "jostle $CMD: expected exit within $1 s, still running"
    fi
    sleep 0.1
  done
  RC=0
  wait "$BG_PID" || RC=$?
  TOOK=$("$PY" -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$start")
}

# no_output: the test's output folder $o must stay empty (no result, picture,
# text or temporary file).
no_output() {
  local left
  left=$(ls -A "$o")
  [ -z "$left" ] || fail "jostle $CMD: expected no output file, found: $left"
}

expect_rc() {
  [ "$RC" -eq "$1" ] || fail "jostle $CMD: expected exit status $1, got $RC"
}

expect_err() {
  [ -s "$W/$LAST.err" ] || fail "jostle $CMD: expected a message on stderr naming $2, got none"
  grep -Eq -- "$1" "$W/$LAST.err" || fail "jostle $CMD: expected stderr to name $2 (/$1/)"
}

jpy() {
  local code=$1
  shift
  "$PY" -c "import json, math, sys
def load(path):
    with open(path) as f:
        return json.load(f)
def fail(msg):
    sys.stderr.write('FAIL: ' + msg + '\n')
    sys.exit(1)
$code" "$@"
}

# bad_circles NAME PATTERN WHAT ARGS...: jostle circles ARGS --out $o/NAME.json
# must exit 2 with stderr matching PATTERN and write nothing in $o.
bad_circles() {
  local name=$1 pat=$2 what=$3
  shift 3
  jrun "$name" circles "$@" --out "$o/$name.json" --quiet
  expect_rc 2
  expect_err "$pat" "$what"
  no_output
}

# check_result FILE N: the result JSON is a legal packing of N circles, checked here
# independently of jostle (containment in R and no overlap, to 1e-9 R).
check_result() {
  jpy '
path, n = sys.argv[1], int(sys.argv[2])
try:
    d = load(path)
except Exception as e:
    fail("%s: expected a result JSON, got %s" % (path, e))
if d.get("format") != "jostle-result" or d.get("kind") != "circles":
    fail("%s: expected format jostle-result, kind circles; got %r, %r" % (path, d.get("format"), d.get("kind")))
if d.get("legal") is not True:
    fail("%s: expected legal == true, got %r" % (path, d.get("legal")))
cs, R = d.get("circles"), d.get("R")
if not isinstance(cs, list) or len(cs) != n:
    fail("%s: expected %d circles, got %r" % (path, n, None if cs is None else len(cs)))
if not isinstance(R, (int, float)) or not R > 0:
    fail("%s: expected a positive R, got %r" % (path, R))
tol = 1e-9 * R
for i, c in enumerate(cs):
    if math.hypot(c["x"], c["y"]) + c["r"] > R + tol:
        fail("%s: circle %d sticks out of R = %r" % (path, i, R))
    for j in range(i):
        o = cs[j]
        if math.hypot(c["x"] - o["x"], c["y"] - o["y"]) < c["r"] + o["r"] - tol:
            fail("%s: circles %d and %d overlap" % (path, j, i))
' "$1" "$2" || fail "result $1 failed the checks above"
}

# json_get FILE EXPR: prints EXPR evaluated on the parsed file as d (floats with repr).
json_get() {
  jpy 'd = load(sys.argv[1]); print(repr(eval(sys.argv[2])))' "$1" "$2" \
    || fail "cannot read $2 from $1"
}
