/*
 * comm-hier.c: the "auto" backend of comm.c's table, what workers use.
 * Every rank publishes the identity of its host in the store and reads
 * everyone's; ranks with the same identity form a shared-memory group
 * (comm-shm.c), and the lowest rank of each host, its leader, joins a
 * Gloo group of leaders.  So:
 *   one host		the shared-memory group alone
 *   a rank per host	Gloo alone, exactly as the "gloo" backend
 *   otherwise		allreduce: sum within the host, allreduce between
 *			the leaders, broadcast within the host (as NCCL's
 *			and Horovod's hierarchical allreduce); allgatherv,
 *			broadcast and barrier likewise in three stages
 * With more than one host the sum's order is by host, then Gloo's
 * across hosts: every rank still gets the same bits.
 *
 * The identity is the boot id and host name, the user, and the network
 * namespace and the /dev/shm that the rank sees: ranks in different
 * network namespaces on one machine (containers, bench/slow-link) are
 * kept on the network they were given.  HUNTER_COMM_HOST, when set,
 * replaces it (the tests make several hosts of one machine with it).
 *
 * After any failure the group refuses further work; a leader drops its
 * Gloo group at once, so the other hosts see closed connections rather
 * than wait for the timeout, and wakes its host's waiting members.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "backend/comm/comm-backend.h"
#include "backend/comm/comm-shm-internal.h"

#define HIER_KEY	512

/* A store whose keys are prefixed, over the caller's. */
struct hier_store {
	struct comm_store	 up;
	char			 prefix[32];
};

struct hier {
	int			 rank, world, nhosts, host, leader;
	int			*host_of, *local_of;	/* by rank */
	int			*first;		/* each host's leader */
	int			 nlocal, *locals;	/* this host's ranks */
	struct shm_group	*shm;		/* NULL: alone on its host */
	void			*gloo;		/* leaders, with other hosts */
	struct hier_store	 hs_local, hs_lead;
	char			 failed[SHM_WHY];
};

static int
hier_set(void *ctx, const char *key, const void *val, size_t len)
{
	struct hier_store	*s = ctx;
	char			 full[512];

	snprintf(full, sizeof full, "%s%s", s->prefix, key);
	return s->up.set(s->up.ctx, full, val, len);
}

static int
hier_get(void *ctx, const char *key, void **val, size_t *len, int timeout_ms)
{
	struct hier_store	*s = ctx;
	char			 full[512];

	snprintf(full, sizeof full, "%s%s", s->prefix, key);
	return s->up.get(s->up.ctx, full, val, len, timeout_ms);
}

static struct comm_store
hier_store(struct hier_store *s, const struct comm_store *up,
    const char *prefix)
{
	s->up = *up;
	snprintf(s->prefix, sizeof s->prefix, "%s", prefix);
	return (struct comm_store){ .ctx = s, .set = hier_set, .get = hier_get };
}

