#!/usr/bin/env bash
# Every reader's limits (docs/formats.md, "Input files: limits"): regular files
# only, at most 1 GiB, declared counts that fit the file, no NUL byte, the same
# "empty file" and line/column messages from every JSON reader, and no raw
# control byte echoed to the terminal. Each case exits 2 quickly with a
# message naming the file and writes nothing. The bad files are made here.
. "$(dirname "$0")/common.sh"

# A regression that reads or allocates for a count must fail here, not eat the
# machine: 2 GB of address space is far more than any case below needs. ASan
# reserves terabytes of address space, so a sanitized build runs without it.
if ! ldd "$JOSTLE" 2>/dev/null | grep -q libasan; then
  ulimit -v 2000000
fi
export JL_TIMEOUT=30

in=$W/in
o=$W/o
mkdir -p "$in" "$o"

# bad NAME PATTERN WHAT ARGS...: jostle ARGS exits 2 with PATTERN on stderr, writes nothing.
bad() {
  local name=$1 pat=$2 what=$3
  shift 3
  jrun "$name" "$@"
  expect_rc 2
  expect_err "$pat" "$what"
  no_output
}

# ---- files that are not regular files, or too large ----

mkdir "$in/dir.json" "$in/dir.stl"
mkfifo "$in/fifo.json"
truncate -s 1025M "$in/huge.json"   # sparse: no disk used
cp "$in/huge.json" "$in/huge.stl" --sparse=always

for f in /dev/zero "$in/dir.json" "$in/fifo.json" "$in/huge.json"; do
  case $f in
    /dev/zero) pat='/dev/zero: not a regular file \(a character device\)' ;;
    *dir.json) pat='dir\.json: is a directory' ;;
    *fifo.json) pat='fifo\.json: not a regular file \(a FIFO\)' ;;
    *) pat='huge\.json: too large: 1074790400 bytes, the limit is 1 GiB' ;;
  esac
  bad problem "$pat" "the file kind or size" circles --problem "$f" --device cpu --time 1 --out "$o/r.json"
  bad verify "$pat" "the file kind or size" verify "$f"
  bad resume "$pat" "the file kind or size" circles --n 3 --resume "$f" --device cpu --time 1 --out "$o/r.json"
  bad trunk_problem "$pat" "the file kind or size" trunk "$f" --device cpu --out "$o/r.json"
  bad scene "$pat" "the file kind or size" scene "$f" --device cpu --out "$o/r.json"
done
bad mesh_dir 'dir\.stl: is a directory' "the directory" trunk "$in/dir.stl" --device cpu --out "$o/r.json"
bad mesh_dev '/dev/zero: not a regular file' "the device" trunk /dev/zero --device cpu --out "$o/r.json"
bad mesh_huge 'huge\.stl: too large' "the size" trunk "$in/huge.stl" --device cpu --out "$o/r.json"

# ---- meshes whose contents claim more than the file holds ----

# mesh KIND FILE [ARG]: writes a closed 1000 mm cube as PLY or binary STL, spoilt by KIND.
mesh() {
  "$PY" - "$@" <<'PYEOF'
import struct, sys
kind, path = sys.argv[1], sys.argv[2]
V = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
F = [(0, 2, 1), (0, 3, 2), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4),
     (1, 2, 6), (1, 6, 5), (2, 3, 7), (2, 7, 6), (3, 0, 4), (3, 4, 7)]
P = [[1000.0 * c for c in v] for v in V]
if kind == "far":
    P[6] = [1e30] * 3
faces = [list(f) for f in F]
if kind == "index":
    faces[5][1] = 9999999
