/*
 * data.h: the training data of one rank.  An idx reader (gzipped or raw)
 * for Fashion-MNIST, the per-epoch permutation drawn from the seed, the
 * sharding of each global batch into contiguous per-rank, per-micro-step
 * slices, and a prefetch thread that keeps a ring of batches ready.
 */
#ifndef HUNTER_DATA_H
#define HUNTER_DATA_H

#include <stddef.h>
#include <stdint.h>

#define FMNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

struct dataset {
	int	 n;		/* samples */
	int	 rows, cols;	/* image size */
	float	*x;		/* n * rows * cols, normalised */
	uint8_t	*y;		/* n labels, 0..9 */
};

/* Read an idx image file and its label file.  Returns 0, or -1 with a
 * message naming the file and the fault in err. */
int	data_load_idx(const char *images, const char *labels,
	    struct dataset *, char *err, size_t errlen);
/* Read the train or t10k pair from dir ("" = the Debian package's),
 * accepting NAME.gz or NAME. */
int	data_load_fmnist(const char *dir, int train, struct dataset *,
	    char *err, size_t errlen);
void	data_free(struct dataset *);
/* Whether dir holds the four idx files with headers that load: what a
 * worker would refuse, said before a launch.  Never waits on a FIFO or
 * follows a link's target that is not a regular file.  0, or -1. */
int	data_check_fmnist(const char *dir, char *err, size_t errlen);
struct job_spec;
/* The data of a job (its images, shards or text), checked as its worker
 * would (data-check.c); a program's is its own.  0, or -1 with err. */
int	job_data_check(const struct job_spec *, char *err, size_t errlen);

/* Which slice of a global batch a rank's micro-step covers: slices are
 * ordered rank-major, so rank r owns one contiguous run of accum slices. */
void	data_shard(int global, int world, int rank, int accum, int micro_step,
	    int *offset, int *count);

/*
 * A position in the data: the epoch, the step within it, and the skew,
 * samples of the epoch seen before its step 0 at this global batch (the
 * step-th batch starts at skew + step x global).  The skew is not 0 only
 * in the epoch in which an adaptive batch changed, and an epoch of n
 * samples then has (n - skew) / global steps (data_epoch_steps): the
 * samples past the last whole batch are left out, as at every epoch's
 * end.  step is the optimizer step, as the learning rate schedule reads
 * it (docs/scheduling.md, "The batch of an adaptive job").
 */
struct data_pos {
	int	 epoch;
	long	 step_in_epoch;
	long	 skew;
	long	 step;
};

long	data_epoch_steps(long n, int global, long skew);
/*
 * Where a run resumes at global batch `global` after `seen` samples of
 * epoch `epoch` (of n samples) at another batch: the same sample offset,
 * step_in_epoch and skew cut from it at the new batch, the next epoch's
 * start when less than a batch of this one is left; the step the new
 * batch reaches at the end of the epoch less the steps left in it, so
 * that every later epoch starts at epoch x n / global, as a run at the
 * new batch all along would.
 */
void	data_resume_pos(long n, int global, int epoch, long seen,
	    struct data_pos *);

/* The permutation of epoch e: a function of seed and e only. */
void	data_permutation(uint32_t *perm, int n, uint64_t seed, int epoch);

struct batch {
	float	*x;		/* images */
	uint8_t	*y;
	int32_t	*tok, *tgt;	/* token windows: [n, T] each */
	int	 n;
	int	 epoch;
	long	 step;		/* within the epoch */
	int	 micro;		/* micro-step within the step */
};

struct loader;
struct token_part;

/* What a loader reads: images, or windows of T + 1 tokens of a part of a
 * token corpus (tokens.h), steps_per_epoch global batches an epoch. */
struct loader_source {
	const struct dataset	*images;
	const struct token_part	*tokens;
	int			 T;
	long			 steps_per_epoch;
	long			 skew;		/* of the first epoch (data_pos) */
	long			 first_steps;	/* its steps; 0: steps_per_epoch */
};

/* Start a prefetch thread that yields this rank's micro-batches in order,
 * from (epoch, step) onwards, until end_epoch (prefetch 0: no thread,
 * loader_next fills each itself).  The samples of a step
 * are a function of the seed and the global batch alone: an epoch's
 * permutation of the images, or token windows drawn for that step. */
struct loader *loader_start(const struct loader_source *, uint64_t seed,
	    int global, int world, int rank, int accum, int prefetch,
	    int epoch, long step, int end_epoch);
/* Next micro-batch; blocks until it is ready and adds the wait to
 * *wait_s.  Valid until the following loader_next.  NULL at the end. */
const struct batch *loader_next(struct loader *, double *wait_s);
void	loader_stop(struct loader *);
/* Milliseconds of delay added before producing each batch (tests). */
void	loader_set_delay_ms(struct loader *, int ms);

#endif
