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
	struct proto_reader rd;
	char		 dir[PATH_MAX], path[PATH_MAX + 16], err[512];
	json_t		*m = NULL, *ans = NULL;
	int		 fd, rc = 1, ok = 0, known = 0;
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
	if (statedir_path(dir, sizeof dir) != 0) {
		fprintf(stderr, "hunter ctl: no state directory\n");
		json_decref(m);
		return 1;
	}
	snprintf(path, sizeof path, "%s/console.sock", dir);
	if ((fd = net_connect_unix(path, err, sizeof err)) < 0) {
		if (errno == EPERM)	/* someone else's listener */
			fprintf(stderr, "hunter ctl: %s\n", err);
		else
			fprintf(stderr, "hunter ctl: no backend is running for "
			    "%s (%s)\n", dir, err);
		json_decref(m);
		return 1;
	}
	if (proto_send_new(fd, m) != 0) {
		fprintf(stderr, "hunter ctl: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	proto_reader_init(&rd);
	errno = 0;
	while ((ok = proto_reader_next(&rd, &ans)) == 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		/* A backend that stopped (Ctrl-Z) answers nothing. */
		if (poll(&pfd, 1, PROTO_SEND_TIMEOUT_MS) == 0) {
			errno = ETIMEDOUT;
			break;
		}
		if (proto_reader_fill(&rd, fd) <= 0)
			break;
	}
	if (ok == 1 && proto_kind(ans, NULL, 0) == PK_OK) {
		printf("%s: %s %s\n", job, verb,
		    json_string_value(json_object_get(ans, "reason")) ?: "sent");
		rc = 0;
	} else if (ok == 1)
		fprintf(stderr, "hunter ctl: %s\n",
		    json_string_value(json_object_get(ans, "reason")) ?: "refused");
	else if (errno == ETIMEDOUT)
		fprintf(stderr, "hunter ctl: no answer from the backend in %d s "
		    "(is it stopped?)\n", PROTO_SEND_TIMEOUT_MS / 1000);
	else
		fprintf(stderr, "hunter ctl: no answer from the backend\n");
	json_decref(ans);
	proto_reader_free(&rd);
	close(fd);
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
