/*
 * cmd-ctl.c: `hunter ctl JOB CMD [ARGS]` sends a control command to the
 * backend that runs the state directory (over its console.sock):
 *
 *   hunter ctl JOB pause | resume | checkpoint | stop
 *   hunter ctl JOB migrate RANK NODE
 *
 * It prints the backend's answer, or says that none came within
 * PROTO_SEND_TIMEOUT_MS; what then happens shows as events in the
 * console, in `hunter run`'s output and in the journal.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/net.h"
#include "lib/statedir.h"
#include "backend/proto/proto.h"
#include "cmd/cmd.h"

static int
cmd_ctl(const struct cmd_args *a)
{
	const char	*job = a->argv[0], *verb = a->argv[1];
	static const char *simple[] = { "pause", "resume", "checkpoint", "stop" };
	json_t		*m = NULL, *ans = NULL;
	int		 rc = 1, known = 0;
	char		*end;
	long		 rank;

	for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
		if (strcmp(verb, simple[i]) == 0 && a->argc == 2 && ++known)
			m = json_pack("{s:s, s:s, s:s}", "t", MSG_CMD, "cmd",
			    simple[i], "job", job);
	}
	if (strcmp(verb, "migrate") == 0 && a->argc == 4) {
		known = 1;
		errno = 0;
		rank = strtol(a->argv[2], &end, 10);
		if (*end != '\0' || end == a->argv[2] || errno != 0 ||
		    rank < 0 || rank > INT_MAX) {
			fprintf(stderr, "hunter ctl: bad rank '%s'\n", a->argv[2]);
			return 2;
		}
		m = json_pack("{s:s, s:s, s:s, s:i, s:s}", "t", MSG_CMD, "cmd",
		    "migrate", "job", job, "rank", (int)rank, "node", a->argv[3]);
	}
	if (m == NULL && known) {	/* json_pack refused a name */
		fprintf(stderr, "hunter ctl: the job or node name is not "
		    "UTF-8\n");
		return 2;
	}
	if (m == NULL)
		return cmd_usage(&cmd_ctl_entry);
	if (console_request("ctl", m, &ans) == 0) {
		printf("%s: %s %s\n", job, verb,
		    json_string_value(json_object_get(ans, "reason")) ?: "sent");
		rc = 0;
	}
	json_decref(ans);
	return rc;
}

const struct cmd_entry cmd_ctl_entry = {
	.name = "ctl",
	.usage = "JOB pause|resume|checkpoint|stop\nJOB migrate RANK NODE",
	.summary = "control a running job through the backend that runs it",
	.args_min = 2,
	.args_max = 4,
	.exec = cmd_ctl,
};
