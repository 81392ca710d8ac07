/*
 * net.h: unix sockets for the links between hunter's processes.  A
 * listening socket is created 0600 inside a directory made 0700, so only
 * its owner can connect; and both ends check that the process at the
 * other end is this user's (or root's), so a socket or a listener that
 * someone else planted is refused.
 */
#ifndef HUNTER_NET_H
#define HUNTER_NET_H

#include <stddef.h>

/* Listen on path (replacing a stale socket).  fd, or -1 with err. */
int	net_listen_unix(const char *path, char *err, size_t errlen);
/* Connect to path; a listener of another user is refused (EPERM).  fd,
 * or -1 with errno and err set. */
int	net_connect_unix(const char *path, char *err, size_t errlen);
/* Accept a connection on lfd (close-on-exec); a peer of another user is
 * closed and refused (EPERM).  fd, or -1 with errno and err (what names
 * the socket in it). */
int	net_accept_unix(int lfd, const char *what, char *err, size_t errlen);
/* 0 when the process at the other end of fd is this user's or root's,
 * else -1 with err naming its uid and pid (errno EPERM). */
int	net_peer_check(int fd, const char *what, char *err, size_t errlen);
int	net_set_nonblock(int fd, int on);
/* Raise this process's open-file limit (the soft one, up to the hard
 * one) to want; returns the limit it has now. */
long	net_raise_nofile(long want);
/* Whether something accepts connections on path now. */
int	net_unix_alive(const char *path);

#endif
