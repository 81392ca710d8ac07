/*
 * test-sanitize.c: the console's filter for untrusted text.  Each case
 * feeds a string a hostile worker, job file or node could produce and
 * checks the exact bytes that would reach the terminal: no ESC, no C0 or
 * C1 control in any spelling, printable UTF-8 kept, and never a
 * character cut in half when the output is short.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "tui/sanitize.h"

static void
check(const char *in, size_t len, const char *want)
{
	char	 out[256];
	size_t	 n = sanitize_n(out, sizeof out, in, len);

	assert_string_equal(out, want);
	assert_int_equal(n, strlen(want));
}

#define CHECK(in, want) check(in, sizeof(in) - 1, want)

static void
test_plain(void **state)
{
	(void)state;
	CHECK("loss 0.25 at step 100", "loss 0.25 at step 100");
	CHECK("", "");
	CHECK("naïve – ✓ 日本", "naïve – ✓ 日本");
}

static void
test_osc_title(void **state)
{
	(void)state;
	CHECK("a\x1b]0;pwned\x07z", "az");
	CHECK("a\x1b]0;pwned\x1b\\z", "az");
	CHECK("a\x1b]8;;http://x\x07link\x1b]8;;\x07z", "alinkz");
	CHECK("unterminated \x1b]0;pwned", "unterminated ");
}

static void
test_csi(void **state)
{
	(void)state;
	CHECK("x\x1b[2Jy", "xy");
	CHECK("x\x1b[1;31mred\x1b[0my", "xredy");
	CHECK("x\x1b[?1049hy", "xy");
	CHECK("x\x1b[", "x");
	CHECK("\x1b" "c reset", " reset");
	CHECK("\x1b(0lqk", "lqk");		/* nF: designate charset */
	CHECK("tail\x1b", "tail");
}

static void
test_dcs_apc(void **state)
{
	(void)state;
	CHECK("a\x1bPq#0;2;0;0;0\x1b\\b", "ab");
	CHECK("a\x1b_payload\x1b\\b", "ab");
	CHECK("a\x1b^pm\x1b\\b", "ab");
	CHECK("a\x1bXsos\x1b\\b", "ab");
}

static void
test_c0_del(void **state)
{
	(void)state;
	CHECK("a\x01\x02\x07\x08\x0b\x0c\x0e\x7f" "b", "ab");
	CHECK("one\ttwo\r\nthree", "one two three");
	CHECK("\nlead", "lead");
	check("nul\0after", 9, "nul");
}

static void
test_c1(void **state)
{
	(void)state;
	/* UTF-8 encoded C1: CSI U+009B, OSC U+009D, ST U+009C, NEL U+0085. */
	CHECK("a\xc2\x9b" "2Jb", "ab");
	CHECK("a\xc2\x9d" "0;t\xc2\x9c" "b", "ab");
	CHECK("a\xc2\x85" "b", "ab");
	/* raw 8-bit C1 (not valid UTF-8): CSI 0x9b, OSC 0x9d ... BEL. */
	CHECK("a\x9b" "2Jb", "ab");
	CHECK("a\x9d" "0;t\x07" "b", "ab");
	CHECK("a\x90q\x9c" "b", "ab");
}

static void
test_bad_utf8(void **state)
{
	(void)state;
	CHECK("a\xff" "b", "a?b");
	CHECK("a\xc0\xaf" "b", "a??b");		/* overlong '/' */
	/* a surrogate: ED and A0 are not UTF-8; a lone 80 reads as C1 */
	CHECK("a\xed\xa0\x80" "b", "a??b");
	CHECK("a\xe2\x82", "a?");		/* truncated; lone 82 is C1 */
	/* bidi override (Trojan Source) */
	CHECK("x\xe2\x80\xaeyz", "xyz");
}

static void
test_truncation(void **state)
{
	char	 out[6];

	(void)state;
	assert_int_equal(sanitize(out, sizeof out, "abcdefgh"), 5);
	assert_string_equal(out, "abcde");
	/* "abc" + a 3-byte character does not fit in 5: drop it whole. */
	assert_int_equal(sanitize(out, sizeof out, "abc\xe2\x9c\x93"), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(sanitize(out, 1, "abc"), 0);
	assert_string_equal(out, "");
	assert_int_equal(sanitize(out, sizeof out, NULL), 0);
	assert_string_equal(out, "");
}

/* Whatever the input, no byte a terminal acts on comes out. */
static void
test_fuzzish(void **state)
{
	unsigned char	 in[64];
	char		 out[256];
	uint32_t	 x = 12345;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		for (size_t i = 0; i < sizeof in; i++) {
			x = x * 1103515245u + 12345u;
			in[i] = (unsigned char)(x >> 16);
		}
		sanitize_n(out, sizeof out, (const char *)in, sizeof in);
		for (size_t i = 0; out[i] != '\0'; i++) {
			unsigned char c = (unsigned char)out[i];

			assert_true(c >= 0x20 && c != 0x7f);
			if (c == 0xc2 && out[i + 1] != '\0')
				assert_true((unsigned char)out[i + 1] >= 0xa0);
		}
	}
}

/* JSON text keeps its meaning: inside strings, C1 controls, DEL and the
 * bidi overrides become \u escapes (and an escaped quote does not end the
 * string); printable UTF-8, structure and old escapes stay; a buffer too
 * small says so. */
static void
test_json(void **state)
{
	char	out[256];

	(void)state;
	assert_int_equal(sanitize_json(out, sizeof out,
	    "{\"a\":\"x\xc2\x9b" "31m\xe2\x80\xae" "exe.gnp\",\"b\":[1,2]}"),
	    strlen("{\"a\":\"x\\u009b31m\\u202eexe.gnp\",\"b\":[1,2]}"));
	assert_string_equal(out,
	    "{\"a\":\"x\\u009b31m\\u202eexe.gnp\",\"b\":[1,2]}");
	sanitize_json(out, sizeof out, "{\"k\\\"\xc2\x85\":\"\\u001b\x7f"
	    "\xe2\x81\xa6\xc2\xa0na\xc3\xafve \xe2\x9c\x93\"}");
	assert_string_equal(out, "{\"k\\\"\\u0085\":\"\\u001b\\u007f"
	    "\\u2066\xc2\xa0na\xc3\xafve \xe2\x9c\x93\"}");
	/* not UTF-8, or a control outside a string: not JSON; '?' */
	sanitize_json(out, sizeof out, "{\"a\":\"\x9b\xff\"}\x1b");
	assert_string_equal(out, "{\"a\":\"??\"}?");
	assert_int_equal(sanitize_json(out, 12, "{\"a\":\"\xc2\x9b\"}"),
	    (size_t)-1);
	assert_int_equal(sanitize_json(out, 15, "{\"a\":\"\xc2\x9b\"}"), 14);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_osc_title),
		cmocka_unit_test(test_csi),
		cmocka_unit_test(test_dcs_apc),
		cmocka_unit_test(test_c0_del),
		cmocka_unit_test(test_c1),
		cmocka_unit_test(test_bad_utf8),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_fuzzish),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
