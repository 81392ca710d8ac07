/*
 * loader.c: the prefetch thread.  It walks the same order as every other
 * rank (epoch permutation, global batches, this rank's slices) and keeps
 * up to `prefetch` micro-batches ready in a ring, so the train loop only
 * waits when the data really cannot keep up.  That wait is measured.
 * The thread refills a full ring only once half of it is used, and each
 * side signals only when the other waits: a wake-up every few steps, not
 * two a step, since a thread that wakes on a core the ranks fill stops
 * one of them.  With prefetch 0 there is no thread: loader_next fills
 * the batch itself (what train.c chooses where the job's ranks fill
 * their host's cores), and its data wait is that filling.
 * Token windows are cut the same way: sample i of a global batch is the
 * window tokens_draw gives for (seed, step, i), so a rank's slice holds
 * the same windows at any world size.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/worker/data.h"
#include "backend/worker/tokens.h"

struct slot {
	struct batch	 b;
};

struct loader {
	struct loader_source src;
	const struct dataset *ds;
	uint64_t	 nwindows;	/* tokens: window starts in the part */
	int32_t		*window;	/* tokens: T + 1 of scratch */
	uint64_t	 seed;
	int		 global, world, rank, accum;
	int		 end_epoch;
	long		 steps_per_epoch;
	long		 skew, epoch_steps;	/* the epoch in progress's */

	/* Producer position. */
	int		 epoch;
	long		 step;
	int		 micro;
	uint32_t	*perm;
	int		 perm_epoch;

	struct slot	*slots;
	int		 nslots;
	int		 head, count;	/* count includes a held slot */
	bool		 held, done, stop;
	bool		 inline_fill;	/* no thread: loader_next fills */
	bool		 producer_waits, consumer_waits;
	int		 delay_ms;
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	pthread_t	 thread;
};

/* The token windows of samples [off, off + n) of the current step. */
static void
loader_fill_tokens(struct loader *l, struct batch *b, int off, int n)
{
	int	 T = l->src.T;
	long	 gstep = (long)l->epoch * l->steps_per_epoch + l->step;

	for (int i = 0; i < n; i++) {
		uint64_t w = tokens_draw(l->seed, gstep, l->skew + off + i,
		    l->nwindows);

		tokens_window(l->src.tokens, w, T, l->window);
		memcpy(b->tok + (size_t)i * T, l->window, (size_t)T *
		    sizeof *l->window);
		memcpy(b->tgt + (size_t)i * T, l->window + 1, (size_t)T *
		    sizeof *l->window);
	}
}

/* The rows of a batch are scattered over the whole set (188 MB of
 * Fashion-MNIST's floats), so each one misses every cache; asking for
 * the rows LOADER_AHEAD ahead while one is copied keeps several misses
 * in flight: the fill of 64 rows took 24 us, and 13 us so (a 2-rank
 * step of the mlp is about 500 us). */
#define LOADER_AHEAD	4

static void
loader_touch(const float *row, size_t n)
{
	const char	*p = (const char *)row;

	for (size_t c = 0; c < n * sizeof *row; c += 64)
		__builtin_prefetch(p + c);
}

/* Gather the samples of the producer's current position into b. */
static void
loader_fill(struct loader *l, struct batch *b)
{
	const struct dataset *ds = l->ds;
	size_t	 pix;
	int	 off, n;

	data_shard(l->global, l->world, l->rank, l->accum, l->micro, &off, &n);
	b->n = n;
	b->epoch = l->epoch;
	b->step = l->step;
	b->micro = l->micro;
	if (l->src.tokens != NULL) {
		loader_fill_tokens(l, b, off, n);
		return;
	}
	pix = (size_t)ds->rows * ds->cols;
	if (l->perm_epoch != l->epoch) {
		data_permutation(l->perm, ds->n, l->seed, l->epoch);
		l->perm_epoch = l->epoch;
	}
	off += (int)(l->skew + l->step * l->global);
	for (int i = 0; i < n && i < LOADER_AHEAD; i++)
		loader_touch(ds->x + (size_t)l->perm[off + i] * pix, pix);
	for (int i = 0; i < n; i++) {
		uint32_t s = l->perm[off + i];

		if (i + LOADER_AHEAD < n)
			loader_touch(ds->x + (size_t)l->perm[off + i +
			    LOADER_AHEAD] * pix, pix);
		memcpy(b->x + (size_t)i * pix, ds->x + (size_t)s * pix,
		    pix * sizeof(float));
		b->y[i] = ds->y[s];
	}
}

/* The next micro-batch into s, and the position past it. */
static void
loader_produce(struct loader *l, struct slot *s)
{
	int	 delay = __atomic_load_n(&l->delay_ms, __ATOMIC_RELAXED);

	if (delay > 0)
		nanosleep(&(struct timespec){ delay / 1000,
		    (delay % 1000) * 1000000L }, NULL);
	loader_fill(l, &s->b);
	if (++l->micro == l->accum) {
		l->micro = 0;
		if (++l->step == l->epoch_steps) {
			l->step = l->skew = 0;
			l->epoch_steps = l->steps_per_epoch;
			l->epoch++;
		}
	}
}

