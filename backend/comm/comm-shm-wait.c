/*
 * comm-shm-wait.c: the barrier every step of a shared-memory group meets
 * at (see comm-shm-internal.h), and a group's failure.
 *
 * A member waiting at a barrier spins a little (when the members are
 * no more than the CPUs: a peer one step behind is usually microseconds
 * away; less and less while spinning does not pay), then sleeps on the
 * doorbell futex and, every SHM_CHECK_S, looks at the late members'
 * locks: a member whose lock is gone has died, and the wait fails at
 * once instead of at the timeout.  A member that gives up says why in
 * the header and rings, so the others fail at once too.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/errf.h"
#include "backend/comm/comm-shm-internal.h"

#define SHM_CHECK_S	0.02		/* between looks at late members */

static void
shm_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

void
shm_ring(struct shm_head *h)
{
	if (atomic_load(&h->sleepers) == 0)
		return;
	atomic_fetch_add(&h->bell, 1);
	syscall(SYS_futex, (uint32_t *)&h->bell, FUTEX_WAKE, INT_MAX, NULL,
	    NULL, 0);
}

static void
shm_sleep(struct shm_head *h, uint32_t bell, double secs)
{
	struct timespec	ts;

	if (secs <= 0)
		return;
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	syscall(SYS_futex, (uint32_t *)&h->bell, FUTEX_WAIT, bell, &ts, NULL, 0);
}

uint32_t
shm_tag(int code, size_t size, int root)
{
	uint64_t	x = (uint64_t)size * 0x9e3779b97f4a7c15ull ^
	    (uint64_t)(unsigned)root;

	return (uint32_t)((x >> 40) & ((1u << (SHM_TAG_BITS - 3)) - 1)) |
	    (uint32_t)(code & 7) << (SHM_TAG_BITS - 3);
}

int
shm_refuse(const struct shm_group *g, const char *what, char *err,
    size_t errlen)
{
	errf(err, errlen, "%s: group failed earlier (%s)", what, g->failed);
	return -1;
}

void
shm_fail(struct shm_group *g, const char *why)
{
	int32_t	none = 0;

	if (g->failed[0] == '\0')
		snprintf(g->failed, sizeof g->failed, "%s", why);
	if (g->h == NULL)
		return;
	if (atomic_compare_exchange_strong(&g->h->failed, &none, 1 + g->rank))
		snprintf(g->h->why, sizeof g->h->why, "%s", why);
	atomic_fetch_add(&g->h->sleepers, 1);
	shm_ring(g->h);
	atomic_fetch_sub(&g->h->sleepers, 1);
}

/* Fail with a reason of our own: in err after what, and for everyone. */
static int
shm_give_up(struct shm_group *g, const char *what, char *err, size_t errlen,
    const char *why)
{
	shm_fail(g, why);
	errf(err, errlen, "%s: %s", what, why);
	return -1;
}

/* Whether member q still holds its lock, i.e. its process is alive. */
static int
shm_alive(const struct shm_group *g, int q)
{
	struct flock	fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	    .l_start = q, .l_len = 1 };

	if (fcntl(g->fd, F_OFD_GETLK, &fl) != 0)
		return 1;
	return fl.l_type != F_UNLCK;
}

/* The first member from q on that has not reached barrier seq (or, with
 * seq 0, attached), or -1. */
static int
shm_late(const struct shm_group *g, uint64_t seq, int q)
{
	for (; q < g->world; q++) {
		const struct shm_member *m = &g->h->member[q];

		if (seq == 0 ? atomic_load_explicit(&m->attached,
		    memory_order_acquire) == 0 :
		    atomic_load_explicit(&m->arrived, memory_order_acquire) >>
		    SHM_TAG_BITS < seq)
			return q;
	}
	return -1;
}

/* Spin longer after a wait that spinning ended, shorter after one that
 * slept: on a host busier than its CPUs the peer is seldom microseconds
 * away, and the spinning only takes a CPU from it. */
static void
shm_adapt(struct shm_group *g, int spun)
{
	if (spun)
		g->spin = g->spin * 2 + 16 < g->spin_max ? g->spin * 2 + 16 :
		    g->spin_max;
	else
		g->spin /= 2;
}

int
shm_wait(struct shm_group *g, uint64_t seq, const char *what, double deadline,
    char *err, size_t errlen)
{
	struct shm_head	*h = g->h;
	double		 now, next_check = 0;
	char		 why[SHM_WHY];
	int		 late = 0, failed;
	uint32_t	 bell;

	for (long spins = 0;; spins++) {
		if ((late = shm_late(g, seq, late)) < 0) {
			shm_adapt(g, spins < g->spin);
			return 0;
		}
		if ((failed = atomic_load(&h->failed)) != 0) {
			snprintf(why, sizeof why, "rank %d gave up: %s",
			    g->global[failed - 1], h->why);
			snprintf(g->failed, sizeof g->failed, "%s", why);
			errf(err, errlen, "%s: %s", what, why);
			return -1;
		}
		if (spins < g->spin) {
			shm_relax();
			continue;
		}
		now = clock_mono();
		if (now >= deadline) {
			if (seq == 0)
				snprintf(why, sizeof why, "rank %d did not join "
				    "within %d ms", g->global[late],
				    g->timeout_ms);
			else
				snprintf(why, sizeof why, "rank %d (pid %d) did "
				    "not arrive within %d ms", g->global[late],
				    (int)h->member[late].pid, g->timeout_ms);
			return shm_give_up(g, what, err, errlen, why);
		}
		if (now >= next_check) {
			for (int q = late; q >= 0; q = shm_late(g, seq, q + 1)) {
				if (!atomic_load(&h->member[q].attached) ||
				    shm_alive(g, q))
					continue;
				snprintf(why, sizeof why, "rank %d (pid %d) died",
				    g->global[q], (int)h->member[q].pid);
				return shm_give_up(g, what, err, errlen, why);
			}
			next_check = now + SHM_CHECK_S;
		}
		atomic_fetch_add(&h->sleepers, 1);
		bell = atomic_load(&h->bell);
		if (shm_late(g, seq, late) >= 0 && atomic_load(&h->failed) == 0)
			shm_sleep(h, bell, deadline - now < SHM_CHECK_S ?
			    deadline - now : SHM_CHECK_S);
		atomic_fetch_sub(&h->sleepers, 1);
	}
}

int
shm_meet(struct shm_group *g, uint32_t tag, const char *what, char *err,
    size_t errlen)
{
	double		 deadline = clock_mono() + g->timeout_ms / 1e3;
	struct shm_head	*h = g->h;
	char		 why[SHM_WHY];

	g->seq++;
	atomic_store(&h->member[g->rank].arrived, g->seq << SHM_TAG_BITS | tag);
	shm_ring(h);
	if (shm_wait(g, g->seq, what, deadline, err, errlen) != 0)
		return -1;
	/* A member already at a later barrier agreed on this one. */
	for (int q = 0; q < g->world; q++) {
		uint64_t a = atomic_load(&h->member[q].arrived);

		if (a >> SHM_TAG_BITS != g->seq ||
		    (a & ((1u << SHM_TAG_BITS) - 1)) == tag)
			continue;
		snprintf(why, sizeof why, "rank %d is in another collective "
		    "(tag %06x, ours %06x)", g->global[q],
		    (unsigned)(a & ((1u << SHM_TAG_BITS) - 1)), (unsigned)tag);
		return shm_give_up(g, what, err, errlen, why);
	}
	return 0;
}
