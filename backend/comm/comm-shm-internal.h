/*
 * comm-shm-internal.h: the shared-memory group of ranks on one host,
 * shared by comm-shm-seg.c (the segment: made, opened, attached),
 * comm-shm-wait.c (the barrier: who arrived, who died), comm-shm.c (the collectives and the "shm" backend)
 * and comm-hier.c (the "auto" backend, which runs one such group per
 * host under a Gloo group of the hosts' leaders).
 *
 * The segment is a POSIX shared-memory object named
 * /hunter-PID-RANDOM, PID the creating rank's, mode 0600.  The lowest
 * member creates it and publishes the name under a store key; once
 * every member has it mapped the creator unlinks it, so from then on it
 * lives only as long as a member's mapping.  A creator killed before
 * that leaves the name behind: the agent that started it removes
 * /hunter-PID-* when it reaps PID (comm_shm_remove_left, comm.h).
 *
 * Each member holds an open-file-description lock on byte RANK of the
 * segment; the kernel drops it when the process dies, however it dies,
 * so a waiting member tells a dead peer from a slow one at once.
 *
 * Layout: a header (magic, sizes, the failure word, the doorbell), one
 * cache line per member (how many barriers it arrived at, its pid, what
 * collective it is in), then two halves of world + 1 slots each.  The
 * collectives move data in steps; step k uses half k % 2, writes, then
 * meets the others at a barrier before reading.  A member writes half
 * k % 2 again only at step k + 2, after the barrier of step k + 1, which
 * nobody passes before everybody finished reading step k: so no step
 * needs a barrier at its end.
 */
#ifndef HUNTER_COMM_SHM_INTERNAL_H
#define HUNTER_COMM_SHM_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/comm/comm.h"

#define SHM_MAX_WORLD	256
/* The bytes a member moves per step: the fewer steps, the fewer waits
 * for a peer that the scheduler has not run yet, which on a busy host
 * cost more than the cache misses of a large step.  Less when /dev/shm
 * has not the room (a container's is often 64 MiB). */
#define SHM_SLOT	(4u << 20)
#define SHM_SLOT_MIN	(64u << 10)
#define SHM_LINE	64		/* apart, so members never share one */
#define SHM_WHY		256

/* arrived: the number of the last barrier reached << SHM_TAG_BITS, or'd
 * with the tag of the collective it was in (a code and its size), in one
 * word so that a reader never pairs one barrier's number with
 * another's tag. */
#define SHM_TAG_BITS	24

struct shm_member {
	_Alignas(SHM_LINE) _Atomic uint64_t arrived;
	int32_t			pid;
	_Atomic int32_t		attached;
};

struct shm_head {
	_Atomic uint64_t	magic;		/* set last by the creator */
	uint32_t		world, slot;
	uint64_t		size;
	_Alignas(SHM_LINE) _Atomic uint32_t bell;	/* futex: a member moved */
	_Alignas(SHM_LINE) _Atomic uint32_t sleepers;	/* waiting on bell */
	_Alignas(SHM_LINE) _Atomic uint32_t nattached;
	_Atomic int32_t		failed;	/* 0, or 1 + the member that gave up */
	char			why[SHM_WHY];
	struct shm_member	member[];
};

struct shm_group {
	int			 rank, world, timeout_ms, fd;
	int			 spin, spin_max;	/* pauses before sleeping */
	size_t			 slot;		/* the header's, cached */
	int			*global;	/* each member's rank in the job */
	struct shm_head		*h;
	size_t			 size;
	uint8_t			*data;
	uint64_t		 seq;		/* barriers this member arrived at */
	uint64_t		 step;		/* steps taken: the half in use */
	char			 failed[SHM_WHY];	/* why it refuses work */
	char			 name[64];
};

/* Join the group of world members on this host as member rank: the
 * lowest creates the segment and publishes its name under key, the rest
 * read it there.  global names each member's rank in the job for
 * messages (NULL: the same).  NULL with the reason in err. */
struct shm_group *shm_join(int rank, int world, const int *global,
	    int timeout_ms, const struct comm_store *, const char *key,
	    char *err, size_t errlen);
void	shm_leave(struct shm_group *);
/* Wake the members sleeping on the doorbell. */
void	shm_ring(struct shm_head *);
/* Wait until every member reached barrier seq (0: attached), for at most
 * until deadline (CLOCK_MONOTONIC seconds); 0 or -1 with err. */
int	shm_wait(struct shm_group *, uint64_t seq, const char *what,
	    double deadline, char *err, size_t errlen);
/* Give up: every member's current or next wait fails with why. */
void	shm_fail(struct shm_group *, const char *why);

/* A step's slot q of the current half (q == world: the extra slot). */
static inline uint8_t *
shm_slot(const struct shm_group *g, int q)
{
	return g->data + ((g->step & 1) * (size_t)(g->world + 1) + (size_t)q) *
	    g->slot;
}

/* Arrive at the next barrier and wait for every member, for at most the
 * group's timeout.  tag names the collective and its size (shm_tag):
 * members that disagree are an error.  0, or -1 with err after what
 * (e.g. "allreduce of 1000 floats"). */
int	shm_meet(struct shm_group *, uint32_t tag, const char *what,
	    char *err, size_t errlen);
/* The tag of collective code (1..7) over size bytes and root. */
uint32_t shm_tag(int code, size_t size, int root);
/* The refusal of a group that failed before: -1 with err. */
int	shm_refuse(const struct shm_group *, const char *what, char *err,
	    size_t errlen);

/* The collectives (comm-shm.c), on members' ranks within the group. */
int	shm_allreduce(struct shm_group *, float *, size_t, char *, size_t);
int	shm_reduce_scatter(struct shm_group *, float *, size_t,
	    const size_t *, char *, size_t);
int	shm_allgatherv(struct shm_group *, const void *, void *,
	    const size_t *, char *, size_t);
int	shm_broadcast(struct shm_group *, void *, size_t, int, char *, size_t);
int	shm_barrier(struct shm_group *, char *, size_t);

#endif
