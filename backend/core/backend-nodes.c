/*
 * backend-nodes.c: a node's frame into its view (backend.h): the sample
 * with its validity bits, its lists, its GPUs, the last minutes of its
 * rates for the sparklines, and the process rows of the ranks it runs
 * (into each rank's state, RM_PROC_MASK only: the worker's own frames say
 * the rest).  When a node's state or checkpoint file system runs short
 * (node_fs_low) the backend warns once, and again only after it had room.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/core/backend-internal.h"
#include "backend/core/series-file.h"

/* A job's saved series gets its nodes' samples every this many. */
#define NODE_SERIES_EVERY	10

static int	 node_rows[NODE_HIST_ROWS];	/* enum node_metric */
static int	 gpu_rows[GPU_HIST_ROWS];	/* enum gpu_metric */
static int	 n_node_rows, n_gpu_rows;
static pthread_once_t rows_once = PTHREAD_ONCE_INIT;

/* A rate, charted: its unit is "something/s", or it is a busy time. */
static bool
metric_is_rate(const struct metric_field *f)
{
	size_t	 u = strlen(f->unit), n = strlen(f->name);

	return (u > 2 && strcmp(f->unit + u - 2, "/s") == 0) ||
	    strcmp(f->name, "util") == 0 ||
	    (n > 5 && strcmp(f->name + n - 5, "_util") == 0);
}

static void
rows_init(void)
{
	for (int m = 0; m < NM_COUNT; m++) {
		if (!metric_is_rate(&node_metrics[m]))
			continue;
		if (n_node_rows == NODE_HIST_ROWS)
			abort();	/* NODE_HIST_ROWS is too small */
		node_rows[n_node_rows++] = m;
	}
	for (int m = 0; m < GM_COUNT; m++) {
		if (!metric_is_rate(&gpu_metrics[m]))
			continue;
		if (n_gpu_rows == GPU_HIST_ROWS)
			abort();	/* GPU_HIST_ROWS is too small */
		gpu_rows[n_gpu_rows++] = m;
	}
}

const int *
node_hist_rows(int *n)
{
	pthread_once(&rows_once, rows_init);
	*n = n_node_rows;
	return node_rows;
}

const int *
gpu_hist_rows(int *n)
{
	pthread_once(&rows_once, rows_init);
	*n = n_gpu_rows;
	return gpu_rows;
}

/* Where m is among n rows, or -1. */
static int
hist_find(const int *rows, int n, int m)
{
	for (int k = 0; k < n; k++) {
		if (rows[k] == m)
			return k;
	}
	return -1;
}

int
node_hist_row(enum node_metric m)
{
	pthread_once(&rows_once, rows_init);
	return hist_find(node_rows, n_node_rows, (int)m);
}

int
gpu_hist_row(enum gpu_metric m)
{
	pthread_once(&rows_once, rows_init);
	return hist_find(gpu_rows, n_gpu_rows, (int)m);
}

float
node_hist_get(const struct node_hist *h, int k, int i)
{
	return h->v[k][(h->head + i) % NODE_HIST];
}

float
gpu_hist_get(const struct gpu_hist *h, int k, int i)
{
	return h->v[k][(h->head + i) % NODE_HIST];
}

/* One sample's rates onto the end of a history (the shared shape of
 * both: a ring of rows). */
#define HIST_PUSH(h, nrows, value) do {					\
	int	 at_ = ((h)->head + (h)->len) % NODE_HIST;		\
									\
	for (int k_ = 0; k_ < (nrows); k_++)				\
		(h)->v[k_][at_] = (value);				\
	if ((h)->len < NODE_HIST)					\
		(h)->len++;						\
	else								\
		(h)->head = ((h)->head + 1) % NODE_HIST;		\
} while (0)

void
backend_node_push(struct node_view *nv)
{
	const struct node_sample *s = &nv->last;
	const int	*nr, *gr;
	int		 nn, ng;

	nr = node_hist_rows(&nn);
	gr = gpu_hist_rows(&ng);
	HIST_PUSH(&nv->hist, nn, node_sample_valid(s, nr[k_]) ?
	    (float)s->v[nr[k_]] : -1);
	if (nv->ngpus > nv->ngpus_hist) {
		nv->ghist = xreallocarray(nv->ghist, (size_t)nv->ngpus,
		    sizeof *nv->ghist);
		memset(nv->ghist + nv->ngpus_hist, 0, sizeof *nv->ghist *
		    (size_t)(nv->ngpus - nv->ngpus_hist));
		nv->ngpus_hist = nv->ngpus;
	}
	for (int g = 0; g < nv->ngpus; g++) {
		const struct gpu_sample *gs = &nv->gpus[g];

		HIST_PUSH(&nv->ghist[g], ng, gpu_sample_valid(gs, gr[k_]) ?
		    (float)gs->v[gr[k_]] : -1);
	}
}

