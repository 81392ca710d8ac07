/*
 * cmd-sched.c: `hunter sched decide [--policy NAME] [--serve]`: the
 * scheduling policy behind a JSON-lines protocol (policy-json.h,
 * docs/scheduling.md), so that any simulator can drive it: one request
 * a line on stdin, one reply a line on stdout, flushed.  A line that
 * cannot be served gets {"error": "..."} and the next one is read; with
 * --serve until end of input, else one line.  `hunter sched` alone
 * lists the policies.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/sched/policy.h"
#include "backend/sched/policy-json.h"
#include "cmd/cmd.h"

/* The policies, after the usage: hunter sched --help and a bad one. */
static void
sched_policies(FILE *f)
{
	fprintf(f, "policies:\n");
	for (int i = 0; policy_table[i] != NULL; i++)
		fprintf(f, "  %-8s %s%s\n", policy_table[i]->name,
		    policy_table[i]->summary, i == 0 ? " (the default)" : "");
}

/*
 * Read one line into *buf (grown as needed, at most POLICY_LINE_MAX
 * bytes kept).  Returns its length, -1 at end of input, or -2 for a line
 * too long, which is read to its end and dropped.
 */
static long
sched_line(FILE *in, char **buf, size_t *cap)
{
	size_t	 len = 0;
	bool	 over = false, any = false;
	char	 chunk[65536];

	while (fgets(chunk, sizeof chunk, in) != NULL) {
		size_t	 n = strlen(chunk);
		bool	 end = n > 0 && chunk[n - 1] == '\n';

		any = true;
		if (end)
			chunk[--n] = '\0';
		if (!over && len + n > POLICY_LINE_MAX)
			over = true;
		if (!over) {
			if (len + n + 1 > *cap) {
				*cap = (len + n + 1) * 2;
				*buf = xrealloc(*buf, *cap);
			}
			memcpy(*buf + len, chunk, n);
			len += n;
			(*buf)[len] = '\0';
		}
		if (end)
			break;
	}
	if (!any)
		return -1;
	if (over)
		return -2;
	if (len > 0 && (*buf)[len - 1] == '\r')
		(*buf)[--len] = '\0';
	return (long)len;
}

/* Serve one line; whether the reply was an allocation. */
static bool
sched_serve(const struct policy *p, const char *line, long len)
{
	struct policy_doc doc;
	struct policy_reply rep;
	char	 err[1024], *out;
	bool	 ok = false;

	if (len == -2)
		snprintf(err, sizeof err, "the request is longer than %d bytes",
		    POLICY_LINE_MAX);
	else if (len == 0)
		snprintf(err, sizeof err, "an empty line is no request");
	else if (policy_json_read(&doc, line, (size_t)len, err,
	    sizeof err) == 0) {
		ok = policy_decide(p, &doc.req, &rep, err, sizeof err) == 0;
		out = ok ? policy_json_reply(&doc.req, &rep) : NULL;
		if (ok) {
			printf("%s\n", out);
			free(out);
			policy_reply_free(&rep);
		}
		policy_json_free(&doc);
	}
	if (!ok) {
		out = policy_json_error(err);
		printf("%s\n", out);
		free(out);
	}
	fflush(stdout);
	return ok;
}

static int
cmd_sched(const struct cmd_args *a)
{
	const struct policy *policy = policy_table[0];
	const char	*name = cmd_get(a, "policy");
	bool		 serve = cmd_has(a, "serve");
	char		*buf = NULL, *out;
	size_t		 cap = 0;
	long		 len;
	bool		 ok = true;
	int		 served = 0;

	if (strcmp(a->argv[0], "decide") != 0) {
		fprintf(stderr, "hunter sched: unknown verb '%s' (decide is "
		    "the one)\n", a->argv[0]);
		cmd_usage(&cmd_sched_entry);
		sched_policies(stderr);
		return 2;
	}
	if (name != NULL && (policy = policy_find(name)) == NULL) {
		fprintf(stderr, "hunter sched: unknown policy '%s'\n", name);
		sched_policies(stderr);
		return 2;
	}
	while ((len = sched_line(stdin, &buf, &cap)) != -1) {
		ok = sched_serve(policy, buf, len);
		served++;
		if (!serve)
			break;
	}
	if (served == 0 && !serve) {
		out = policy_json_error("no request: the input ended");
		printf("%s\n", out);
		free(out);
		ok = false;
	}
	free(buf);
	return serve || ok ? 0 : 1;
}

static const struct cmd_option sched_options[] = {
	{ "policy", 0, "NAME", "the policy that decides (goodput, fifo, las)" },
	{ "serve", 0, NULL, "answer every line until the end of the input, "
	    "not one" },
	{ NULL }
};

const struct cmd_entry cmd_sched_entry = {
	.name = "sched",
	.usage = "decide",
	.summary = "the scheduling policy: a JSON request a line on stdin, a "
	    "JSON reply a line on stdout",
	.options = sched_options,
	.args_min = 1,
	.args_max = 1,
	.exec = cmd_sched,
	.more_help = sched_policies,
};
