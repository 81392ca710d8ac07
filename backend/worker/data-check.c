/*
 * data-check.c: a job's data, checked as its worker would check it, for
 * hunter validate and for a launch on this machine's nodes (submit):
 * Fashion-MNIST's idx headers, or a language model's shards or text.
 */
#include "backend/spec/spec.h"
#include "backend/worker/data.h"
#include "backend/worker/tokens.h"

int
job_data_check(const struct job_spec *j, char *err, size_t errlen)
{
	if (j->kind == JOB_PROGRAM)
		return 0;		/* its data is its own */
	if (j->data.format == FORMAT_IMAGES)
		return data_check_fmnist(j->data.path, err, errlen);
	return tokens_check_data(j->data.format == FORMAT_TEXT,
	    j->data.train, j->data.val, j->data.path[0] != '\0' ?
	    j->data.path : SPEC_TEXT_DEFAULT, spec_vocab(j), err, errlen);
}