/* Where each rank metric lives in struct rank_state. */
#define RANK_STATE_AT(id, field, ...) \
	[RM_##id] = offsetof(struct rank_state, field),
static const size_t rank_state_at[RM_COUNT] = { RANK_METRICS(RANK_STATE_AT) };
#undef RANK_STATE_AT

static const size_t *
rank_at(void)
{
	return rank_state_at;
}

/* The process rows of each rank the node runs, into its state. */
static void
node_rank_procs(struct backend *b, const json_t *list)
{
	const json_t	*o;
	size_t		 i;
	char		 err[1];

	json_array_foreach(list, i, o) {
		int		 r = -1;
		struct job_state *j = backend_frame_job(b, o, &r);

		if (j == NULL || r < 0)
			continue;	/* an old generation's, or not ours */
		/* Cannot fail: proto_kind checked every field's type. */
		metrics_merge(rank_metrics, RM_COUNT, rank_state_at, o,
		    &j->ranks[r], &j->ranks[r].known, RM_AGENT_MASK, err,
		    sizeof err);
	}
}

/* The free space of a node's state (0) or checkpoint (1) file system:
 * a warning once it runs short, the next only after it had room. */
static void
node_fs_check(struct backend *b, struct node_view *nv, int which)
{
	static const enum node_metric m0[2] = { NM_STATE_FREE, NM_CKPT_FREE };
	const struct node_sample *s = &nv->last;
	char		 f[32], t[32];
	bool		 low = node_fs_low(s, which == 1);

	if (low == nv->fs_low[which])
		return;
	nv->fs_low[which] = low;
	if (!low)
		return;
	/* Both on one file system: one warning says it. */
	if (which == 1 && nv->fs_low[0] && s->v[NM_CKPT_SIZE] ==
	    s->v[NM_STATE_SIZE] && s->v[NM_CKPT_FREE] == s->v[NM_STATE_FREE])
		return;
	snprintf(f, sizeof f, "%.1f MiB", s->v[m0[which]] / 1048576);
	snprintf(t, sizeof t, "%.1f MiB", s->v[m0[which] + 1] / 1048576);
	backend_event(b, NULL, EV_WARNING, -1, nv->spec->name, "node %s: the "
	    "file system of its %s directory has %s free of %s (%.0f%%)%s: "
	    "checkpoints may fail", nv->spec->name, which ? "checkpoint" :
	    "state", f, t, 100 * s->v[m0[which]] / (s->v[m0[which] + 1] > 0 ?
	    s->v[m0[which] + 1] : 1), which && node_sample_valid(s,
	    NM_CKPT_BYTES) ? ", room for fewer than two more checkpoints" : "");
}

/* Where each rank metric lives in struct rank_state (for the series). */
static const size_t *rank_at(void);

/* The node's sample into the saved series of every job that runs on it
 * (series-file.h): its rows, its GPUs' and the rows of the job's ranks'
 * processes there, for the report's "what moved". */
static void
node_series(struct backend *b, int n)
{
	struct node_view *nv = &b->nodes[n];
	json_t		*line = NULL;

	for (int i = 0; i < b->njobs; i++) {
		struct job_state *j = &b->jobs[i];
		json_t	*ranks = NULL;

		if (job_done(j) || j->series == NULL)
			continue;
		for (int r = 0; r < j->world; r++) {
			struct rank_state *rs = &j->ranks[r];
			json_t	*o;

			if (rs->node != n || rs->phase != RANK_RUNNING)
				continue;
			o = json_pack("{s:i}", "rank", r);
			metrics_put(rank_metrics, RM_COUNT, rank_at(), rs,
			    rs->known & (RM_PROC_MASK | RM_BIT(RSS)), false, o);
			if (ranks == NULL)
				ranks = json_array();
			json_array_append_new(ranks, o);
		}
		if (ranks == NULL)
			continue;
		if (line == NULL) {
			line = json_pack("{s:s, s:s}", "t", "node", "node",
			    nv->spec->name);
			json_object_update_new(line, node_sample_json(&nv->last));
			json_object_set_new(line, "gpus", gpu_samples_json(
			    nv->gpus, nv->ngpus));
		}
		json_object_set_new(line, "ranks", ranks);
		series_file_append(j->series, line);
	}
	json_decref(line);
}

void
backend_node_metrics(struct backend *b, int n, const json_t *m)
{
	struct node_view *nv = &b->nodes[n];
	char		 err[1];

	/* Cannot fail: proto_kind checked every field's type. */
	node_sample_read(m, &nv->last, err, sizeof err);
	node_lists_read(m, &nv->lists, err, sizeof err);
	nv->ngpus = gpu_samples_read(json_object_get(m, "gpus"), nv->gpus,
	    NODE_GPUS_MAX);
	nv->sampled = clock_mono();
	backend_node_push(nv);
	node_rank_procs(b, json_object_get(m, "ranks"));
	node_fs_check(b, nv, 0);
	node_fs_check(b, nv, 1);
	if (nv->frames++ % NODE_SERIES_EVERY == 0)
		node_series(b, n);
}

void
backend_node_hello(struct node_view *nv, const json_t *hello)
{
	const json_t	*blas = json_object_get(hello, "blas"), *s;
	const char	*ct = json_string_value(json_object_get(blas,
	    "coretype"));
	struct node_sample keep = nv->last;
	char		 err[1];
	size_t		 i;
	int		 nn;
	const int	*nr = node_hist_rows(&nn);

	snprintf(nv->blas.lib, sizeof nv->blas.lib, "%s", json_string_value(
	    json_object_get(blas, "library")) ?: "");
	snprintf(nv->blas.kernel, sizeof nv->blas.kernel, "%s",
	    json_string_value(json_object_get(blas, "kernel")) ?: "");
	snprintf(nv->blas.coretype, sizeof nv->blas.coretype, "%s", ct ?: "");
	/* A history to start from: the agent's last minute. */
	if (nv->hist.len > 0)
		return;
	json_array_foreach(json_object_get(hello, "samples"), i, s) {
		if (node_sample_read(s, &nv->last, err, sizeof err) == 0)
			HIST_PUSH(&nv->hist, nn, node_sample_valid(&nv->last,
			    nr[k_]) ? (float)nv->last.v[nr[k_]] : -1);
	}
	nv->last = keep;
}

void
backend_node_free(struct node_view *nv)
{
	free(nv->ghist);
	nv->ghist = NULL;
	nv->ngpus_hist = 0;
}
