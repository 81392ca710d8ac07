/*
 * fuzz-theme.c: libFuzzer target for the theme parser (theme_parse in
 * tui/theme.h): the whole input is a theme file's text.  Beyond "no
 * crash, no leak" it checks the contract: -1 with at least one error
 * carrying the file name, 0 with none, and every colour in a parsed
 * theme either the terminal's default (-1), 0..255, or (fg8/bg8 only)
 * unset.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/target-util.h"
#include "backend/spec/spec.h"
#include "tui/theme.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
fuzz_colour_ok(short c, int may_be_unset)
{
	return (c >= -1 && c <= 255) || (may_be_unset && c == THEME_UNSET);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct theme	 t;
	struct spec_errors	 errs = { 0 };
	const char		*file = "fuzz-theme.yaml";
	int			 rc;

	rc = theme_parse(file, (const char *)data, size, &t, &errs);
	fuzz_debug(rc == 0, errs.n > 0 ? errs.v[0].msg : "");
	if ((rc != 0 && rc != -1) || (rc == -1) != (errs.n > 0))
		__builtin_trap();
	for (size_t i = 0; i < errs.n; i++) {
		if (errs.v[i].msg == NULL || errs.v[i].file == NULL ||
		    strcmp(errs.v[i].file, file) != 0)
			__builtin_trap();
	}
	if (memchr(t.name, '\0', sizeof t.name) == NULL)
		__builtin_trap();
	for (int e = 0; e < EL_COUNT; e++) {
		if (!fuzz_colour_ok(t.e[e].fg, 0) || !fuzz_colour_ok(t.e[e].bg, 0) ||
		    !fuzz_colour_ok(t.e[e].fg8, 1) || !fuzz_colour_ok(t.e[e].bg8, 1))
			__builtin_trap();
		if (theme_elem_name((enum elem)e) == NULL)
			__builtin_trap();
	}
	spec_errors_free(&errs);
	return 0;
}
