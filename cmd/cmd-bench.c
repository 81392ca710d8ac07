/*
 * cmd-bench.c: `hunter bench NAME`, which runs one benchmark of the
 * table in bench/bench.c and prints its figures, measured in one run, and
 * ratios against a baseline measured in the same run, never a pass or a
 * fail.  `hunter bench` alone lists them.
 */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "cmd/cmd.h"

/* The benchmarks, for the usage and --help. */
static void
bench_list(FILE *f)
{
	fprintf(f, "\nbenchmarks:\n");
	for (int i = 0; bench_table[i] != NULL; i++)
		fprintf(f, "  %-9s %s\n", bench_table[i]->name,
		    bench_table[i]->summary);
}

static int
cmd_bench(const struct cmd_args *a)
{
	const struct bench_entry *e;

	if (a->argc == 1 && (e = bench_find(a->argv[0])) != NULL)
		return e->run();
	if (a->argc == 1)
		fprintf(stderr, "hunter bench: no benchmark '%s'\n", a->argv[0]);
	cmd_print_usage(&cmd_bench_entry, stderr);
	bench_list(stderr);
	return 2;
}

const struct cmd_entry cmd_bench_entry = {
	.name = "bench",
	.usage = "NAME",
	.summary = "microbenchmarks that print ratios measured in one run "
	    "(hunter bench alone lists them)",
	.args_min = 0,
	.args_max = 1,
	.exec = cmd_bench,
	.more_help = bench_list,
};
