/*
 * bench.c: the table of benchmarks (bench.h).  A new benchmark is one
 * file that exports a const struct bench_entry, plus one line here.
 */
#include <stddef.h>
#include <string.h>

#include "bench/bench.h"

extern const struct bench_entry bench_train_entry;
extern const struct bench_entry bench_comm_entry;
extern const struct bench_entry bench_compress_entry;
extern const struct bench_entry bench_sched_entry;
extern const struct bench_entry bench_policy_entry;
extern const struct bench_entry bench_console_entry;
extern const struct bench_entry bench_agent_entry;
extern const struct bench_entry bench_sgemm_entry;
extern const struct bench_entry bench_gpt_entry;
#ifdef HAVE_CUDA
extern const struct bench_entry bench_cuda_entry;
#endif

const struct bench_entry *const bench_table[] = {
	&bench_train_entry,
	&bench_comm_entry,
	&bench_compress_entry,
	&bench_sched_entry,
	&bench_policy_entry,
	&bench_console_entry,
	&bench_agent_entry,
	&bench_sgemm_entry,
	&bench_gpt_entry,
#ifdef HAVE_CUDA
	&bench_cuda_entry,
#endif
	NULL
};

const struct bench_entry *
bench_find(const char *name)
{
	for (int i = 0; bench_table[i] != NULL; i++) {
		if (strcmp(bench_table[i]->name, name) == 0)
			return bench_table[i];
	}
	return NULL;
}
