/*
 * spec-units.c: sizes ("2GiB"), durations ("60s") and percentages ("50%")
 * as people write them in specs, themes and the config file, and the
 * names of the spec enums.  Sizes follow the usual convention: k, M, G, T,
 * P, E (with or without B) are powers of 1000; Ki, Mi, Gi... (with or
 * without B) are powers of 1024.  Unit letters are case-insensitive; a
 * bare number is bytes or seconds.  (The model kinds have a table of
 * their own, spec-model.c.)
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <strings.h>

#include "backend/spec/spec-internal.h"

/* The names of each enum of spec.h, by its values; the NULL after the
 * last ends the list the parsers walk. */
const char *const spec_priority_names[] = { [PRIORITY_LOW] = "low",
	[PRIORITY_NORMAL] = "normal", [PRIORITY_HIGH] = "high",
	[PRIORITY_HIGH + 1] = NULL };
const char *const spec_device_names[] = { [DEVICE_CPU] = "cpu",
	[DEVICE_CUDA] = "cuda", [DEVICE_CUDA + 1] = NULL };
const char *const spec_format_names[] = { [FORMAT_IMAGES] = "images",
	[FORMAT_TOKENS] = "tokens", [FORMAT_TEXT] = "text",
	[FORMAT_TEXT + 1] = NULL };
const char *const spec_placement_names[] = { [PLACEMENT_PACK] = "pack",
	[PLACEMENT_SPREAD] = "spread", [PLACEMENT_RACK] = "rack",
	[PLACEMENT_RACK + 1] = NULL };
const char *const spec_optim_names[] = { [OPTIM_SGD] = "sgd",
	[OPTIM_ADAMW] = "adamw", [OPTIM_ADAMW + 1] = NULL };
const char *const spec_schedule_names[] = {
	[SCHEDULE_CONSTANT] = "constant", [SCHEDULE_COSINE] = "cosine",
	[SCHEDULE_ADAPTIVE] = "adaptive", [SCHEDULE_ADAPTIVE + 1] = NULL
};
/* The compressors (backend/worker/compressor-*.c) are these methods
 * and take their names from here. */
const char *const spec_compress_names[] = {
	[COMPRESS_NONE] = "none", [COMPRESS_FP16] = "fp16",
	[COMPRESS_TOPK] = "topk", [COMPRESS_THRESHOLD] = "threshold",
	[COMPRESS_THRESHOLD + 1] = NULL
};

static const struct {
	const char	*unit;
	uint64_t	 mult;
} units_sizes[] = {
	{ "", 1 }, { "b", 1 },
	{ "k", 1000ULL }, { "kb", 1000ULL },
	{ "ki", 1ULL << 10 }, { "kib", 1ULL << 10 },
	{ "m", 1000000ULL }, { "mb", 1000000ULL },
	{ "mi", 1ULL << 20 }, { "mib", 1ULL << 20 },
	{ "g", 1000000000ULL }, { "gb", 1000000000ULL },
	{ "gi", 1ULL << 30 }, { "gib", 1ULL << 30 },
	{ "t", 1000000000000ULL }, { "tb", 1000000000000ULL },
	{ "ti", 1ULL << 40 }, { "tib", 1ULL << 40 },
	{ "p", 1000000000000000ULL }, { "pb", 1000000000000000ULL },
	{ "pi", 1ULL << 50 }, { "pib", 1ULL << 50 },
	{ "e", 1000000000000000000ULL }, { "eb", 1000000000000000000ULL },
	{ "ei", 1ULL << 60 }, { "eib", 1ULL << 60 },
};

static const struct {
	const char	*unit;
	double		 seconds;
} units_durations[] = {
	{ "", 1 }, { "ms", 0.001 }, { "s", 1 }, { "m", 60 }, { "h", 3600 },
	{ "d", 86400 },
};

/*
 * A non-negative decimal number, "12" or "1.5", at the start of s: its
 * whole part (with an overflow flag), its value and where it ends.  Signs,
 * exponents, hex and "inf" are not numbers here.
 */
