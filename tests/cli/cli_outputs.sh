#!/usr/bin/env bash
# Where outputs go: default names from a file's name field stay a safe file
# name in the current folder; a name that is not UTF-8 is refused; two
# outputs naming one file, an --out that is not .json and an output folder
# that cannot be written are refused before any work, replacing nothing.
. "$(dirname "$0")/common.sh"

JOSTLE=$(cd "$(dirname "$JOSTLE")" && pwd)/$(basename "$JOSTLE")  # the tests run elsewhere
SRC=$(cd "$SRC" && pwd)
run=$W/run
away=$W/away
in=$W/in
mkdir -p "$run/sub" "$away" "$in"
cd "$run/sub" || fail "cannot cd into $run/sub"
mesh=$SRC/meshes/cuboid-1000x500x400.stl

only_here() {  # only_here FILE...: the current folder holds exactly these files
  local want have
  want=$(printf '%s\n' "$@" | sort)
  have=$(ls -A | sort)
  [ "$want" = "$have" ] || fail "jostle $CMD: expected the files '$(echo $want)' here, found '$(echo $have)'"
}
nothing_away() {
  [ -z "$(ls -A "$away")" ] || fail "jostle $CMD: wrote outside the current folder: $(ls -A "$away")"
  [ -z "$(ls -A "$run" | grep -v -x sub)" ] || fail "jostle $CMD: wrote into the parent folder: $(ls -A "$run")"
}

# --- item 1: a name with a folder in it names a file here, and stays data in the JSON ---
printf '{"kind": "circles", "radii": [1, 2, 3], "name": "%s/x"}\n' "$away" > "$in/abs.json"
jrun abs circles --problem "$in/abs.json" --device cpu --rounds 1 --quiet
expect_rc 0
stem=$(echo "$away/x" | tr -c 'A-Za-z0-9._\n-' '_')
only_here "$stem.json" "$stem.svg" "$stem.txt"
nothing_away
[ "$(json_get "$stem.json" 'd["problem"]["name"]')" = "'$away/x'" ] || fail "the result's problem.name is not the file's name"
rm -f ./*

printf '{"kind": "circles", "radii": [1, 2, 3], "name": "../x"}\n' > "$in/up.json"
jrun up circles --problem "$in/up.json" --device cpu --rounds 1 --quiet
expect_rc 0
only_here _._x.json _._x.svg _._x.txt
nothing_away
rm -f ./*

printf '{"kind": "trunk", "name": "%s/t", "mesh": "%s"}\n' "$away" "$mesh" > "$in/trunk.json"
jrun trunk trunk "$in/trunk.json" --device cpu --threads 2 --time 2 --quiet
expect_rc 0
stem=$(echo "$away/t" | tr -c 'A-Za-z0-9._\n-' '_')
only_here "$stem.json" "$stem.glb" "$stem.svg"
nothing_away
rm -f ./*

printf '{"name": "../s", "dt": 0.01, "steps": 3, "bodies": [{"shape": "sphere", "radius": 1}]}\n' > "$in/scene.json"
jrun scene scene "$in/scene.json" --device cpu --quiet
expect_rc 0
only_here _._s.json
nothing_away
rm -f ./*

# --- item 1: names that are not UTF-8 are refused at load, naming file and field ---
printf '{"kind": "circles", "radii": [1, 2, 3], "name": "bad\xff\xfe"}\n' > "$in/u8.json"
jrun u8 circles --problem "$in/u8.json" --device cpu --rounds 1 --quiet
expect_rc 2
expect_err 'u8\.json: name: not valid UTF-8' "the file and the field name"
only_here
printf '{"kind": "trunk", "name": "t\xc3", "mesh": "%s"}\n' "$mesh" > "$in/u8t.json"
jrun u8t trunk "$in/u8t.json" --device cpu --time 2 --quiet
expect_rc 2
expect_err 'u8t\.json: name: not valid UTF-8' "the file and the field name"
printf '{"name": "s\xed\xa0\x80", "dt": 0.01, "steps": 3, "bodies": [{"shape": "sphere", "radius": 1}]}\n' > "$in/u8s.json"
jrun u8s scene "$in/u8s.json" --device cpu --quiet
expect_rc 2
expect_err 'u8s\.json: name: not valid UTF-8' "the file and the field name"
only_here

# --- item 7: two outputs naming one file: refused before any work ---
t0=$SECONDS
jrun clash circles --n 5 --device cpu --time 30 --out r.json --svg r.json --quiet
expect_rc 2
expect_err '--out r\.json and --svg r\.json: the same file' "both options"
jrun clash2 circles --n 5 --device cpu --time 30 --out r.json --txt ./r.json --quiet
expect_rc 2
expect_err 'the same file' "the clash"
jrun clash3 scene "$SRC/problems/scenes/demo-drop.json" --steps 20 --out r.json --csv r.json --quiet
expect_rc 2
expect_err '--out r\.json and --csv r\.json: the same file' "both options"
only_here

# --- item 7: a folder that cannot take the output: said before the search ---
jrun nodir circles --n 5 --device cpu --time 30 --out "$W/nonexistent/r.json" --quiet
expect_rc 3
expect_err 'nonexistent' "the folder"
jrun trunk_nodir trunk "$mesh" --device cpu --time 30 --out "$W/nonexistent/t.json" --quiet
expect_rc 3
expect_err 'nonexistent' "the folder"
mkdir -p "$W/dir.json"
jrun folder circles --n 5 --device cpu --time 30 --out "$W/dir.json" --quiet
expect_rc 2
expect_err 'names a folder' "the folder"

# --- item 7: a bad --svg leaves an existing result alone ---
jrun first circles --n 5 --device cpu --rounds 1 --out r.json --quiet
expect_rc 0
before=$(cksum < r.json)
jrun badsvg circles --n 5 --device cpu --time 30 --seed 2 --out r.json --svg "$W/nonexistent/x.svg" --quiet
expect_rc 3
expect_err 'nonexistent' "the --svg folder"
[ "$(cksum < r.json)" = "$before" ] || fail "jostle $CMD: replaced r.json though --svg could not be written"
only_here r.json r.svg r.txt
[ $((SECONDS - t0)) -lt 25 ] || fail "the refusals above ran a search (took $((SECONDS - t0)) s)"
rm -f ./*

# --- item 8: --out must name the JSON (the other outputs are named after it) ---
jrun outtxt circles --n 5 --device cpu --rounds 1 --out r.txt --quiet
expect_rc 2
expect_err '--out r\.txt: .*\.json' "the option and .json"
jrun outtxt_trunk trunk "$mesh" --device cpu --time 2 --out t.svg --quiet
expect_rc 2
expect_err '--out t\.svg: .*\.json' "the option and .json"
jrun outtxt_scene scene "$SRC/problems/scenes/demo-drop.json" --steps 2 --out s.csv --quiet
expect_rc 2
expect_err '--out s\.csv: .*\.json' "the option and .json"
only_here

# --- a good run writes exactly its outputs, no temporary file left ---
jrun good scene "$SRC/problems/scenes/demo-drop.json" --steps 20 --out s.json --csv s.csv --glb s.glb --quiet
expect_rc 0
only_here s.json s.csv s.glb
jpy 'd = load(sys.argv[1]); d["scene"]["name"] == "demo-drop" or fail("scene.name %r" % d["scene"]["name"])' s.json \
  || fail "the scene result is not valid JSON"

echo "PASS: cli_outputs"
