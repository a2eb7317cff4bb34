#!/usr/bin/env bash
# scripts/plot-stats on a small hand-made CSV: five PNG files with valid
# headers and the figure's size; bad input exits 2 naming the column, writes nothing.
. "$(dirname "$0")/common.sh"

PLOT="$SRC/scripts/plot-stats"
[ -x "$PLOT" ] || fail "expected an executable $PLOT"

mkdir -p "$W/ok" "$W/bad"
cat > "$W/ok/run.csv" <<'CSV'
step,time,kinetic,potential,contacts,iterations,residual,max_penetration
0,0.00,0.0,9.81,0,0,0,0
1,0.01,0.0049,9.8051,0,0,0,0
2,0.02,0.0196,9.7904,1,12,3.5e-08,1.2e-4
3,0.03,0.0000,9.7806,1,8,8.0e-09,4.0e-5
4,0.04,0.0000,9.7806,1,3,0,2.0e-5
CSV

"$PY" "$PLOT" "$W/ok/run.csv" > "$W/plot.out" 2> "$W/plot.err" || fail "plot-stats failed: $(cat "$W/plot.err")"
for k in energy contacts iterations residual penetration; do
  f="$W/ok/run-$k.png"
  [ -s "$f" ] || fail "expected a non-empty $f"
  grep -qx "$f" "$W/plot.out" || fail "expected plot-stats to print $f"
  jpy '
import struct
d = open(sys.argv[1], "rb").read()
if d[:8] != b"\x89PNG\r\n\x1a\n":
    fail("%s: not a PNG signature" % sys.argv[1])
if d[12:16] != b"IHDR":
    fail("%s: first chunk is not IHDR" % sys.argv[1])
w, h = struct.unpack(">II", d[16:24])
if (w, h) != (960, 540):
    fail("%s: expected 960 x 540 pixels, got %d x %d" % (sys.argv[1], w, h))
if d[-8:-4] != b"IEND":
    fail("%s: does not end with IEND" % sys.argv[1])
' "$f" || fail "bad PNG $f"
done

# Two runs on one set of axes, into another folder with a prefix.
cp "$W/ok/run.csv" "$W/ok/other.csv"
"$PY" "$PLOT" "$W/ok/run.csv" "$W/ok/other.csv" --out "$W/bad" --prefix cmp > /dev/null 2> "$W/plot.err" \
  || fail "plot-stats with two CSVs failed: $(cat "$W/plot.err")"
[ -s "$W/bad/cmp-energy.png" ] || fail "expected $W/bad/cmp-energy.png"
rm -f "$W/bad"/*.png

# A missing column: exit 2, the message names file and column, no PNG written.
sed 's/residual,/resid,/' "$W/ok/run.csv" > "$W/bad/run.csv"
rc=0
"$PY" "$PLOT" "$W/bad/run.csv" > /dev/null 2> "$W/bad.err" || rc=$?
[ "$rc" -eq 2 ] || fail "missing column: expected exit status 2, got $rc"
grep -q "run.csv" "$W/bad.err" && grep -q "'residual'" "$W/bad.err" \
  || fail "missing column: expected the message to name run.csv and 'residual', got: $(cat "$W/bad.err")"
ls "$W/bad"/*.png > /dev/null 2>&1 && fail "missing column: expected no PNG written"

# A value that is not a number: exit 2 naming line and column.
sed '4s/12/twelve/' "$W/ok/run.csv" > "$W/bad/run.csv"
rc=0
"$PY" "$PLOT" "$W/bad/run.csv" > /dev/null 2> "$W/bad.err" || rc=$?
[ "$rc" -eq 2 ] || fail "bad number: expected exit status 2, got $rc"
grep -q "line 4" "$W/bad.err" && grep -q "'iterations'" "$W/bad.err" \
  || fail "bad number: expected the message to name line 4 and 'iterations', got: $(cat "$W/bad.err")"

# A GPU run's CSV: residual nan after step 0 is drawn as a note, not refused;
# nan in any other column exits 2 naming it.
sed '3,$s/,[^,]*,\([^,]*\)$/,nan,\1/' "$W/ok/run.csv" > "$W/ok/gpu.csv"
grep -q ',nan,' "$W/ok/gpu.csv" || fail "test setup: expected nan residuals in gpu.csv"
"$PY" "$PLOT" "$W/ok/gpu.csv" > /dev/null 2> "$W/plot.err" || fail "plot-stats on nan residuals failed: $(cat "$W/plot.err")"
[ -s "$W/ok/gpu-residual.png" ] || fail "expected $W/ok/gpu-residual.png"
rm -f "$W/bad"/*.png
sed '4s/,12,/,nan,/' "$W/ok/run.csv" > "$W/bad/run.csv"
rc=0
"$PY" "$PLOT" "$W/bad/run.csv" > /dev/null 2> "$W/bad.err" || rc=$?
[ "$rc" -eq 2 ] || fail "nan iterations: expected exit status 2, got $rc"
grep -q "line 4" "$W/bad.err" && grep -q "'iterations'" "$W/bad.err" \
  || fail "nan iterations: expected the message to name line 4 and 'iterations', got: $(cat "$W/bad.err")"
ls "$W/bad"/*.png > /dev/null 2>&1 && fail "nan iterations: expected no PNG written"

echo "PASS: cli_plot_stats"
