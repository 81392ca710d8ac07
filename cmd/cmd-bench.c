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

static int
cmd_bench(int argc, char **argv)
{
	const struct bench_entry *e;

	if (argc == 2 && (e = bench_find(argv[1])) != NULL)
		return e->run();
	cmd_usage(&cmd_bench_entry);
	fprintf(stderr, "benchmarks:\n");
	for (int i = 0; bench_table[i] != NULL; i++)
		fprintf(stderr, "  %-9s %s\n", bench_table[i]->name,
		    bench_table[i]->summary);
	return 2;
}

const struct cmd_entry cmd_bench_entry = {
	.name = "bench",
	.usage = "NAME (hunter bench alone lists them)",
	.summary = "microbenchmarks that print ratios measured in one run",
	.exec = cmd_bench,
};
