#!/usr/bin/env bash
# The sqllogictest gate of CI (.ci/run calls it).
#
# Runs the gate set (../shared/sqllogictest next to the repository or next
# to the main worktree of a linked one, or $SLT_GATE_DIR) against percdb started in process on an in-memory store, and
# fails when fewer records pass than tests/sqllogic/floor.txt records. The
# floor only ever rises: when more records pass, the output says so and gives
# the new count to put in the floor file (in the same commit as the fix).
#
# Environment: SLT_GATE_DIR (gate set), SLT_JOBS (files at once, default 2),
# SLT_BUDGET (time budget, default 18m: records left when it runs out count
# as not passed, so a slowdown fails the gate too), SLT_RECORD_TIMEOUT
# (limit of one record, default 10s: a record over it fails).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
corpus="${SLT_GATE_DIR:-$root/../shared/sqllogictest}"
if [[ -z "${SLT_GATE_DIR:-}" && ! -d "$corpus" ]]; then
	# A linked worktree lives elsewhere: look beside the main worktree, whose
	# .git directory every worktree shares.
	common="$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)"
	if [[ -n "$common" ]]; then
		corpus="$(dirname "$common")/../shared/sqllogictest"
	fi
fi
if [[ ! -d "$corpus" ]]; then
	echo "sqllogictest gate: no gate set at $corpus, skipped"
	exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
go build -o "$tmp/slt" ./tests/sqllogic/cmd/slt
echo "sqllogictest gate: $corpus against in-process percdb"
"$tmp/slt" -percdb -j "${SLT_JOBS:-2}" -timeout "${SLT_BUDGET:-18m}" -record-timeout "${SLT_RECORD_TIMEOUT:-10s}" \
	-floor tests/sqllogic/floor.txt -failures 5 -classes 20 \
	-json "$tmp/summary.json" "$corpus"
