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
};

/* Start a prefetch thread that yields this rank's micro-batches in order,
 * from (epoch, step) onwards, until end_epoch.  The samples of a step
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
