/*
 * bench.h: the benchmarks behind `hunter bench NAME`.  Each lives in its
 * own bench/bench-NAME.c and exports one const struct bench_entry; the
 * table in bench.c lists them, and `hunter bench` (cmd/cmd-bench.c), its
 * usage line and the man page follow that table.  A benchmark prints
 * figures measured in one run and ratios against a baseline measured in
 * the same run, never a pass or a fail.
 */
#ifndef HUNTER_BENCH_H
#define HUNTER_BENCH_H

struct bench_entry {
	const char	*name;
	const char	*summary;	/* one line for the usage text */
	int		(*run)(void);	/* 0, or non-zero when it could not run */
};

extern const struct bench_entry *const bench_table[];

/* The entry called name, or NULL. */
const struct bench_entry *bench_find(const char *name);

#endif
