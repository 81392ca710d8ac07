/*
 * checkpoint.h: safetensors checkpoints (docs/architecture.md,
 * "Training").  The file is an 8-byte little-endian header length, a
 * JSON header and the raw tensors, so PyTorch can read the weights.  The parameters are named
 * tensors; the optimizer state is "optim.m.NAME" (and "optim.v.NAME");
 * step, epoch, loader position, seed, batch shape and the training set's
 * size are metadata (format "hunter/2"), as is a CRC-32 of the whole file
 * (its own digits read as zeros) that is checked on load.  Writes go to a
 * temporary file of a random name made with O_EXCL | O_NOFOLLOW, then
 * fsync, rename and an fsync of the directory.  checkpoint-file.c writes
 * and reads one file, checkpoint.c keeps the directory.
 */
#ifndef HUNTER_CHECKPOINT_H
#define HUNTER_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "backend/worker/model.h"
#include "backend/worker/optimizer.h"

/* Extra state stored as a U8 tensor "extra.NAME" after the floats (for
 * example each rank's compressor state). */
struct ckpt_blob {
	char	 name[48];
	uint8_t	*data;
	size_t	 len;
};

struct ckpt_meta {
	char	 job[SPEC_NAME_MAX];
	long long run;		/* the run writing it: in the temporary
				 * file's name only (a file's bytes depend
				 * on the training, not on the run) */
	long	 step;		/* optimizer steps done */
	int	 epoch;		/* loader position: next epoch ... */
	long	 step_in_epoch;	/* ... and step within it */
	long	 skew;		/* ... past skew samples (data_pos); a
				 * file without it: 0 */
	uint64_t seed;
	int	 world, micro, accum;
	int	 global;	/* train.batch.global */
	long	 samples;	/* of the training set: images or tokens */
	/* Written when set; filled by a load (free with checkpoint_meta_free). */
	struct ckpt_blob *blobs;
	int	 nblobs;
};

void	checkpoint_meta_free(struct ckpt_meta *);

/* Write step-NNNNNNNNN.safetensors into dir (created 0700), then delete
 * all but the newest `keep` of the job's own (this user's files whose
 * header names cm->job; whatever else is there is left alone).  Returns
 * 0, or -1 with err set; on failure the previous checkpoints are
 * untouched. */
int	checkpoint_write(const char *dir, int keep, const struct model *,
	    const struct optimizer *, const struct ckpt_meta *, char *path,
	    size_t pathlen, char *err, size_t errlen);

/* Load path into model and optimizer, checking names, shapes, the
 * metadata's numbers and the CRC; the file is read only as far as its
 * checked header says.  Returns 0, or -1 with err set and nothing
 * changed.  Whether the position fits a job is the caller's to check. */
int	checkpoint_load(const char *path, struct model *, struct optimizer *,
	    struct ckpt_meta *, char *err, size_t errlen);

/* Load the newest valid checkpoint of job in dir: one of this user's
 * regular files whose header names job.  For each file it skips,
 * skipped(ctx, path, what) is called, what saying "corrupt checkpoint
 * PATH: why" or, for someone else's or another job's, "checkpoint PATH:
 * whose".  Returns 0 when one was loaded (its path in path), 1 when the
 * job has none, -1 when none of the job's own loads. */
int	checkpoint_resume(const char *dir, const char *job, struct model *,
	    struct optimizer *, struct ckpt_meta *, char *path,
	    size_t pathlen, void (*skipped)(void *, const char *, const char *),
	    void *ctx, char *err, size_t errlen);

/* At a start of job's run: remove the temporary files this user's
 * earlier runs of job left in dir (a run killed in a write leaves one).
 * Returns how many were removed. */
int	checkpoint_clean(const char *dir, const char *job, long long run);

#endif
