/*
 * fuzz-checkpoint.c: libFuzzer target for the safetensors checkpoint
 * reader (checkpoint_load).  Two small models are built once: an mlp
 * 1x2x2 -> [3] -> 2 (23 parameters) with SGD (params + optim.m) and the
 * same with AdamW (params + optim.m + optim.v).  Input: byte 0 picks the
 * optimizer (even: sgd, odd: adamw); the rest is the checkpoint file,
 * written to a memfd and loaded through /proc/self/fd/N.  Beyond "no
 * crash, no leak" it checks checkpoint.h's contract: -1 with a message
 * and nothing changed (parameters and optimizer state compared with a
 * copy), or 0 with the "extra." blobs (U8 tensors after the floats,
 * e.g. compressor state) handed over in the metadata, each readable to
 * its length, freed with checkpoint_meta_free.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/target-util.h"
#include "backend/spec/spec.h"
#include "backend/worker/checkpoint.h"
#include "backend/worker/model.h"
#include "backend/worker/optimizer.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct fuzz_ckpt {
	struct model	 *m;
	struct optimizer *o;
	float		 *params, *om, *ov;	/* copies for "nothing changed" */
};

static void
fuzz_ckpt_make(struct fuzz_ckpt *c, enum spec_optim type)
{
	struct job_spec	 job;

	spec_job_defaults(&job);
	snprintf(job.name, sizeof job.name, "fuzz");
	job.model.type = MODEL_MLP;
	job.model.hidden[0] = 3;
	job.model.n_hidden = 1;
	job.train.optimizer.type = type;
	if ((c->m = model_create(&job, 1, 2, 2, 2, 1, 7)) == NULL ||
	    (c->o = optimizer_create(&job, c->m->n_params)) == NULL)
		abort();
	c->params = malloc(c->m->n_params * sizeof(float));
	c->om = malloc(c->m->n_params * sizeof(float));
	c->ov = malloc(c->m->n_params * sizeof(float));
	if (c->params == NULL || c->om == NULL || c->ov == NULL)
		abort();
}

static void
fuzz_ckpt_snapshot(struct fuzz_ckpt *c)
{
	size_t	 n = c->m->n_params * sizeof(float);

	memcpy(c->params, c->m->params, n);
	memcpy(c->om, c->o->m, n);
	if (c->o->v != NULL)
		memcpy(c->ov, c->o->v, n);
}

static int
fuzz_ckpt_unchanged(const struct fuzz_ckpt *c, long t)
{
	size_t	 n = c->m->n_params * sizeof(float);

	return memcmp(c->params, c->m->params, n) == 0 &&
	    memcmp(c->om, c->o->m, n) == 0 &&
	    (c->o->v == NULL || memcmp(c->ov, c->o->v, n) == 0) && c->o->t == t;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_ckpt	 ck[2];
	static struct fuzz_file	 file;
	static int		 ready;
	struct fuzz_ckpt	*c;
	struct ckpt_meta	 meta;
	char			 err[1024];
	long			 t;
	int			 rc;

	if (size == 0)
		return 0;
	if (!ready) {
		fuzz_ckpt_make(&ck[0], OPTIM_SGD);
		fuzz_ckpt_make(&ck[1], OPTIM_ADAMW);
		fuzz_file_open(&file, "checkpoint");
		ready = 1;
	}
	c = &ck[data[0] & 1];
	fuzz_file_put(&file, data + 1, size - 1);
	fuzz_ckpt_snapshot(c);
	t = c->o->t;
	err[0] = '\0';
	memset(&meta, 0, sizeof meta);
	rc = checkpoint_load(file.path, c->m, c->o, &meta, err, sizeof err);
	fuzz_debug(rc == 0, err);
	if (rc == -1) {
		if (err[0] == '\0' || !fuzz_ckpt_unchanged(c, t))
			__builtin_trap();
	} else if (rc != 0 || memchr(meta.job, '\0', sizeof meta.job) == NULL ||
	    meta.nblobs < 0 || (meta.nblobs > 0 && meta.blobs == NULL))
		__builtin_trap();
	else {
		volatile uint8_t sum = 0;

		for (int i = 0; i < meta.nblobs; i++) {
			for (size_t k = 0; k < meta.blobs[i].len; k++)
				sum ^= meta.blobs[i].data[k];
			if (memchr(meta.blobs[i].name, '\0',
			    sizeof meta.blobs[i].name) == NULL)
				__builtin_trap();
		}
		(void)sum;
		checkpoint_meta_free(&meta);
	}
	return 0;
}
