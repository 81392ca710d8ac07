/*
 * fuzz-spec.c: libFuzzer target for the job and cluster spec parsers
 * (YAML through libyaml into the ydoc tree, then the key tables).  The
 * first byte picks the parser (even: spec_parse_job, odd:
 * spec_parse_cluster); the rest is the file's text.  Beyond "no crash,
 * no leak", it checks the contract of spec.h: -1 comes with at least one
 * error, 0 with none, every error carries the file name and a message,
 * and a valid spec's values are within the documented ranges.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/fuzz/target-util.h"
#include "backend/spec/spec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_check_errors(int rc, const struct spec_errors *errs, const char *file)
{
	if (rc != 0 && rc != -1)
		__builtin_trap();
	if ((rc == -1) != (errs->n > 0))
		__builtin_trap();
	for (size_t i = 0; i < errs->n; i++) {
		const struct spec_error *e = &errs->v[i];

		if (e->msg == NULL || e->msg[0] == '\0' || e->line < 0 ||
		    e->col < 0 || e->file == NULL || strcmp(e->file, file) != 0)
			__builtin_trap();
	}
}

static void
fuzz_check_job(const struct job_spec *j)
{
	if (j->name[0] == '\0' || memchr(j->name, '\0', sizeof j->name) == NULL)
		__builtin_trap();
	if (j->resources.ranks <= 0 || j->resources.group_size < 0 ||
	    j->train.epochs <= 0 || j->train.batch.global <= 0 ||
	    j->train.batch.micro < 0 || j->data.prefetch < 1 ||
	    j->checkpoint.every_steps < 0 || j->checkpoint.keep < 1 ||
	    j->model.n_hidden < 0 || j->model.n_hidden > SPEC_MAX_HIDDEN ||
	    j->model.n_channels < 0 || j->model.n_channels > SPEC_MAX_CHANNELS)
		__builtin_trap();
	if (j->train.batch.micro > j->train.batch.global)
		__builtin_trap();
	if (!(j->train.lr.base > 0) || !(j->compression.density > 0) ||
	    !(j->compression.density <= 1))
		__builtin_trap();
	if (memchr(j->data.path, '\0', sizeof j->data.path) == NULL ||
	    memchr(j->checkpoint.dir, '\0', sizeof j->checkpoint.dir) == NULL)
		__builtin_trap();
}

static void
fuzz_check_cluster(const struct cluster_spec *c)
{
	if (c->n_nodes < 0 || (c->n_nodes > 0 && c->nodes == NULL))
		__builtin_trap();
	for (int i = 0; i < c->n_nodes; i++) {
		const struct node_spec *n = &c->nodes[i];

		if (memchr(n->name, '\0', sizeof n->name) == NULL ||
		    memchr(n->host, '\0', sizeof n->host) == NULL ||
		    memchr(n->state_dir, '\0', sizeof n->state_dir) == NULL ||
		    n->cpu_slots < 0 || n->cuda_slots < 0 || n->port < 0 ||
		    n->port > 65535)
			__builtin_trap();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE		*devnull;
	struct spec_errors	 errs = { 0 };
	static struct job_spec	 job;
	struct cluster_spec	 cluster;
	const char		*file;
	int			 rc;

	if (size == 0)
		return 0;
	if (devnull == NULL && (devnull = fopen("/dev/null", "w")) == NULL)
		__builtin_trap();
	if (data[0] % 2 == 0) {
		file = "fuzz-job.yaml";
		rc = spec_parse_job(file, (const char *)data + 1, size - 1, &job,
		    &errs);
		fuzz_check_errors(rc, &errs, file);
		if (rc == 0)
			fuzz_check_job(&job);
	} else {
		file = "fuzz-cluster.yaml";
		rc = spec_parse_cluster(file, (const char *)data + 1, size - 1,
		    &cluster, &errs);
		fuzz_check_errors(rc, &errs, file);
		if (rc == 0) {
			fuzz_check_cluster(&cluster);
			spec_cluster_free(&cluster);
		}
	}
	fuzz_debug(rc == 0, errs.n > 0 ? errs.v[0].msg : "");
	spec_errors_print(devnull, &errs);
	spec_errors_free(&errs);
	return 0;
}