static void *
loader_main(void *arg)
{
	struct loader	*l = arg;
	struct slot	*s;

	for (;;) {
		pthread_mutex_lock(&l->lock);
		if (l->count == l->nslots && !l->stop) {
			l->producer_waits = true;
			while (l->count > l->nslots / 2 && !l->stop)
				pthread_cond_wait(&l->cond, &l->lock);
			l->producer_waits = false;
		}
		if (l->stop || l->epoch >= l->end_epoch) {
			l->done = true;
			pthread_cond_broadcast(&l->cond);
			pthread_mutex_unlock(&l->lock);
			return NULL;
		}
		s = &l->slots[(l->head + l->count) % l->nslots];
		pthread_mutex_unlock(&l->lock);

		loader_produce(l, s);

		pthread_mutex_lock(&l->lock);
		l->count++;
		if (l->consumer_waits)
			pthread_cond_broadcast(&l->cond);
		pthread_mutex_unlock(&l->lock);
	}
}

struct loader *
loader_start(const struct loader_source *src, uint64_t seed, int global,
    int world, int rank, int accum, int prefetch, int epoch, long step,
    int end_epoch)
{
	struct loader	*l = xcalloc(1, sizeof *l);
	int		 max_n = global / (world * accum) + 1;

	l->src = *src;
	l->ds = src->images;
	l->seed = seed;
	l->global = global;
	l->world = world;
	l->rank = rank;
	l->accum = accum;
	l->end_epoch = end_epoch;
	l->steps_per_epoch = src->steps_per_epoch;
	l->skew = src->skew;
	l->epoch_steps = src->first_steps > 0 ? src->first_steps :
	    src->steps_per_epoch;
	l->epoch = epoch;
	l->step = step;
	l->perm_epoch = -1;
	if (src->tokens != NULL) {
		l->nwindows = tokens_windows(src->tokens, src->T);
		l->window = xmalloc(((size_t)src->T + 1) * sizeof *l->window);
	} else
		l->perm = xmalloc((size_t)l->ds->n * sizeof *l->perm);
	/* One slot more than prefetch: the consumer holds one while it trains. */
	l->nslots = (prefetch < 0 ? 0 : prefetch) + 1;
	l->slots = xcalloc((size_t)l->nslots, sizeof *l->slots);
	for (int i = 0; i < l->nslots; i++) {
		struct batch *b = &l->slots[i].b;

		if (src->tokens != NULL) {
			b->tok = xmalloc((size_t)max_n * src->T * sizeof *b->tok);
			b->tgt = xmalloc((size_t)max_n * src->T * sizeof *b->tgt);
			continue;
		}
		b->x = xmalloc_aligned((size_t)max_n * l->ds->rows *
		    l->ds->cols * sizeof(float));
		b->y = xmalloc((size_t)max_n);
	}
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	l->inline_fill = prefetch <= 0;
	if (!l->inline_fill)
		pthread_create(&l->thread, NULL, loader_main, l);
	return l;
}

void
loader_set_delay_ms(struct loader *l, int ms)
{
	__atomic_store_n(&l->delay_ms, ms, __ATOMIC_RELAXED);
}

const struct batch *
loader_next(struct loader *l, double *wait_s)
{
	const struct batch *b = NULL;
	double		 t0;

	if (l->inline_fill) {
		if (l->stop || l->epoch >= l->end_epoch)
			return NULL;
		t0 = clock_mono();
		loader_produce(l, &l->slots[0]);
		if (wait_s != NULL)
			*wait_s += clock_mono() - t0;
		return &l->slots[0].b;
	}
	pthread_mutex_lock(&l->lock);
	if (l->held) {
		l->head = (l->head + 1) % l->nslots;
		l->count--;
		l->held = false;
		if (l->producer_waits && l->count <= l->nslots / 2)
			pthread_cond_broadcast(&l->cond);
	}
	t0 = clock_mono();
	while (l->count == 0 && !l->done) {
		l->consumer_waits = true;
		pthread_cond_wait(&l->cond, &l->lock);
	}
	l->consumer_waits = false;
	if (wait_s != NULL)
		*wait_s += clock_mono() - t0;
	if (l->count > 0) {
		b = &l->slots[l->head].b;
		l->held = true;
	}
	pthread_mutex_unlock(&l->lock);
	return b;
}

void
loader_stop(struct loader *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	if (!l->inline_fill)
		pthread_join(l->thread, NULL);
	for (int i = 0; i < l->nslots; i++) {
		free(l->slots[i].b.x);
		free(l->slots[i].b.y);
		free(l->slots[i].b.tok);
		free(l->slots[i].b.tgt);
	}
	free(l->slots);
	free(l->perm);
	free(l->window);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l);
}
