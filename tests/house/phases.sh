#!/bin/sh
# The house rule of a job's life (docs/architecture.md, "A job's life"):
# nothing but backend/core/job.c writes a job's or a rank's phase.  An
# assignment to a member called phase (or phase_since) anywhere else in
# the product is printed, and fails the test.
set -eu
top=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top"
if grep -rnE '(->|\.)phase(_since)?[[:space:]]*(=[^=]|\+\+|--|[-+|&]=)' \
	--include='*.c' --include='*.h' lib kernels backend tui bench cmd |
	grep -v '^backend/core/job\.c:'; then
	echo "the lines above write a phase outside backend/core/job.c"
	exit 1
fi
echo "phases: only backend/core/job.c writes a job's or a rank's phase"
