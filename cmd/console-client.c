/*
 * console-client.c: a one-shot client of the backend's console.sock
 * (hunter ctl, submit, jobs): connect to the state directory's backend,
 * send one command frame, read its one answer.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/net.h"
#include "lib/statedir.h"
#include "backend/proto/proto.h"
#include "cmd/cmd.h"

int
console_request(const char *who, json_t *cmd, json_t **answer)
{
	struct proto_reader rd;
	char		 dir[PATH_MAX], path[PATH_MAX + 16], err[512];
	int		 fd, ok = 0;

	*answer = NULL;
	if (statedir_path(dir, sizeof dir) != 0) {
		fprintf(stderr, "hunter %s: no state directory\n", who);
		json_decref(cmd);
		return -1;
	}
	snprintf(path, sizeof path, "%s/console.sock", dir);
	if ((fd = net_connect_unix(path, err, sizeof err)) < 0) {
		if (errno == EPERM)	/* someone else's listener */
			fprintf(stderr, "hunter %s: %s\n", who, err);
		else
			fprintf(stderr, "hunter %s: no backend is running for "
			    "%s (%s)\n", who, dir, err);
		json_decref(cmd);
		return -1;
	}
	if (proto_send_new(fd, cmd) != 0) {
		fprintf(stderr, "hunter %s: %s\n", who, strerror(errno));
		close(fd);
		return -1;
	}
	proto_reader_init(&rd);
	errno = 0;
	while ((ok = proto_reader_next(&rd, answer)) == 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		/* A backend that stopped (Ctrl-Z) answers nothing. */
		if (poll(&pfd, 1, PROTO_SEND_TIMEOUT_MS) == 0) {
			errno = ETIMEDOUT;
			break;
		}
		if (proto_reader_fill(&rd, fd) <= 0)
			break;
	}
	proto_reader_free(&rd);
	close(fd);
	if (ok == 1 && proto_kind(*answer, NULL, 0) == PK_OK)
		return 0;
	if (ok == 1)
		fprintf(stderr, "hunter %s: %s\n", who, json_string_value(
		    json_object_get(*answer, "reason")) ?: "refused");
	else if (errno == ETIMEDOUT)
		fprintf(stderr, "hunter %s: no answer from the backend in %d s "
		    "(is it stopped?)\n", who, PROTO_SEND_TIMEOUT_MS / 1000);
	else
		fprintf(stderr, "hunter %s: no answer from the backend\n", who);
	return -1;
}
