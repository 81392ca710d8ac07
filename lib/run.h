/*
 * run.h: run a command and take what it prints, for the few tools hunter
 * asks about the machine it runs on (Slurm's scontrol).  No shell is
 * involved: argv goes to execvp as it is.
 */
#ifndef HUNTER_RUN_H
#define HUNTER_RUN_H

#include <stddef.h>

/* What a command may print before it is cut off (its output is read to
 * the end regardless, so it never blocks on a full pipe). */
#define RUN_OUTPUT_MAX	(4u << 20)

/*
 * Run argv[0] (searched in PATH) with stdin on /dev/null, wait at most
 * timeout_ms, and return its exit status (0..255), with its stdout in
 * *out (NUL-terminated, the caller frees it) and the last line it wrote
 * to stderr in err.  -1 with err when it cannot be started, is killed by
 * a signal, or runs out of time (then it is killed); *out is NULL then.
 */
int	run_capture(const char *const argv[], char **out, int timeout_ms,
	    char *err, size_t errlen);

#endif
