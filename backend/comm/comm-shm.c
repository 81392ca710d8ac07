/*
 * comm-shm.c: the collectives of a shared-memory group (the segment and
 * its barrier are comm-shm-seg.c's) and the "shm" backend of comm.c's
 * table, one such group of every rank, all on one host.
 *
 * allreduce, in chunks of a slot (SHM_SLOT bytes, or less): every member copies its chunk
 * into its slot, meets the others, sums one slice of the chunk (1/world
 * of it) over all the slots in rank order into the extra slot, meets
 * them again, and copies the other slices of the sum back.  So every
 * member's core reduces, every member reads the same sums, and a
 * member's own slice never goes through the segment (it reads its own
 * buffer and writes its sum there directly).  The order of the sum is
 * ((r0 + r1) + r2) + ..., the same on every member; for two ranks it is
 * bit for bit what any order gives.
 *
 * reduce-scatter, a step at a time: every member copies into its slot a
 * piece of each other member's part (1/world of a slot each), meets
 * them, and sums its own part's piece over the slots in the same rank
 * order, so its part has the bits an allreduce gives; the halves
 * alternate, so one meeting a step is enough.
 *
 * allgatherv copies each member's bytes through its slot, a slot's
 * worth a step; broadcast copies the root's through a whole half.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "backend/comm/comm-backend.h"
#include "backend/comm/comm-shm-internal.h"

#define SHM_SPAN	16		/* fixed trip counts vectorise at -O2 */
#define SHM_BLOCK	1024		/* floats summed in L1 at a time */

enum { SHM_ALLREDUCE = 1, SHM_ALLGATHERV, SHM_BROADCAST, SHM_BARRIER,
	SHM_REDUCE_SCATTER };

static void
shm_add2(float *restrict d, const float *restrict a, const float *restrict b,
    size_t n)
{
	size_t	i = 0;

	for (; i + SHM_SPAN <= n; i += SHM_SPAN)
		for (size_t j = 0; j < SHM_SPAN; j++)
			d[i + j] = a[i + j] + b[i + j];
	for (; i < n; i++)
		d[i] = a[i] + b[i];
}

static void
shm_add(float *restrict d, const float *restrict a, size_t n)
{
	size_t	i = 0;

	for (; i + SHM_SPAN <= n; i += SHM_SPAN)
		for (size_t j = 0; j < SHM_SPAN; j++)
			d[i + j] += a[i + j];
	for (; i < n; i++)
		d[i] += a[i];
}

/* out = own = src[0] + src[1] + ... in that order, n floats; own may be
 * one of the sources. */
static void
shm_reduce(float *out, float *own, const float *const *src, int nsrc,
    size_t n)
{
	_Alignas(64) float	tmp[SHM_BLOCK];

	for (size_t i = 0; i < n; i += SHM_BLOCK) {
		size_t	m = n - i < SHM_BLOCK ? n - i : SHM_BLOCK;

		shm_add2(tmp, src[0] + i, src[1] + i, m);
		for (int q = 2; q < nsrc; q++)
			shm_add(tmp, src[q] + i, m);
		memcpy(out + i, tmp, m * sizeof *tmp);
		if (own != out)
			memcpy(own + i, tmp, m * sizeof *tmp);
	}
}

