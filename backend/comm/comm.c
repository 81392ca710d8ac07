/*
 * comm.c: the table of collective backends and the calls of comm.h, which
 * check what every backend needs and pass the rest to the backend named
 * in the config.  A backend is one file exporting a const struct
 * comm_backend (comm-backend.h); a new one is a file and a line in
 * comm_backends[].  nccl is in the table only when configure found CUDA.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errf.h"
#include "backend/comm/comm-backend.h"

static const struct comm_backend *const comm_backends[] = {
	&comm_backend_gloo,
	&comm_backend_shm,
	&comm_backend_auto,
#ifdef HAVE_CUDA
	&comm_backend_nccl,
#endif
};
#define COMM_NBACKENDS	(sizeof comm_backends / sizeof comm_backends[0])

struct comm {
	const struct comm_backend	*be;
	void				*impl;
	int				 rank, world;
};

/* The backend called name, or NULL. */
static const struct comm_backend *
comm_find(const char *name)
{
	for (size_t i = 0; name != NULL && i < COMM_NBACKENDS; i++) {
		if (strcmp(comm_backends[i]->name, name) == 0)
			return comm_backends[i];
	}
	return NULL;
}

struct comm *
comm_init(const struct comm_config *cf, const struct comm_store *cs,
    char *err, size_t errlen)
{
	const struct comm_backend	*be = comm_find(cf->backend);
	struct comm			*c;
	void				*impl;

	if (be == NULL) {
		errf(err, errlen, "comm backend '%s' is not built",
		    cf->backend != NULL ? cf->backend : "(none)");
		return NULL;
	}
	if (cf->world < 1 || cf->rank < 0 || cf->rank >= cf->world) {
		errf(err, errlen, "comm: rank %d is not in a world of %d",
		    cf->rank, cf->world);
		return NULL;
	}
	if (cf->timeout_ms <= 0) {
		errf(err, errlen, "comm: timeout of %d ms is not positive",
		    cf->timeout_ms);
		return NULL;
	}
	if (cf->world > 1 && (cs == NULL || cs->set == NULL ||
	    cs->get == NULL)) {
		errf(err, errlen, "comm: rank %d has no store", cf->rank);
		return NULL;
	}
	if ((c = calloc(1, sizeof *c)) == NULL) {
		errf(err, errlen, "comm: out of memory");
		return NULL;
	}
	if ((impl = be->init(cf, cs, err, errlen)) == NULL) {
		free(c);
		return NULL;
	}
	c->be = be;
	c->impl = impl;
	c->rank = cf->rank;
	c->world = cf->world;
	return c;
}

int
comm_allreduce_f32(struct comm *c, float *buf, size_t n, char *err,
    size_t errlen)
{
	return c->be->allreduce_f32(c->impl, buf, n, err, errlen);
}

int
comm_reduce_scatter_f32(struct comm *c, float *buf, size_t n,
    const size_t *counts, char *err, size_t errlen)
{
	size_t	 total = 0;

	for (int r = 0; r < c->world; r++)
		total += counts[r];
	if (total != n) {
		errf(err, errlen, "reduce-scatter of %zu floats: the ranks' "
		    "parts add up to %zu", n, total);
		return -1;
	}
	if (c->be->reduce_scatter_f32 == NULL)
		return c->be->allreduce_f32(c->impl, buf, n, err, errlen);
	return c->be->reduce_scatter_f32(c->impl, buf, n, counts, err, errlen);
}

int
comm_allgatherv(struct comm *c, const void *in, void *out,
    const size_t *lens, char *err, size_t errlen)
{
	return c->be->allgatherv(c->impl, in, out, lens, err, errlen);
}

int
comm_broadcast(struct comm *c, void *buf, size_t len, int root, char *err,
    size_t errlen)
{
	if (root < 0 || root >= c->world) {
		errf(err, errlen, "broadcast from rank %d: not in a world "
		    "of %d", root, c->world);
		return -1;
	}
	return c->be->broadcast(c->impl, buf, len, root, err, errlen);
}

int
comm_barrier(struct comm *c, char *err, size_t errlen)
{
	return c->be->barrier(c->impl, err, errlen);
}

int
comm_has_xfer(const struct comm *c)
{
	return c->world > 1 && c->be->has_xfer != NULL &&
	    c->be->has_xfer(c->impl);
}

struct comm_xfer *
comm_xfer_start(struct comm *c, void *buf, size_t len, int peer, int send,
    uint32_t tag, char *err, size_t errlen)
{
	if (!comm_has_xfer(c)) {
		errf(err, errlen, "comm backend %s: no transfers in the "
		    "background here", c->be->name);
		return NULL;
	}
	if (peer < 0 || peer >= c->world || peer == c->rank) {
		errf(err, errlen, "transfer %s rank %d: not another rank of a "
		    "world of %d", send ? "to" : "from", peer, c->world);
		return NULL;
	}
	return c->be->xfer_start(c->impl, buf, len, peer, send, tag, err,
	    errlen);
}

int
comm_xfer_wait(struct comm *c, struct comm_xfer *x, char *err, size_t errlen)
{
	return c->be->xfer_wait(c->impl, x, err, errlen);
}

void
comm_destroy(struct comm *c)
{
	if (c == NULL)
		return;
	c->be->destroy(c->impl);
	free(c);
}

int
comm_rank(const struct comm *c)
{
	return c->rank;
}

int
comm_world(const struct comm *c)
{
	return c->world;
}

const char *
comm_backend_name(const struct comm *c)
{
	return c->be->name;
}

const char *
comm_memory(const struct comm *c)
{
	return c->be->memory;
}