static unsigned long long
hier_ino(const char *path)
{
	struct stat	st;

	return stat(path, &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* This rank's host identity (see the top), or HUNTER_COMM_HOST. */
static void
hier_host_key(char *key, size_t len)
{
	const char	*forced = getenv("HUNTER_COMM_HOST");
	char		 host[256] = "", boot[64] = "";
	struct stat	 st;
	FILE		*f;

	if (forced != NULL && *forced != '\0') {
		snprintf(key, len, "%s", forced);
		return;
	}
	gethostname(host, sizeof host - 1);
	if ((f = fopen("/proc/sys/kernel/random/boot_id", "r")) != NULL) {
		if (fgets(boot, sizeof boot, f) == NULL)
			boot[0] = '\0';
		boot[strcspn(boot, "\n")] = '\0';
		fclose(f);
	}
	if (stat("/dev/shm", &st) != 0)
		memset(&st, 0, sizeof st);
	snprintf(key, len, "%s %s uid %ld net %llu shm %llu:%llu", boot, host,
	    (long)geteuid(), hier_ino("/proc/self/ns/net"),
	    (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
}

/* Every rank's host identity, grouped: host_of, local_of, first, locals. */
static int
hier_map(struct hier *h, const struct comm_config *cf,
    const struct comm_store *cs, char *err, size_t errlen)
{
	char	 mine[HIER_KEY], key[64], (*keys)[HIER_KEY];
	int	*count;

	hier_host_key(mine, sizeof mine);
	snprintf(key, sizeof key, "g%d/host/%d", cf->generation, cf->rank);
	if (cs->set(cs->ctx, key, mine, strlen(mine)) != 0) {
		errf(err, errlen, "comm: rank %d: publishing its host failed",
		    cf->rank);
		return -1;
	}
	keys = xcalloc((size_t)h->world, sizeof *keys);
	count = xcalloc((size_t)h->world, sizeof *count);
	for (int r = 0; r < h->world; r++) {
		void	*val;
		size_t	 len;
		int	 hh;

		snprintf(key, sizeof key, "g%d/host/%d", cf->generation, r);
		if (cs->get(cs->ctx, key, &val, &len, cf->timeout_ms) != 0) {
			errf(err, errlen, "rendezvous of rank %d of %d "
			    "(generation %d): rank %d's host not known within "
			    "%d ms", cf->rank, cf->world, cf->generation, r,
			    cf->timeout_ms);
			free(keys);
			free(count);
			return -1;
		}
		snprintf(keys[r], HIER_KEY, "%.*s", (int)len, (char *)val);
		free(val);
		for (hh = 0; hh < h->nhosts; hh++)
			if (strcmp(keys[h->first[hh]], keys[r]) == 0)
				break;
		if (hh == h->nhosts)
			h->first[h->nhosts++] = r;
		h->host_of[r] = hh;
		h->local_of[r] = count[hh]++;
	}
	h->host = h->host_of[h->rank];
	h->leader = h->first[h->host] == h->rank;
	h->nlocal = count[h->host];
	h->locals = xcalloc((size_t)h->nlocal, sizeof *h->locals);
	for (int r = 0; r < h->world; r++)
		if (h->host_of[r] == h->host)
			h->locals[h->local_of[r]] = r;
	free(keys);
	free(count);
	return 0;
}

static void hier_destroy(void *);

static void *
hier_init(const struct comm_config *cf, const struct comm_store *cs,
    char *err, size_t errlen)
{
	struct hier		*h = xcalloc(1, sizeof *h);
	struct comm_config	 lead = *cf;
	struct comm_store	 s;
	char			 prefix[32], key[48];

	h->rank = cf->rank;
	h->world = cf->world;
	h->host_of = xcalloc((size_t)cf->world, sizeof *h->host_of);
	h->local_of = xcalloc((size_t)cf->world, sizeof *h->local_of);
	h->first = xcalloc((size_t)cf->world, sizeof *h->first);
	if (cf->world > 1 && hier_map(h, cf, cs, err, errlen) != 0)
		goto fail;
	if (cf->world == 1 || h->nhosts == cf->world) {	/* nobody shares */
		if ((h->gloo = comm_backend_gloo.init(cf, cs, err, errlen)) == NULL)
			goto fail;
		return h;
	}
	if (h->nlocal > 1) {
		snprintf(prefix, sizeof prefix, "host%d/", h->first[h->host]);
		s = hier_store(&h->hs_local, cs, prefix);
		snprintf(key, sizeof key, "g%d/shm", cf->generation);
		if ((h->shm = shm_join(h->local_of[h->rank], h->nlocal, h->locals,
		    cf->timeout_ms, &s, key, err, errlen)) == NULL)
			goto fail;
	}
	if (h->leader && h->nhosts > 1) {
		lead.rank = h->host;
		lead.world = h->nhosts;
		s = hier_store(&h->hs_lead, cs, "leaders/");
		if ((h->gloo = comm_backend_gloo.init(&lead, &s, err,
		    errlen)) == NULL)
			goto fail;
	}
	return h;

fail:
	if (h->shm != NULL)
		shm_fail(h->shm, err);
	hier_destroy(h);
	return NULL;
}

/* Keep the first failure; drop the leaders' group; wake the host. */
static int
hier_failed(struct hier *h, const char *err)
{
	if (h->failed[0] == '\0')
		snprintf(h->failed, sizeof h->failed, "%s", err);
	if (h->gloo != NULL && h->shm != NULL) {
		comm_backend_gloo.destroy(h->gloo);
		h->gloo = NULL;
	}
	if (h->shm != NULL)
		shm_fail(h->shm, err);
	return -1;
}

/* Only the leaders' group, or only the host's: the call itself. */
#define HIER_ALONE(h)	((h)->shm == NULL || (h)->nhosts == 1)

static int
hier_refuse(struct hier *h, const char *what, char *err, size_t errlen)
{
	errf(err, errlen, "%s: group failed earlier (%s)", what, h->failed);
	return -1;
}

static int
hier_allreduce(void *p, float *buf, size_t n, char *err, size_t errlen)
{
	struct hier	*h = p;

	if (h->world == 1 || n == 0)
		return 0;
	if (h->shm == NULL)
		return comm_backend_gloo.allreduce_f32(h->gloo, buf, n, err, errlen);
	if (h->nhosts == 1)
		return shm_allreduce(h->shm, buf, n, err, errlen);
	if (h->failed[0] != '\0')
		return hier_refuse(h, "allreduce", err, errlen);
	if (shm_allreduce(h->shm, buf, n, err, errlen) != 0 ||
	    (h->leader && comm_backend_gloo.allreduce_f32(h->gloo, buf, n, err,
	    errlen) != 0) ||
	    shm_broadcast(h->shm, buf, n * sizeof *buf, 0, err, errlen) != 0)
		return hier_failed(h, err);
	return 0;
}

/* Within one host, the shared-memory group's own; across hosts, the
 * hierarchical allreduce. */
static int
hier_reduce_scatter(void *p, float *buf, size_t n, const size_t *counts,
    char *err, size_t errlen)
{
	struct hier	*h = p;

	if (h->world > 1 && n > 0 && h->shm != NULL && h->nhosts == 1)
		return shm_reduce_scatter(h->shm, buf, n, counts, err, errlen);
	return hier_allreduce(p, buf, n, err, errlen);
}

/* The leaders' gather of every host's part, put in rank order. */
static int
hier_lead_gather(struct hier *h, const uint8_t *part, uint8_t *out,
    const size_t *lens, char *err, size_t errlen)
{
	size_t	*hl = xcalloc((size_t)h->nhosts, sizeof *hl), *off, total = 0;
	uint8_t	*all, *at;
	int	 rc;

	off = xcalloc((size_t)h->world, sizeof *off);
	for (int r = 0; r < h->world; r++) {
		off[r] = total;
		total += lens[r];
		hl[h->host_of[r]] += lens[r];
	}
	all = xmalloc(total + 1);
	rc = comm_backend_gloo.allgatherv(h->gloo, part, all, hl, err, errlen);
	at = all;
	for (int hh = 0; rc == 0 && hh < h->nhosts; hh++) {
		for (int r = 0; r < h->world; r++) {
			if (h->host_of[r] != hh)
				continue;
			memcpy(out + off[r], at, lens[r]);
			at += lens[r];
		}
	}
	free(all);
	free(off);
	free(hl);
	return rc;
}

static int
hier_allgatherv(void *p, const void *in, void *out, const size_t *lens,
    char *err, size_t errlen)
{
	struct hier	*h = p;
	size_t		*ll, lt = 0, total = 0;
	uint8_t		*part;
	int		 rc;

	if (h->world == 1 || h->shm == NULL)
		return comm_backend_gloo.allgatherv(h->gloo, in, out, lens, err,
		    errlen);
	if (h->nhosts == 1)
		return shm_allgatherv(h->shm, in, out, lens, err, errlen);
	if (h->failed[0] != '\0')
		return hier_refuse(h, "allgatherv", err, errlen);
	ll = xcalloc((size_t)h->nlocal, sizeof *ll);
	for (int i = 0; i < h->nlocal; i++)
		lt += ll[i] = lens[h->locals[i]];
	for (int r = 0; r < h->world; r++)
		total += lens[r];
	part = xmalloc(lt + 1);
	rc = shm_allgatherv(h->shm, in, part, ll, err, errlen);
	if (rc == 0 && h->leader)
		rc = hier_lead_gather(h, part, out, lens, err, errlen);
	if (rc == 0)
		rc = shm_broadcast(h->shm, out, total, 0, err, errlen);
	free(part);
	free(ll);
	return rc == 0 ? 0 : hier_failed(h, err);
}

static int
hier_broadcast(void *p, void *buf, size_t len, int root, char *err,
    size_t errlen)
{
	struct hier	*h = p;
	int		 rh;

	if (h->world == 1 || len == 0)
		return 0;
	if (h->shm == NULL)
		return comm_backend_gloo.broadcast(h->gloo, buf, len, root, err,
		    errlen);
	if (h->nhosts == 1)
		return shm_broadcast(h->shm, buf, len, root, err, errlen);
	if (h->failed[0] != '\0')
		return hier_refuse(h, "broadcast", err, errlen);
	rh = h->host_of[root];
	if ((rh == h->host && shm_broadcast(h->shm, buf, len, h->local_of[root],
	    err, errlen) != 0) ||
	    (h->leader && comm_backend_gloo.broadcast(h->gloo, buf, len, rh, err,
	    errlen) != 0) ||
	    (rh != h->host && shm_broadcast(h->shm, buf, len, 0, err,
	    errlen) != 0))
		return hier_failed(h, err);
	return 0;
}

static int
hier_barrier(void *p, char *err, size_t errlen)
{
	struct hier	*h = p;

	if (h->world == 1)
		return 0;
	if (h->shm == NULL)
		return comm_backend_gloo.barrier(h->gloo, err, errlen);
	if (h->nhosts == 1)
		return shm_barrier(h->shm, err, errlen);
	if (h->failed[0] != '\0')
		return hier_refuse(h, "barrier", err, errlen);
	if (shm_barrier(h->shm, err, errlen) != 0 ||
	    (h->leader && comm_backend_gloo.barrier(h->gloo, err, errlen) != 0) ||
	    shm_barrier(h->shm, err, errlen) != 0)
		return hier_failed(h, err);
	return 0;
}

static void
hier_destroy(void *p)
{
	struct hier	*h = p;

	if (h == NULL)
		return;
	if (h->gloo != NULL)
		comm_backend_gloo.destroy(h->gloo);
	shm_leave(h->shm);
	free(h->host_of);
	free(h->local_of);
	free(h->first);
	free(h->locals);
	free(h);
}

/* Transfers in the background only where nobody shares a host: the
 * group is then Gloo's alone, of the same ranks. */
static int
hier_has_xfer(void *p)
{
	struct hier	*h = p;

	return h->shm == NULL && h->gloo != NULL && h->world > 1 &&
	    h->failed[0] == '\0';
}

static void *
hier_xfer_start(void *p, void *buf, size_t len, int peer, int send,
    uint32_t tag, char *err, size_t errlen)
{
	struct hier	*h = p;

	if (!hier_has_xfer(h)) {
		errf(err, errlen, "transfer: ranks share a host, or the group "
		    "failed");
		return NULL;
	}
	return comm_backend_gloo.xfer_start(h->gloo, buf, len, peer, send,
	    tag, err, errlen);
}

static int
hier_xfer_wait(void *p, void *x, char *err, size_t errlen)
{
	struct hier	*h = p;

	return comm_backend_gloo.xfer_wait(h->gloo, x, err, errlen);
}

const struct comm_backend comm_backend_auto = {
	"auto", "host", hier_init, hier_allreduce, hier_allgatherv,
	hier_broadcast, hier_barrier, hier_destroy, hier_reduce_scatter,
	hier_has_xfer, hier_xfer_start, hier_xfer_wait,
};
