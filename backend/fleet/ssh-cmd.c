/*
 * ssh-cmd.c: the command line the SSH launcher runs on a node.  An exec
 * request reaches the node as one string that the user's login shell
 * parses, so every argument goes in single quotes, where a POSIX shell
 * expands nothing; a single quote inside is closed, escaped and reopened
 * ('\'').  The spec already restricts node names and state_dir, but the
 * quoting does not rely on that.  "~" is not expanded inside quotes:
 * `hunter agent --stdio` expands a leading "~/" of its --dir itself.
 */
#include <stdio.h>
#include <string.h>

#include "backend/fleet/ssh.h"

int
fleet_ssh_quote(char *dst, size_t len, const char *s)
{
	size_t	 o = 0;

	if (len == 0)
		return -1;
#define PUT(c) do { if (o + 1 >= len) goto full; dst[o++] = (c); } while (0)
	PUT('\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'') {
			PUT('\'');
			PUT('\\');
			PUT('\'');
			PUT('\'');
		} else
			PUT(*s);
	}
	PUT('\'');
#undef PUT
	dst[o] = '\0';
	return 0;
full:
	dst[0] = '\0';
	return -1;
}

int
fleet_ssh_command(char *dst, size_t len, const char *exe, const char *node,
    const char *dir, int idle_exit_s)
{
	char	 qexe[4200], qnode[300], qdir[4200], idle[16];
	int	 n;

	snprintf(idle, sizeof idle, "%d", idle_exit_s);
	if (fleet_ssh_quote(qexe, sizeof qexe, exe) != 0 ||
	    fleet_ssh_quote(qnode, sizeof qnode, node) != 0 ||
	    fleet_ssh_quote(qdir, sizeof qdir, dir) != 0)
		return -1;
	n = snprintf(dst, len, "%s agent --stdio --node %s --dir %s "
	    "--idle-exit %s", qexe, qnode, qdir, idle);
	if (n < 0 || (size_t)n >= len) {
		if (len > 0)
			dst[0] = '\0';
		return -1;
	}
	return 0;
}

void
fleet_ssh_build_dir(char *dst, size_t len, const char *build)
{
	size_t	 o = 0;

	if (len == 0)
		return;
	for (; *build != '\0' && o + 1 < len; build++) {
		char c = *build;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			c = '_';
		if (o == 0 && (c == '.' || c == '-'))
			c = '_';
		dst[o++] = c;
	}
	dst[o] = '\0';
	if (o == 0)
		snprintf(dst, len, "unknown");
}