int
shm_allreduce(struct shm_group *g, float *buf, size_t n, char *err,
    size_t errlen)
{
	const size_t	 chunk = g->slot / sizeof(float);
	const float	*src[SHM_MAX_WORLD];
	uint32_t	 tag = shm_tag(SHM_ALLREDUCE, n, 0);
	char		 what[64];

	snprintf(what, sizeof what, "allreduce of %zu floats", n);
	if (g->failed[0] != '\0')
		return shm_refuse(g, what, err, errlen);
	for (size_t off = 0; off < n; off += chunk) {
		size_t	 len = n - off < chunk ? n - off : chunk;
		size_t	 per = ((len + (size_t)g->world - 1) / (size_t)g->world +
		    SHM_SPAN - 1) & ~(size_t)(SHM_SPAN - 1);
		size_t	 lo = (size_t)g->rank * per, hi;
		float	*mine = (float *)shm_slot(g, g->rank), *sum, *b = buf + off;

		lo = lo < len ? lo : len;
		hi = lo + per < len ? lo + per : len;
		memcpy(mine, b, lo * sizeof *b);
		memcpy(mine + hi, b + hi, (len - hi) * sizeof *b);
		if (shm_meet(g, tag, what, err, errlen) != 0)
			return -1;
		for (int q = 0; q < g->world; q++)
			src[q] = q == g->rank ? b + lo :
			    (const float *)shm_slot(g, q) + lo;
		sum = (float *)shm_slot(g, g->world);
		if (hi > lo)
			shm_reduce(sum + lo, b + lo, src, g->world, hi - lo);
		if (shm_meet(g, tag, what, err, errlen) != 0)
			return -1;
		memcpy(b, sum, lo * sizeof *b);
		memcpy(b + hi, sum + hi, (len - hi) * sizeof *b);
		g->step++;
	}
	return 0;
}

int
shm_reduce_scatter(struct shm_group *g, float *buf, size_t n,
    const size_t *counts, char *err, size_t errlen)
{
	const size_t	 per = (g->slot / sizeof(float) / (size_t)g->world) &
	    ~(size_t)(SHM_SPAN - 1);
	size_t		 off[SHM_MAX_WORLD], most = 0, at = 0;
	const float	*src[SHM_MAX_WORLD];
	uint32_t	 tag = shm_tag(SHM_REDUCE_SCATTER, n, 0);
	char		 what[64];

	snprintf(what, sizeof what, "reduce-scatter of %zu floats", n);
	if (g->failed[0] != '\0')
		return shm_refuse(g, what, err, errlen);
	for (int q = 0; q < g->world; q++) {
		off[q] = at;
		at += counts[q];
		most = counts[q] > most ? counts[q] : most;
	}
	for (size_t pos = 0; pos < most; pos += per) {
		float	*mine = (float *)shm_slot(g, g->rank);
		float	*own = buf + off[g->rank] + pos;
		size_t	 m;

		for (int q = 0; q < g->world; q++) {
			m = counts[q] > pos ? counts[q] - pos : 0;
			if (q != g->rank && m > 0)
				memcpy(mine + (size_t)q * per, buf + off[q] + pos,
				    (m < per ? m : per) * sizeof *buf);
		}
		if (shm_meet(g, tag, what, err, errlen) != 0)
			return -1;
		for (int q = 0; q < g->world; q++)
			src[q] = q == g->rank ? own :
			    (const float *)shm_slot(g, q) + (size_t)g->rank * per;
		m = counts[g->rank] > pos ? counts[g->rank] - pos : 0;
		if (m > 0)
			shm_reduce(own, own, src, g->world, m < per ? m : per);
		g->step++;
	}
	return 0;
}

int
shm_allgatherv(struct shm_group *g, const void *in, void *out,
    const size_t *lens, char *err, size_t errlen)
{
	size_t		 total = 0, most = 0, off[SHM_MAX_WORLD];
	uint8_t		*o = out;
	const uint8_t	*i8 = in;
	uint32_t	 tag;
	char		 what[64];

	for (int q = 0; q < g->world; q++) {
		off[q] = total;
		total += lens[q];
		most = lens[q] > most ? lens[q] : most;
	}
	snprintf(what, sizeof what, "allgatherv of %zu bytes", total);
	if (g->failed[0] != '\0')
		return shm_refuse(g, what, err, errlen);
	tag = shm_tag(SHM_ALLGATHERV, total, (int)most);
	for (size_t pos = 0; pos < most; pos += g->slot) {
		size_t	m = lens[g->rank] > pos ? lens[g->rank] - pos : 0;

		memcpy(shm_slot(g, g->rank), i8 + pos, m < g->slot ? m : g->slot);
		if (shm_meet(g, tag, what, err, errlen) != 0)
			return -1;
		for (int q = 0; q < g->world; q++) {
			const uint8_t	*from = q == g->rank ? i8 + pos :
			    shm_slot(g, q);

			m = lens[q] > pos ? lens[q] - pos : 0;
			m = m < g->slot ? m : g->slot;
			if (m > 0 && o + off[q] + pos != from)
				memmove(o + off[q] + pos, from, m);
		}
		g->step++;
	}
	return 0;
}

