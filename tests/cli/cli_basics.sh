#!/usr/bin/env bash
# version, --help, circles --help, unknown subcommand.
. "$(dirname "$0")/common.sh"

ver=$(sed -n "s/^[[:space:]]*version:[[:space:]]*'\([^']*\)'.*/\1/p" "$SRC/meson.build" | head -n 1)
[ -n "$ver" ] || ver=0.1.0

jrun version version
expect_rc 0
first=$(head -n 1 "$W/version.out")
case $first in
  "jostle $ver" | "jostle $ver "*) ;;
  *) fail "jostle version: expected first line 'jostle $ver', got '$first'" ;;
esac

jrun help --help
expect_rc 0
for word in circles verify version; do
  grep -qw -- "$word" "$W/help.out" || fail "jostle --help: expected stdout to list '$word'"
done

jrun circles_help circles --help
expect_rc 0
grep -q -- '--seed' "$W/circles_help.out" || fail "jostle circles --help: expected stdout to mention --seed"

jrun unknown frobnicate
expect_rc 2
expect_err 'frobnicate' "the unknown subcommand 'frobnicate'"

echo "PASS: cli_basics"
