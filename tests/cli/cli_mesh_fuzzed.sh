#!/usr/bin/env bash
# Meshes the fuzzer found (tests/fuzz/corpus/mesh, docs/robustness.md) that
# crashed, aborted, hung or corrupted memory inside assimp 5.2.5: each now
# exits 2 quickly with a message naming the file, and writes nothing.
. "$(dirname "$0")/common.sh"

export JL_TIMEOUT=30
c=$SRC/tests/fuzz/corpus/mesh
o=$W/o
mkdir -p "$o"

# tb FILE PATTERN WHAT: jostle trunk FILE exits 2 with PATTERN on stderr, writes nothing.
tb() {
  local f=$1 pat=$2 what=$3 left
  cp "$c/$f" "$W/$f"
  jrun "$f" trunk "$W/$f" --device cpu --out "$o/$f.json" --quiet
  expect_rc 2
  expect_err "$f(:[0-9]+)?: $pat" "$what"
  left=$(ls -A "$o")
  [ -z "$left" ] || fail "jostle $CMD: expected no output file, found: $left"
}

# It never returned.
tb ply-no-end-header.ply 'PLY header has no end_header line' "the missing end_header"
# These crashed (exit 139).
tb ply-format-cut.ply 'PLY header: unknown format' "the cut format line"
tb ply-binary-no-body.ply 'PLY header declares 3 vertex elements' "the missing data"
tb ply-ascii-bad-property.ply 'PLY header: bad property' "the garbled property"
tb solid-empty.stl 'cannot read the mesh: Validation failed' "the empty mesh"
# These aborted in assimp's triangulation (exit 134).
tb ply-faces-no-indices.ply 'PLY header: unknown statement' "the garbled property line"
tb ply-empty-face.ply 'cannot read the mesh: face 0 has no indices' "the empty face"
# assimp's reader wrote past its buffers on these (valgrind), which crashed a later read.
tb ply-two-formats.ply 'PLY header: unknown format' "the format version 2.0"
tb ply-garbled-header.ply 'PLY header: unknown statement' "the garbled header line"
# A count assimp takes from the start of a line asked for 16 GB (std::bad_alloc).
tb ply-ascii-list-line.ply 'PLY face 0: a list of 4294967295 items' "the list count"
exit 0