with open(path, "wb") as out:
    if kind.startswith("stl"):
        count = {"stl": 12, "stl_short": 1000, "stl_wrap": 85899358}[kind]
        body = b"".join(struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *P[i]) for i in f)
                        + b"\0\0" for f in F)
        data = b"x" * 80 + struct.pack("<I", count) + body
        if kind == "stl_wrap":   # 84 + 50 * count wraps to 688 in 32 bits
            data += b"\0" * (688 - len(data))
        out.write(data)
    elif kind == "bin_list":
        head = ("ply\nformat binary_little_endian 1.0\nelement vertex 8\nproperty float x\n"
                "property float y\nproperty float z\nelement face 12\n"
                "property list uint int vertex_indices\nend_header\n")
        out.write(head.encode())
        for p in P:
            out.write(struct.pack("<3f", *p))
        for i, f in enumerate(faces):
            out.write(struct.pack("<I", 2000000000 if i == 5 else 3) + struct.pack("<3i", *f))
    else:
        nf = 1200000000 if kind == "faces" else 12
        lines = ["ply", "format ascii 1.0", "element vertex 8", "property float x",
                 "property float y", "property float z", "element face %d" % nf,
                 "property list uchar int vertex_indices", "end_header"]
        lines += ["%g %g %g" % tuple(p) for p in P]
        lines += ["%d %d %d %d" % (2000000000 if kind == "ascii_list" and i == 5 else 3, *f)
                  for i, f in enumerate(faces)]
        out.write(("\n".join(lines) + "\n").encode())
PYEOF
}
for k in ok index far faces ascii_list bin_list; do mesh "$k" "$in/$k.ply"; done
for k in stl stl_short stl_wrap; do mesh "$k" "$in/$k.stl"; done
[ "$(wc -c < "$in/faces.ply")" -lt 400 ] || fail "faces.ply should be a few hundred bytes"

tb() { # trunk on a mesh, expecting exit 2
  local name=$1 pat=$2 what=$3 f=$4
  shift 4
  bad "$name" "$pat" "$what" trunk "$f" --device cpu --out "$o/$name.json" --quiet "$@"
}
# It used to crash in assimp's post-processing (exit 139).
tb index 'index\.ply: face 5 refers to vertex 9999999, the mesh has 8 vertices' "the bad index" "$in/index.ply"
# It used to grow to 7.7 GB.
tb faces 'faces\.ply: PLY header declares 1200000000 face elements: .*but the file has [0-9]+ bytes after the header' \
  "the declared face count" "$in/faces.ply"
tb ascii_list 'ascii_list\.ply: PLY face 5: a list of 2000000000 items, more than the rest of the file holds' \
  "the list count" "$in/ascii_list.ply"
tb bin_list 'bin_list\.ply: PLY face 5: a list of 2000000000 items' "the list count" "$in/bin_list.ply"
tb stl_short 'stl_short\.stl: binary STL header declares 1000 triangles, which need 84 \+ 50 x 1000 = 50084 bytes, the file has 684 bytes' \
  "the triangle count" "$in/stl_short.stl"
tb stl_wrap 'stl_wrap\.stl: binary STL header declares 85899358 triangles' "the triangle count" "$in/stl_wrap.stl"
# It used to say "open surface".
tb far 'far\.ply: vertex [0-9]+ has a coordinate out of range \(1e\+30\): \|coordinate\| must be below 1e\+07 in the file.s units \(1e\+07 mm' \
  "the coordinate range" "$in/far.ply"
tb far_m 'must be below 10000 in the file.s units' "the limit in metres" "$in/far.ply" --units m
# The same cube, unspoilt, is read (so the cases above fail for their reason).
for f in ok.ply stl.stl; do
  jrun ok trunk "$in/$f" --device cpu --time 1 --out "$o/ok.json" --quiet
  expect_rc 0
  rm -f "$o"/ok.*
done

# ---- every JSON reader alike: empty file, NUL byte, NaN, escapes ----

