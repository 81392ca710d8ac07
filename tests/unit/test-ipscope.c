/*
 * test-ipscope.c: the reach of an address (lib/ipscope.c), by which the
 * collective mesh refuses a wildcard bind and hunter check warns of a
 * public one: each block's edges, IPv6 and v4-mapped forms, names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/ipscope.h"

static void
expect(const char *host, enum ip_scope want)
{
	enum ip_scope	 got;
	char		 err[256] = "";

	if (ip_scope_of(host, &got, err, sizeof err) != 0)
		fail_msg("%s: %s", host, err);
	if (got != want)
		fail_msg("%s: %s, expected %s", host, ip_scope_name(got),
		    ip_scope_name(want));
}

static void
t_v4(void **state)
{
	(void)state;
	expect("0.0.0.0", IP_SCOPE_WILDCARD);
	expect("0.1.2.3", IP_SCOPE_WILDCARD);
	expect("127.0.0.1", IP_SCOPE_LOOPBACK);
	expect("127.255.0.9", IP_SCOPE_LOOPBACK);
	expect("10.0.0.1", IP_SCOPE_PRIVATE);
	expect("10.255.255.255", IP_SCOPE_PRIVATE);
	expect("11.0.0.1", IP_SCOPE_PUBLIC);
	expect("172.15.255.255", IP_SCOPE_PUBLIC);
	expect("172.16.0.1", IP_SCOPE_PRIVATE);
	expect("172.31.255.255", IP_SCOPE_PRIVATE);
	expect("172.32.0.0", IP_SCOPE_PUBLIC);
	expect("192.168.0.1", IP_SCOPE_PRIVATE);
	expect("192.169.0.1", IP_SCOPE_PUBLIC);
	expect("100.63.255.255", IP_SCOPE_PUBLIC);
	expect("100.64.0.1", IP_SCOPE_PRIVATE);
	expect("100.127.255.255", IP_SCOPE_PRIVATE);
	expect("100.128.0.0", IP_SCOPE_PUBLIC);
	expect("169.254.3.4", IP_SCOPE_PRIVATE);
	expect("8.8.8.8", IP_SCOPE_PUBLIC);
	expect("203.0.113.7", IP_SCOPE_PUBLIC);
}

static void
t_v6(void **state)
{
	(void)state;
	expect("::", IP_SCOPE_WILDCARD);
	expect("::1", IP_SCOPE_LOOPBACK);
	expect("fc00::1", IP_SCOPE_PRIVATE);
	expect("fdff::1", IP_SCOPE_PRIVATE);
	expect("fe80::1", IP_SCOPE_PRIVATE);
	expect("febf::1", IP_SCOPE_PRIVATE);
	expect("fec0::1", IP_SCOPE_PUBLIC);
	expect("2001:db8::1", IP_SCOPE_PUBLIC);
	expect("::ffff:10.0.0.1", IP_SCOPE_PRIVATE);
	expect("::ffff:0.0.0.0", IP_SCOPE_WILDCARD);
	expect("::ffff:8.8.4.4", IP_SCOPE_PUBLIC);
}

static void
t_names(void **state)
{
	enum ip_scope	 got;
	char		 err[256] = "";

	(void)state;
	expect("localhost", IP_SCOPE_LOOPBACK);
	expect("", IP_SCOPE_WILDCARD);
	assert_int_equal(ip_scope_of("no-such-host.invalid", &got, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "no-such-host.invalid: "));
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_v4),
		cmocka_unit_test(t_v6),
		cmocka_unit_test(t_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
