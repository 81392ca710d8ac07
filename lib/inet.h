/*
 * inet.h: TCP addresses for the few listeners that face other programs
 * (the Prometheus endpoint): "ADDR:PORT" read into a socket address, and
 * a listening socket whose failure says which address and why.  ADDR is
 * an IPv4 address, a bracketed IPv6 one or "localhost"; without it (":PORT"
 * or "PORT") the address is 127.0.0.1, so nothing is exposed beyond the
 * machine unless asked for.
 */
#ifndef HUNTER_INET_H
#define HUNTER_INET_H

#include <stddef.h>
#include <sys/socket.h>

struct inet_addr {
	struct sockaddr_storage	 ss;
	socklen_t		 len;
};

/* Parse s.  0, or -1 with err saying what a good one looks like. */
int	inet_parse(const char *s, struct inet_addr *, char *err, size_t errlen);
/* "127.0.0.1:9400" or "[::1]:9400" into buf. */
void	inet_format(const struct inet_addr *, char *buf, size_t len);
/* A listening TCP socket (close-on-exec, non-blocking) on a; port 0 takes
 * a free one, and a gets the port bound.  fd, or -1 with err. */
int	inet_listen(struct inet_addr *a, char *err, size_t errlen);

#endif