mesh ok "$in/cube.ply"
# json_readers NAME PATTERN WHAT FILE: the file as a circle problem, circle result
# (verify and --resume), trunk problem, trunk result (--resume) and scene.
json_readers() {
  local name=$1 pat=$2 what=$3 f=$4
  bad "$name-problem" "$pat" "$what" circles --problem "$f" --device cpu --time 1 --out "$o/r.json"
  bad "$name-verify" "$pat" "$what" verify "$f"
  bad "$name-resume" "$pat" "$what" circles --n 3 --resume "$f" --device cpu --time 1 --out "$o/r.json"
  bad "$name-trunk" "$pat" "$what" trunk "$f" --device cpu --out "$o/r.json"
  bad "$name-trunk-resume" "$pat" "$what" trunk "$in/cube.ply" --resume "$f" --device cpu --time 1 --out "$o/r.json"
  bad "$name-scene" "$pat" "$what" scene "$f" --device cpu --out "$o/r.json"
}
: > "$in/empty.json"
printf ' \n\t\n' > "$in/blank.json"
# trunk said "invalid JSON (byte 0)" where circles said "empty file"
json_readers empty 'empty\.json: empty file \(expected a JSON object\)' "the empty file" "$in/empty.json"
json_readers blank 'blank\.json: empty file' "the blank file" "$in/blank.json"
# A NUL byte ended the text early: the garbage after it was never read.
printf '{"kind":"circles","radii":[1,2,3]}\0garbage' > "$in/nul.json"
json_readers nul 'nul\.json: NUL byte at byte 34' "the NUL byte" "$in/nul.json"
# Line and column for a NaN literal (circle results, trunk files and scenes gave no column).
printf '{"kind":"circles",\n  "radii":[1,NaN]}' > "$in/nan.json"
json_readers nan 'nan\.json: invalid JSON at line 2, column 14 \(byte 32\), near:   "radii":\[1,NaN\]\}' \
  "the line and column" "$in/nan.json"
# Trailing text after the value.
printf '{"kind":"circles","radii":[1]} x' > "$in/trail.json"
json_readers trail 'trail\.json: invalid JSON at line 1, column 32' "the trailing text" "$in/trail.json"
# The near: excerpt and quoted values escape control bytes: none reaches the terminal.
printf '{"kind":"circles",\n "radii":[1,2\033[31mRED]}' > "$in/esc.json"
json_readers esc 'esc\.json: invalid JSON at line 2, column 15 \(byte 33\), near:  "radii":\[1,2\\x1b\[31mRED\]\}' \
  "the escaped excerpt" "$in/esc.json"
printf '{"kind":"ci\\u001b[31mr\\ncles","radii":[1]}' > "$in/esc_kind.json"
bad esc_kind 'esc_kind\.json: kind: .*got "ci\\x1b\[31mr\\x0acles"' "the escaped value" \
  circles --problem "$in/esc_kind.json" --device cpu --out "$o/r.json"
for f in "$W"/esc*.err; do
  if LC_ALL=C grep -q "$(printf '\033')" "$f"; then fail "$f: a raw ESC byte reached stderr"; fi
  [ "$(wc -l < "$f")" -le 1 ] || fail "$f: the message should be one line"
done
# A value count beyond JL_JSON_VALUES_MAX is refused before parsing (parsed, the
# array would take about 2.5 GB).
"$PY" -c 'import sys; sys.stdout.write("[" + "0," * 25000000 + "0]")' > "$in/values.json"
bad values 'values\.json: too many JSON values \(about 25000002, the limit is 25000000\)' "the value count" \
  circles --problem "$in/values.json" --device cpu --out "$o/r.json"
rm -f "$in/values.json"

# ---- Packomania text ----

printf '1 0.5 0\n2 nan 0.1\n3 0 -0.5\n' > "$in/nan.txt"
bad pm_nan 'nan\.txt:2: circle 2: x is not a finite number' "the non-finite value" verify "$in/nan.txt" --n 3
printf '1 0.5 0\n2 0 0.1\n3 0 -0.5\n\0garbage\n' > "$in/nul.txt"
bad pm_nul 'nul\.txt: NUL byte at byte 25' "the NUL byte" verify "$in/nul.txt" --n 3
mkdir "$in/dir.txt"
bad pm_dir 'dir\.txt: is a directory' "the directory" verify "$in/dir.txt" --n 3

echo "PASS: cli_input_limits"
