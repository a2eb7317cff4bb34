#!/usr/bin/env bash
# Bad input: exit status 2, a message on stderr naming the problem, no output file.
. "$(dirname "$0")/common.sh"

in=$W/in
o=$W/o
mkdir -p "$in" "$o"
cp "$SRC/problems/circles/zimmermann-05.json" "$in/p.json" || fail "cannot copy zimmermann-05.json"
printf '%s\n' '{"kind": "circles", "name": "neg", "radii": [1, -2, 3]}' > "$in/neg.json"
printf '%s\n' '{"kind": "circles", "name": "unk", "radii": [1, 2, 3], "bogus_key": 1}' > "$in/unknown.json"
printf '%s\n' '{"kind": "circles", "name": "bad", "radii": [1, 2,' > "$in/malformed.json"

bad() { bad_circles "$@"; }

N_OPT='--n|(^|[^[:alnum:]_])n([^[:alnum:]_]|$)'
bad n_zero     "$N_OPT"                 "the option --n"    --n 0 --device cpu --time 2
bad n_negative "$N_OPT|-3"              "the option --n"    --n -3 --device cpu --time 2
bad n_text     'abc'                    "the value 'abc'"   --n abc --device cpu --time 2
bad band_neg   "--band: must be between" "the option --band"  --n 5 --band -1 --device cpu --time 2
bad band_lvls  "--band-levels"         "the option --band-levels" --n 5 --band-levels 0 --device cpu --time 2
bad elite_zero "--elite"               "the option --elite" --n 5 --elite 0 --device cpu --time 2
bad crowd_neg  "--crowding: must be between" "the option --crowding" --n 5 --crowding -0.1 --device cpu --time 2
bad crowd_big  "--crowding: must be between" "the option --crowding" --n 5 --crowding 1.5 --device cpu --time 2
bad adopt_by   "--adopt-by: expected uniform or spread, got 'near'" "the option --adopt-by" --n 5 --adopt-by near --device cpu --time 2
bad walk_neg   "--walk: must be between" "the option --walk" --n 5 --walk -1 --device cpu --time 2
bad walkk_zero "--walk-k: must be between" "the option --walk-k" --n 5 --walk-k 0 --device cpu --time 2
bad walkk_big  "--walk-k: must be between" "the option --walk-k" --n 5 --walk-k 257 --device cpu --time 2
bad tenure_0   "--tenure: must be between" "the option --tenure" --n 5 --tenure 0 --device cpu --time 2
bad reset_0    "--walk-reset: must be between" "the option --walk-reset" --n 5 --walk-reset 0 --device cpu --time 2
bad behind_0   "--stuck-behind: must be between" "the option --stuck-behind" --n 5 --stuck-behind 0 --device cpu --time 2
bad behind_ad  "behind_adopt and cross are shares" "--behind-adopt with --cross over 1" --n 5 --behind-adopt 0.8 --cross 0.3 --device cpu --time 2
bad probe_on   "--probe: expected off, restart or keep, got 'on'" "the option --probe" --n 5 --probe on --device cpu --time 2
bad aim_big    "--aim: must be between" "the option --aim" --n 5 --aim 2 --device cpu --time 2
bad adopt_big  "--adopt: must be between" "the option --adopt" --n 5 --adopt 1.5 --device cpu --time 2
bad cross_sum  "adopt and cross are shares of the restarts.*0.8 and 0.3" "--adopt with --cross" --n 5 --adopt 0.8 --cross 0.3 --device cpu --time 2
bad cross_big  "--cross: must be between" "the option --cross" --n 5 --cross 2 --device cpu --time 2
bad polish_mode "--polish: expected beside or after, got 'sideways'" "the option --polish" --n 5 --polish sideways --device cpu --time 2
bad neg_radius 'neg\.json'              "the file neg.json" --problem "$in/neg.json" --device cpu --time 2
expect_err 'radii' "the field 'radii'"
bad unknown_key 'bogus_key'             "the key 'bogus_key'" --problem "$in/unknown.json" --device cpu --time 2
bad malformed  'malformed\.json'        "the file malformed.json" --problem "$in/malformed.json" --device cpu --time 2
bad missing    'nope\.json'             "the file nope.json" --problem "$in/nope.json" --device cpu --time 2
bad time_neg   'time'                   "the option --time" --n 5 --device cpu --time -1
bad unknown_opt 'frobnicate'            "the option --frobnicate" --n 5 --device cpu --time 2 --frobnicate

