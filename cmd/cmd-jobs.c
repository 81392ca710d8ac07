/*
 * cmd-jobs.c: `hunter jobs [--json]`: every job of the backend that runs
 * the state directory, over console.sock: its phase, ranks (and their
 * range), nodes, batch, rank 0's step and epoch, goodput and age;
 * --json the backend's objects, one a line.  Unknown is "–".
 */
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/proto/proto.h"
#include "cmd/cmd.h"

static void
jobs_row(const json_t *o)
{
	const json_t	*nodes = json_object_get(o, "nodes"), *v;
	char		 where[256] = "", ranks[32], gp[32], mb[32], step[48];
	size_t		 i, off = 0;

	json_array_foreach(nodes, i, v) {
		const char *n = json_string_value(v);

		/* Each node once, with its count of ranks. */
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(json_string_value(json_array_get(nodes, k)),
			    n) == 0;
		if (seen || off >= sizeof where - 1)
			continue;
		size_t c = 0;
		for (size_t k = 0; k < json_array_size(nodes); k++)
			c += strcmp(json_string_value(json_array_get(nodes, k)),
			    n) == 0;
		off += (size_t)snprintf(where + off, sizeof where - off,
		    "%s%s:%zu", off ? "," : "", n, c);
	}
	snprintf(ranks, sizeof ranks, "%lld (%lld-%lld)",
	    (long long)json_integer_value(json_object_get(o, "ranks")),
	    (long long)json_integer_value(json_object_get(o, "min_ranks")),
	    (long long)json_integer_value(json_object_get(o, "max_ranks")));
	if (json_is_number(json_object_get(o, "goodput")))
		snprintf(gp, sizeof gp, "%.0f", json_number_value(
		    json_object_get(o, "goodput")));
	else
		snprintf(gp, sizeof gp, "\u2013");
	if (json_is_integer(json_object_get(o, "micro_batch")))
		snprintf(mb, sizeof mb, "%lld (%lldx%lld)",
		    (long long)json_integer_value(json_object_get(o,
		    "global_batch")), (long long)json_integer_value(
		    json_object_get(o, "micro_batch")), (long long)
		    json_integer_value(json_object_get(o, "accum")));
	else
		snprintf(mb, sizeof mb, "%lld", (long long)json_integer_value(
		    json_object_get(o, "global_batch")));
	if (json_is_integer(json_object_get(o, "step")))
		snprintf(step, sizeof step, "%lld (%lld)", (long long)
		    json_integer_value(json_object_get(o, "step")), (long long)
		    json_integer_value(json_object_get(o, "epoch")));
	else
		snprintf(step, sizeof step, "\u2013");
	printf("%-20s %-10s %-12s %-24s %-14s %-14s %10s %7.0fs\n",
	    json_string_value(json_object_get(o, "job")),
	    json_string_value(json_object_get(o, "phase")), ranks,
	    where[0] != '\0' ? where : "\u2013", mb, step, gp,
	    json_number_value(json_object_get(o, "age_s")));
}

static int
cmd_jobs(const struct cmd_args *a)
{
	json_t	*ans, *o;
	size_t	 i;

	if (console_request("jobs", json_pack("{s:s, s:s}", "t", MSG_CMD,
	    "cmd", "jobs"), &ans) != 0) {
		json_decref(ans);
		return 1;
	}
	if (!cmd_has(a, "json"))
		printf("%-20s %-10s %-12s %-24s %-14s %-14s %10s %8s\n",
		    "JOB", "PHASE", "RANKS", "NODES", "BATCH", "STEP (EPOCH)",
		    "GOODPUT", "AGE");
	json_array_foreach(json_object_get(ans, "jobs"), i, o) {
		if (cmd_has(a, "json")) {
			char *line = json_dumps(o, JSON_COMPACT |
			    JSON_PRESERVE_ORDER);

			printf("%s\n", line);
			free(line);
		} else
			jobs_row(o);
	}
	json_decref(ans);
	return 0;
}

static const struct cmd_option jobs_options[] = {
	{ "json", 'j', NULL, "one JSON object a job instead of the table" },
	{ NULL }
};

const struct cmd_entry cmd_jobs_entry = {
	.name = "jobs",
	.usage = "",
	.summary = "list the running backend's jobs: phase, ranks, nodes, "
	    "batch, step, goodput, age",
	.options = jobs_options,
	.args_min = 0,
	.args_max = 0,
	.exec = cmd_jobs,
};
