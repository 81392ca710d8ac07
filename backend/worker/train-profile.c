/*
 * train-profile.c: HUNTER_PROFILE=1 in a rank's environment (its
 * agent's) times each phase of every step -- the forward and backward,
 * the wait for data, the compressor's error feedback, selection and
 * encoding, each collective call, the decoding, the update -- and the
 * rank prints, as it ends, each phase's mean, median and 90th percentile
 * a step on stderr (its log): where a step's time goes, measured, for
 * bench/slow-link.  A checkpoint's two phases, outside the steps, are
 * rows of their own, a checkpoint each: the gather of every rank's
 * compressor state (and of ZeRO-1's shards), which crosses the network
 * between hosts, and rank 0's write; one in the background
 * (train-ckpt-bg.c) shows instead its wait for each chunk, a step each.
 * Off, it costs a branch a phase.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/worker/train-internal.h"

/* Steps kept for the percentiles; the means count all of them. */
#define PROF_KEEP	100000

static const char *const prof_names[TP_COUNT] = {
	[TP_DATA] = "data wait", [TP_COMPUTE] = "forward+backward",
	[TP_ENCODE] = "error feedback+selection+encoding",
	[TP_GATHER_HDR] = "allgatherv of the slots",
	[TP_GATHER_DATA] = "allgatherv of payloads that did not fit",
	[TP_ALLREDUCE] = "allreduce",
	[TP_REDUCE_SCATTER] = "reduce-scatter (ZeRO-1)",
	[TP_DECODE] = "decoding",
	[TP_PARAM_GATHER] = "allgatherv of parameters (ZeRO-1)",
	[TP_UPDATE] = "update and the rest",
	[TP_CKPT_GATHER] = "checkpoint, gathering its state",
	[TP_CKPT_WRITE] = "checkpoint, writing it (rank 0)",
	[TP_CKPT_BG] = "checkpoint, waits under the steps",
};

void
train_prof_init(struct trainer *t)
{
	const char	*v = getenv("HUNTER_PROFILE");

	memset(&t->prof, 0, sizeof t->prof);
	t->prof.on = v != NULL && strcmp(v, "0") != 0 && *v != '\0';
}

double
train_prof_mark(struct trainer *t, enum train_phase p, double since)
{
	double	 now;

	if (!t->prof.on)
		return 0;
	now = clock_mono();
	if (p == TP_UPDATE) {	/* the phases timed inside it are theirs */
		since += t->prof.inside;
		t->prof.inside = 0;
	} else if (p == TP_PARAM_GATHER && since > 0)
		t->prof.inside += now - since;
	if (since > 0)
		train_prof_add(t, p, now - since);
	return now;
}

void
train_prof_add(struct trainer *t, enum train_phase p, double secs)
{
	struct train_prof *tp = &t->prof;

	if (!tp->on)
		return;
	if (tp->kept[p] == NULL)
		tp->kept[p] = xcalloc(PROF_KEEP, sizeof *tp->kept[p]);
	if (tp->n[p] < PROF_KEEP)
		tp->kept[p][tp->n[p]] = (float)secs;
	tp->sum[p] += secs;
	tp->n[p]++;
}

static int
prof_cmp(const void *a, const void *b)
{
	float	 x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

void
train_prof_print(struct trainer *t)
{
	struct train_prof *tp = &t->prof;

	if (!tp->on)
		return;
	fprintf(stderr, "profile of rank %d, ms a step (mean, median, 90th "
	    "percentile; a checkpoint's rows, a checkpoint):\n", t->cfg->rank);
	for (int p = 0; p < TP_COUNT; p++) {
		long	 kept = tp->n[p] < PROF_KEEP ? tp->n[p] : PROF_KEEP;

		if (tp->n[p] == 0)
			continue;
		qsort(tp->kept[p], (size_t)kept, sizeof *tp->kept[p], prof_cmp);
		fprintf(stderr, "  %-34s %8.3f %8.3f %8.3f  (%ld)\n",
		    prof_names[p], 1e3 * tp->sum[p] / tp->n[p],
		    1e3 * tp->kept[p][kept / 2], 1e3 * tp->kept[p][kept * 9 / 10],
		    tp->n[p]);
	}
	for (int p = 0; p < TP_COUNT; p++)
		free(tp->kept[p]);
	memset(tp->kept, 0, sizeof tp->kept);
}
