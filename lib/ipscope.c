/*
 * ipscope.c: the reach of an address, from its prefix.  Private means
 * what a router of the Internet does not carry: RFC 1918's three blocks,
 * the carrier-grade NAT block (RFC 6598), link-local (169.254/16,
 * fe80::/10) and IPv6 unique local addresses (fc00::/7).  A name is
 * resolved and its widest address counts, since a socket bound to it may
 * get any of them.
 */
#include <netdb.h>
#include <stdint.h>
#include <string.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include "lib/errf.h"
#include "lib/ipscope.h"

static enum ip_scope
ip_scope_v4(uint32_t a)
{
	if ((a >> 24) == 0)
		return IP_SCOPE_WILDCARD;		/* 0/8: "this host" */
	if ((a >> 24) == 127)
		return IP_SCOPE_LOOPBACK;
	if ((a >> 24) == 10 || (a >> 20) == (172u << 4 | 1) ||
	    (a >> 16) == (192u << 8 | 168) || (a >> 22) == (100u << 2 | 1) ||
	    (a >> 16) == (169u << 8 | 254))
		return IP_SCOPE_PRIVATE;	/* 172.16/12, 100.64/10 */
	return IP_SCOPE_PUBLIC;
}

enum ip_scope
ip_scope_of_sa(const struct sockaddr *sa)
{
	const struct sockaddr_in6	*s6;
	const uint8_t			*b;
	static const uint8_t		 mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (sa->sa_family == AF_INET)
		return ip_scope_v4(ntohl(((const struct sockaddr_in *)
		    (const void *)sa)->sin_addr.s_addr));
	s6 = (const struct sockaddr_in6 *)(const void *)sa;
	b = s6->sin6_addr.s6_addr;
	if (memcmp(b, mapped, 12) == 0)
		return ip_scope_v4((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 |
		    (uint32_t)b[14] << 8 | b[15]);
	if (IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr))
		return IP_SCOPE_WILDCARD;
	if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
		return IP_SCOPE_LOOPBACK;
	if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0x80))
		return IP_SCOPE_PRIVATE;
	return IP_SCOPE_PUBLIC;
}

int
ip_scope_of(const char *host, enum ip_scope *scope, char *err, size_t errlen)
{
	struct addrinfo	 hints, *res, *ai;
	enum ip_scope	 s;
	int		 rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (host == NULL || *host == '\0') {
		*scope = IP_SCOPE_WILDCARD;
		return 0;
	}
	if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		errf(err, errlen, "%s: %s", host, gai_strerror(rc));
		return -1;
	}
	*scope = IP_SCOPE_LOOPBACK;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		if ((s = ip_scope_of_sa(ai->ai_addr)) > *scope)
			*scope = s;
	}
	freeaddrinfo(res);
	return 0;
}

const char *
ip_scope_name(enum ip_scope s)
{
	static const char *const names[] = { "loopback", "private", "public",
	    "wildcard" };

	return names[s];
}
