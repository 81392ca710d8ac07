#!/bin/sh
# The suite runs tests side by side (make check -j2), so no test signals
# or looks for processes by name across the machine: a `pkill -f "hunter
# worker"` in one test stops the job of the test beside it (it did, in
# CI: agent-stop's new generation ended at once).  A test finds its own
# processes by their parent (pgrep -P: test_workers in
# tests/integration/lib.sh) or by the pids it started or was told.
# Fails on each pkill, killall or pgrep without -P in tests/, comments
# aside; prints the offending lines.
set -eu
top=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top"
bad=$(grep -rnE '(^|[^a-z_-])(pkill|killall|pgrep)([^a-z_-]|$)' tests \
    --include='*.sh' --include='*.py' --include='*.inc' |
    grep -vE '^[^:]*:[0-9]+:[[:space:]]*#' |
    grep -vE 'pgrep( -[A-Za-z]+)* -P ' |
    grep -v '^tests/house/kill-scope.sh:' || true)
if [ -n "$bad" ]; then
	echo "$bad"
	echo "FAIL: a test signals or counts processes machine-wide (use pgrep -P, test_workers)"
	exit 1
fi
echo "ok: no test signals or counts processes by name machine-wide"
