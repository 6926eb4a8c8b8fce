#!/bin/sh
# Test double run in front of the simulated benchmark (--wrapper): it
# starts a grandchild of the launch (its output elsewhere), which must not
# outlive the launch, and while
# the file named by NCCLTUNE_TEST_HOLD exists it blocks (after creating
# HOLD.started), so a test can stop a launch that is running. Arguments and
# environment pass through untouched: "$@" is never re-read by the shell.
# With NCCLTUNE_TEST_JSON_DIR_MODE set it writes there the mode of the
# directory nccltune gave the benchmark for its -J output; with
# NCCLTUNE_TEST_ENV set, the environment it hands on (NUL-separated).
sleep 300 >/dev/null 2>&1 &
if [ -n "$NCCLTUNE_TEST_HOLD" ] && [ -e "$NCCLTUNE_TEST_HOLD" ]; then
	: >"$NCCLTUNE_TEST_HOLD.started"
	wait
fi
if [ -n "$NCCLTUNE_TEST_JSON_DIR_MODE" ]; then
	prev=
	for a in "$@"; do
		if [ "$prev" = "-J" ]; then
			stat -c %a "$(dirname "$a")" >"$NCCLTUNE_TEST_JSON_DIR_MODE"
		fi
		prev=$a
	done
fi
if [ -n "$NCCLTUNE_TEST_ENV" ]; then
	env -0 >"$NCCLTUNE_TEST_ENV"
fi
exec "$@"