static int
units_number(const char *s, const char **end, uint64_t *whole, bool *big,
    double *value, bool *frac)
{
	double	scale = 0.1;

	if (!isdigit((unsigned char)*s))
		return -1;
	*whole = 0;
	*big = false;
	*frac = false;
	*value = 0;
	for (; isdigit((unsigned char)*s); s++) {
		if (*whole > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			*big = true;
		else
			*whole = *whole * 10 + (uint64_t)(*s - '0');
		*value = *value * 10 + (*s - '0');
	}
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -1;
		*frac = true;
		for (; isdigit((unsigned char)*s); s++, scale /= 10)
			*value += (*s - '0') * scale;
	}
	if (*s == ' ' && s[1] != '\0')
		s++;
	*end = s;
	return 0;
}

int
spec_parse_size(const char *s, uint64_t *bytes)
{
	const char	*unit;
	uint64_t	 whole, mult;
	double		 value;
	bool		 big, frac;
	size_t		 i;

	if (s == NULL || units_number(s, &unit, &whole, &big, &value,
	    &frac) != 0)
		return -1;
	for (i = 0; i < sizeof units_sizes / sizeof units_sizes[0]; i++) {
		if (strcasecmp(unit, units_sizes[i].unit) != 0)
			continue;
		mult = units_sizes[i].mult;
		if (frac) {
			value *= (double)mult;
			/* 2^64 exactly: the first double that does not fit. */
			if (value >= 18446744073709551616.0)
				return -1;
			*bytes = (uint64_t)llround(value);
			return 0;
		}
		if (big || whole > UINT64_MAX / mult)
			return -1;
		*bytes = whole * mult;
		return 0;
	}
	return -1;
}

int
spec_parse_duration(const char *s, double *seconds)
{
	const char	*unit;
	uint64_t	 whole;
	double		 value;
	bool		 big, frac;
	size_t		 i;

	if (s == NULL || units_number(s, &unit, &whole, &big, &value,
	    &frac) != 0)
		return -1;
	for (i = 0; i < sizeof units_durations / sizeof units_durations[0];
	    i++) {
		if (strcasecmp(unit, units_durations[i].unit) != 0)
			continue;
		value *= units_durations[i].seconds;
		if (!isfinite(value))
			return -1;
		*seconds = value;
		return 0;
	}
	return -1;
}

int
spec_parse_percent(const char *s, double *fraction)
{
	const char	*unit;
	uint64_t	 whole;
	double		 value;
	bool		 big, frac;

	if (s == NULL || units_number(s, &unit, &whole, &big, &value,
	    &frac) != 0 || strcmp(unit, "%") != 0 || value > 100)
		return -1;
	*fraction = value / 100;
	return 0;
}

static const char *
units_name(const char *const *names, size_t n, int v)
{
	if (v < 0 || (size_t)v >= n)
		return "?";
	return names[v];
}

#define UNITS_NAME(names, v) \
	units_name(names, sizeof names / sizeof names[0] - 1, (int)(v))

const char *
spec_optim_name(enum spec_optim v)
{
	return UNITS_NAME(spec_optim_names, v);
}

const char *
spec_schedule_name(enum spec_schedule v)
{
	return UNITS_NAME(spec_schedule_names, v);
}

const char *
spec_compress_name(enum spec_compress v)
{
	return UNITS_NAME(spec_compress_names, v);
}

const char *
spec_placement_name(enum spec_placement v)
{
	return UNITS_NAME(spec_placement_names, v);
}

const char *
spec_priority_name(enum spec_priority v)
{
	return UNITS_NAME(spec_priority_names, v);
}

const char *
spec_device_name(enum spec_device v)
{
	return UNITS_NAME(spec_device_names, v);
}

const char *
spec_format_name(enum spec_format v)
{
	return UNITS_NAME(spec_format_names, v);
}
