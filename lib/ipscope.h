/*
 * ipscope.h: how far an IP address reaches, for the links that have no
 * authentication of their own (the collective mesh): whether a node's
 * address is every interface at once, this machine only, a private
 * network, or the Internet.
 */
#ifndef HUNTER_IPSCOPE_H
#define HUNTER_IPSCOPE_H

#include <stddef.h>

#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Ordered by reach: the widest of several is the largest. */
enum ip_scope {
	IP_SCOPE_LOOPBACK,	/* 127/8, ::1 */
	IP_SCOPE_PRIVATE,	/* RFC 1918, 100.64/10, link-local, fc00::/7 */
	IP_SCOPE_PUBLIC,	/* anything else */
	IP_SCOPE_WILDCARD,	/* 0.0.0.0/8, ::: every interface */
};

/* The scope of one address (AF_INET or AF_INET6, v4-mapped included). */
enum ip_scope	 ip_scope_of_sa(const struct sockaddr *);
/* Resolve host (a literal or a name) and give the widest scope of its
 * addresses.  0, or -1 with err when it does not resolve. */
int		 ip_scope_of(const char *host, enum ip_scope *,
		    char *err, size_t errlen);
/* "loopback", "private", "public" or "wildcard". */
const char	*ip_scope_name(enum ip_scope);

#ifdef __cplusplus
}
#endif

#endif
