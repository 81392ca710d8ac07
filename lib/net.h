/*
 * net.h: unix sockets for the links between hunter's processes.  A
 * listening socket is created 0600 inside a directory made 0700, so only
 * its owner can connect.
 */
#ifndef HUNTER_NET_H
#define HUNTER_NET_H

#include <stddef.h>

/* Listen on path (replacing a stale socket).  fd, or -1 with err. */
int	net_listen_unix(const char *path, char *err, size_t errlen);
/* Connect to path.  fd, or -1 with errno and err set. */
int	net_connect_unix(const char *path, char *err, size_t errlen);
int	net_set_nonblock(int fd, int on);
/* Raise this process's open-file limit (the soft one, up to the hard
 * one) to want; returns the limit it has now. */
long	net_raise_nofile(long want);
/* Whether something accepts connections on path now. */
int	net_unix_alive(const char *path);

#endif