int
shm_broadcast(struct shm_group *g, void *buf, size_t len, int root, char *err,
    size_t errlen)
{
	const size_t	 cap = (size_t)(g->world + 1) * g->slot;
	uint8_t		*b = buf;
	uint32_t	 tag = shm_tag(SHM_BROADCAST, len, root);
	char		 what[80];

	snprintf(what, sizeof what, "broadcast of %zu bytes from rank %d", len,
	    g->global[root]);
	if (g->failed[0] != '\0')
		return shm_refuse(g, what, err, errlen);
	for (size_t pos = 0; pos < len; pos += cap) {
		size_t	m = len - pos < cap ? len - pos : cap;

		if (g->rank == root)
			memcpy(shm_slot(g, 0), b + pos, m);
		if (shm_meet(g, tag, what, err, errlen) != 0)
			return -1;
		if (g->rank != root)
			memcpy(b + pos, shm_slot(g, 0), m);
		g->step++;
	}
	return 0;
}

int
shm_barrier(struct shm_group *g, char *err, size_t errlen)
{
	if (g->failed[0] != '\0')
		return shm_refuse(g, "barrier", err, errlen);
	return shm_meet(g, shm_tag(SHM_BARRIER, 0, 0), "barrier", err, errlen);
}

/* The "shm" backend: every rank in one group; a group of one has none. */
struct comm_shm {
	int			 world;
	struct shm_group	*g;
};

static void *
shmb_init(const struct comm_config *cf, const struct comm_store *cs,
    char *err, size_t errlen)
{
	struct comm_shm	*c = xcalloc(1, sizeof *c);
	char		 key[32];

	c->world = cf->world;
	if (cf->world == 1)
		return c;
	snprintf(key, sizeof key, "g%d/shm", cf->generation);
	if ((c->g = shm_join(cf->rank, cf->world, NULL, cf->timeout_ms, cs, key,
	    err, errlen)) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

static int
shmb_allreduce(void *p, float *buf, size_t n, char *err, size_t errlen)
{
	struct comm_shm	*c = p;

	return c->g == NULL || n == 0 ? 0 : shm_allreduce(c->g, buf, n, err,
	    errlen);
}

static int
shmb_reduce_scatter(void *p, float *buf, size_t n, const size_t *counts,
    char *err, size_t errlen)
{
	struct comm_shm	*c = p;

	return c->g == NULL || n == 0 ? 0 : shm_reduce_scatter(c->g, buf, n,
	    counts, err, errlen);
}

static int
shmb_allgatherv(void *p, const void *in, void *out, const size_t *lens,
    char *err, size_t errlen)
{
	struct comm_shm	*c = p;

	if (c->g == NULL) {
		if (lens[0] != 0 && in != out)
			memmove(out, in, lens[0]);
		return 0;
	}
	return shm_allgatherv(c->g, in, out, lens, err, errlen);
}

static int
shmb_broadcast(void *p, void *buf, size_t len, int root, char *err,
    size_t errlen)
{
	struct comm_shm	*c = p;

	return c->g == NULL || len == 0 ? 0 : shm_broadcast(c->g, buf, len,
	    root, err, errlen);
}

static int
shmb_barrier(void *p, char *err, size_t errlen)
{
	struct comm_shm	*c = p;

	return c->g == NULL ? 0 : shm_barrier(c->g, err, errlen);
}

static void
shmb_destroy(void *p)
{
	struct comm_shm	*c = p;

	if (c == NULL)
		return;
	shm_leave(c->g);
	free(c);
}

const struct comm_backend comm_backend_shm = {
	"shm", "host", shmb_init, shmb_allreduce, shmb_allgatherv,
	shmb_broadcast, shmb_barrier, shmb_destroy, shmb_reduce_scatter,
	NULL, NULL, NULL,	/* no transfers in the background: no need */
};