# Radii the arithmetic cannot hold: refused when the file is read (before, 1e200 ran forever
# and ignored SIGINT, 1e154 failed after the search naming no file), with the field and the limit.
rd=$W/radii
mkdir -p "$rd"
printf '%s\n' '{"kind": "circles", "radii": [1, 1e200, 3]}' > "$rd/r200.json"
printf '%s\n' '{"kind": "circles", "radii": [1, 1e154, 3]}' > "$rd/r154.json"
printf '%s\n' '{"kind": "circles", "radii": [1e-120, 1e-120]}' > "$rd/tiny.json"
printf '%s\n' '{"kind": "circles", "radii": [1, 1e7, 3]}' > "$rd/wide.json"
printf '%s\n' '{"kind": "circles", "radii": [1e-3, 1e3, 2]}' > "$rd/ok.json"
JL_TIMEOUT=20 bad r200 'r200\.json: radii\[1\]: 1e\+200 is outside \[1e-100, 1e\+100\]' "the radius and its limits" --problem "$rd/r200.json" --device cpu --time 2
JL_TIMEOUT=20 bad r154 'r154\.json: radii\[1\]: 1e\+154 is outside' "the radius" --problem "$rd/r154.json" --device cpu --time 2
JL_TIMEOUT=20 bad tiny 'tiny\.json: radii\[0\]: 1e-120 is outside' "the radius" --problem "$rd/tiny.json" --device cpu --time 2
JL_TIMEOUT=20 bad wide 'wide\.json: radii\[1\] = 1e\+07 is more than 1e\+06 times radii\[0\] = 1' "the ratio" --problem "$rd/wide.json" --device cpu --time 2
# a ratio of 1e6 is within the limits: it runs and gives a legal packing
jrun ratio_ok circles --problem "$rd/ok.json" --device cpu --time 1 --out "$rd/ok-out.json" --quiet
expect_rc 0
check_result "$rd/ok-out.json" 3
# the same limits for the radii of a result file (verify, --resume)
printf '%s\n' '{"format": "jostle-result", "kind": "circles", "circles": [{"x": 0, "y": 0, "r": 1}, {"x": 2e200, "y": 0, "r": 1e200}]}' > "$rd/res.json"
jrun verify_r200 verify "$rd/res.json"
expect_rc 2
expect_err 'res\.json: circles\[1\]\.r: 1e\+200 is outside' "the result's radius"
JL_TIMEOUT=20 bad resume_r200 'res\.json: circles\[1\]\.r: 1e\+200 is outside' "the resumed radius" --resume "$rd/res.json" --device cpu --time 2

# --out naming the --problem input: refused, input unchanged, nothing beside it.
before=$(cksum < "$in/p.json")
for out in "$in/p.json" "$in/./p.json"; do
  jrun same_file circles --problem "$in/p.json" --device cpu --time 2 --out "$out" --quiet
  expect_rc 2
  [ -s "$W/same_file.err" ] || fail "jostle $CMD: expected a message on stderr, got none"
  after=$(cksum < "$in/p.json")
  [ "$before" = "$after" ] || fail "jostle $CMD: expected the input p.json unchanged, it changed"
  left=$(cd "$in" && ls -A | grep -v -x -e p.json -e neg.json -e unknown.json -e malformed.json)
  [ -z "$left" ] || fail "jostle $CMD: expected no output file, found: $left"
done

# A missing option value is said as such, in every subcommand (getopt needs ':' first).
for args in "circles --n" "verify x.json --n" "trunk x.stl --time" "scene x.json --steps" \
            "bench relax --n" "bench trunk --blocks" "bench scene x.json --steps"; do
  opt=${args##* }
  # shellcheck disable=SC2086
  jrun missing_value $args
  expect_rc 2
  expect_err "^jostle: $opt: needs a value\$" "the option $opt"
done

# Repeated and contradictory options are refused, naming both.
bad repeated "--n: given twice \('5' and '6'\)" "both values" --n 5 --n 6 --device cpu --time 2
bad repeated_flag "--quiet: given twice" "the flag" --n 5 --device cpu --time 2 --quiet
SC=$SRC/problems/scenes
jrun both_g scene "$SC/demo-drop.json" --steps 2 --assembled --matrix-free --out "$o/s.json" --quiet
expect_rc 2
expect_err '--matrix-free and --assembled' "both options"
no_output
jrun twice_steps scene "$SC/demo-drop.json" --steps 2 --steps 3 --out "$o/s.json" --quiet
expect_rc 2
expect_err "--steps: given twice \('2' and '3'\)" "both values"
no_output
# a skin out of range for the kept pair lists: refused, naming the option
jrun bad_skin bench scene "$SC/demo-drop.json" --device cpu --steps 1 --pair-skin 11
expect_rc 2
expect_err "--pair-skin: must be between 0 and 10, got 11" "the option and its range"

# --fclib-step past the last step is refused before the run, naming the step count.
jrun fclib_step scene "$SC/demo-drop.json" --steps 20 --fclib "$o/f.hdf5" --fclib-step 50 --out "$o/s.json" --quiet
expect_rc 2
if [ "${JL_HAVE_FCLIB:-1}" = 1 ]; then  # else refused as not built in
  expect_err '--fclib-step 50: the run has only 20 steps' "the step and the step count"
fi
no_output

# A diverging SOR solve is not told to try SOR: alpha 2 over-relaxes a stack of 20 boxes.
printf '%s\n' '{"dt": 0.01, "steps": 60, "solver": {"method": "sor", "alpha": 2.0, "max_iterations": 50},
  "bodies": [{"shape": "plane", "normal": [0, 0, 1]}],
  "generators": [{"type": "box_stack", "count": 20, "half_extents": [0.5, 0.5, 0.5], "gap": 0, "origin": [0, 0, 0]}]}' \
  > "$in/sor.json"
jrun sor scene "$in/sor.json" --device cpu --out "$o/sor.json" --quiet
expect_rc 0
expect_err 'the SOR solve has diverged' "the divergence"
expect_err 'try a smaller alpha \(the scene.s solver\.alpha, now 2\)' "a remedy that applies"
if grep -q -- '--solver sor' "$W/sor.err"; then fail "jostle $CMD: suggested --solver sor to a SOR run"; fi

echo "PASS: cli_bad_input"
