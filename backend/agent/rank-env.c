/*
 * rank-env.c: the environment a rank starts with, a worker's or a
 * program's.  The agent's own (with the OPENBLAS_CORETYPE that
 * blas_reexec() set when the agent started, unless the operator had one,
 * lib/blas.h), what a program job's env sets over it, and the threads
 * the rank may run where neither says: OPENBLAS_NUM_THREADS and
 * OMP_NUM_THREADS, one number for the BLAS and for any pool of the
 * rank's kernels, the node's cores over the CPU and cuda slots of its
 * machine (the launch's host_slots: every node of the cluster file on
 * the same host), at least one.  Placement puts no more ranks on a node than its
 * slots, so the ranks of a machine never run more threads than it has
 * cores, unless its nodes declare more slots than cores (the embedded
 * cluster's four local nodes of two slots do) or the operator's
 * environment or the job's env asks for more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/blas.h"
#include "lib/cpuid.h"
#include "lib/xmalloc.h"
#include "backend/agent/agent.h"

extern char **environ;

/* What the rank gets of these unless its environment has them. */
static const char *const rank_thread_vars[] = { "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS" };

/* Whether entry ("NAME=value") is for name. */
static bool
env_is(const char *entry, const char *name, size_t n)
{
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* An entry of the agent's environment the rank does not inherit: what
 * env sets instead, and for a program the variables the agent sets. */
static bool
rank_env_replaced(const json_t *env, const char *entry, bool program)
{
	const char	*k;
	json_t		*v;

	json_object_foreach((json_t *)env, k, v) {
		if (env_is(entry, k, strlen(k)))
			return true;
	}
	return program && (env_is(entry, "HUNTER_FD", 9) ||
	    env_is(entry, "HUNTER_NODE", 11));
}

char **
agent_rank_envp(struct agent *a, const json_t *launch, const json_t *env,
    bool program)
{
	json_t		*slots = json_object_get(launch, "host_slots");
	size_t		 n = 0, k = 0;
	const char	*key;
	json_t		*v;
	char		**e;
	int		 threads;

	/* launch_unpack required host_slots; without it, a slot a core. */
	threads = blas_rank_threads(cpu_cores(), json_is_integer(slots) ?
	    (int)json_integer_value(slots) : cpu_cores());
	while (environ[n] != NULL)
		n++;
	e = xcalloc(n + json_object_size(env) + 5, sizeof *e);
	for (size_t i = 0; i < n; i++) {
		if (!rank_env_replaced(env, environ[i], program))
			e[k++] = xstrdup(environ[i]);
	}
	json_object_foreach((json_t *)env, key, v) {
		if (json_is_string(v))
			xasprintf(&e[k++], "%s=%s", key, json_string_value(v));
	}
	for (size_t t = 0; t < sizeof rank_thread_vars /
	    sizeof rank_thread_vars[0]; t++) {
		const char	*name = rank_thread_vars[t];
		size_t		 i;

		for (i = 0; i < k && !env_is(e[i], name, strlen(name)); i++)
			;
		if (i == k)
			xasprintf(&e[k++], "%s=%d", name, threads);
	}
	if (program) {
		e[k++] = xstrdup("HUNTER_FD=3");
		xasprintf(&e[k++], "HUNTER_NODE=%s", a->node);
	}
	return e;
}

void
agent_envp_free(char **e)
{
	if (e == NULL)
		return;
	for (int i = 0; e[i] != NULL; i++)
		free(e[i]);
	free(e);
}
