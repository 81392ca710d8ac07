/*
 * inet.c: "ADDR:PORT" parsing and TCP listening sockets (inet.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/errf.h"
#include "lib/inet.h"

#define INET_EXAMPLE	"expected ADDR:PORT, e.g. 127.0.0.1:9400, " \
	"0.0.0.0:9400, [::1]:9400 or :9400"

static int
inet_port(const char *s, unsigned *port)
{
	char		*end;
	unsigned long	 p;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	p = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || p > 65535)
		return -1;
	*port = (unsigned)p;
	return 0;
}

int
inet_parse(const char *s, struct inet_addr *a, char *err, size_t errlen)
{
	struct sockaddr_in	*v4 = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6	*v6 = (struct sockaddr_in6 *)&a->ss;
	char			 host[64];
	const char		*colon, *port;
	unsigned		 p;
	size_t			 n;

	memset(a, 0, sizeof *a);
	if (s == NULL || *s == '\0')
		goto bad;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (close == NULL || close[1] != ':' ||
		    (n = (size_t)(close - s - 1)) == 0 || n >= sizeof host)
			goto bad;
		memcpy(host, s + 1, n);
		host[n] = '\0';
		if (inet_port(close + 2, &p) != 0 ||
		    inet_pton(AF_INET6, host, &v6->sin6_addr) != 1)
			goto bad;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)p);
		a->len = sizeof *v6;
		return 0;
	}
	colon = strrchr(s, ':');
	port = colon != NULL ? colon + 1 : s;
	n = colon != NULL ? (size_t)(colon - s) : 0;
	if (n >= sizeof host || inet_port(port, &p) != 0)
		goto bad;
	memcpy(host, s, n);
	host[n] = '\0';
	if (n == 0 || strcmp(host, "localhost") == 0)
		snprintf(host, sizeof host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &v4->sin_addr) != 1)
		goto bad;
	v4->sin_family = AF_INET;
	v4->sin_port = htons((uint16_t)p);
	a->len = sizeof *v4;
	return 0;
bad:
	errf(err, errlen, "'%.80s': %s", s != NULL ? s : "", INET_EXAMPLE);
	return -1;
}

void
inet_format(const struct inet_addr *a, char *buf, size_t len)
{
	char	 host[INET6_ADDRSTRLEN];

	if (a->ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *v6 = (const void *)&a->ss;

		inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
		snprintf(buf, len, "[%s]:%u", host, ntohs(v6->sin6_port));
	} else {
		const struct sockaddr_in *v4 = (const void *)&a->ss;

		inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
		snprintf(buf, len, "%s:%u", host, ntohs(v4->sin_port));
	}
}

int
inet_listen(struct inet_addr *a, char *err, size_t errlen)
{
	char	 name[80];
	int	 fd, one = 1;

	inet_format(a, name, sizeof name);
	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (fd < 0) {
		errf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	/* A port left in TIME_WAIT by the last run is free to take; one
	 * that something listens on is still refused. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&a->ss, a->len) != 0 ||
	    listen(fd, 64) != 0) {
		errf(err, errlen, "%s: %s%s", name, strerror(errno),
		    errno == EADDRINUSE ? " (another program listens there)" :
		    errno == EADDRNOTAVAIL ? " (not an address of this machine)" :
		    "");
		close(fd);
		return -1;
	}
	a->len = sizeof a->ss;
	getsockname(fd, (struct sockaddr *)&a->ss, &a->len);
	return fd;
}
