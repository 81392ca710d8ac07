/*
 * comm.h: collectives behind one C API, over Gloo (CPU; a thin C++ shim),
 * shared memory between ranks of one host (shm), both (auto: shm within
 * each host, Gloo between one leader per host) and, where built, NCCL
 * (GPU).  Every call has a timeout and returns an
 * error as a value: a dead or silent peer gives -1 with a message within
 * the timeout, never a hang and never an exception across the C boundary.
 *
 * Rendezvous goes through a key-value store that the caller supplies
 * (the backend's store, reached through the agent).  Keys are scoped by
 * the group's generation, so a re-formed group never sees stale keys.
 *
 * Buffers: gloo takes host memory; nccl (comm-nccl.c) takes DEVICE
 * memory on cf->device, and its calls return once the collective has
 * finished on the GPU.  The data must be ready when a call is made: a
 * caller that wrote it on a stream of its own synchronizes that stream
 * first.  comm_memory() says which a group wants.  The backends are a
 * table in comm.c (comm-backend.h).
 */
#ifndef HUNTER_COMM_H
#define HUNTER_COMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct comm_store {
	void	*ctx;
	/* Store value under key.  0 or -1. */
	int	(*set)(void *ctx, const char *key, const void *val, size_t len);
	/* Block until key exists (or timeout_ms passes); *val is malloc'd.
	 * 0, or -1 on timeout or error. */
	int	(*get)(void *ctx, const char *key, void **val, size_t *len,
		    int timeout_ms);
};

/* A store over the directory dir (which must outlive it), one file per
 * key: for ranks on one host with no backend, as hunter bench comm and
 * the tests run them (comm-dirstore.c). */
struct comm_store comm_dir_store(const char *dir);

struct comm_config {
	const char	*backend;	/* "auto", "shm", "gloo", or "nccl" */
	int		 rank, world;
	int		 generation;
	const char	*bind_addr;	/* this node's address, e.g. 127.0.0.1 */
	int		 timeout_ms;	/* for rendezvous and every collective */
	int		 device;	/* CUDA device for nccl */
};

struct comm;

/* Form the group (generation cf->generation) or give NULL with the reason
 * in err.  If SIGPIPE is at its default, it is ignored from then on: Gloo
 * writes with writev(2), and a dead peer must be an error, not a signal. */
struct comm *comm_init(const struct comm_config *, const struct comm_store *,
	    char *err, size_t errlen);
/* Sum n floats across ranks, in place. */
int	comm_allreduce_f32(struct comm *, float *buf, size_t n, char *err,
	    size_t errlen);
/* Sum n floats across ranks where rank r keeps counts[r] of them, its
 * part: the parts lie in rank order and cover buf (the counts add up to
 * n).  On return this rank's part of buf holds the sum, the same bits as
 * an allreduce would leave there; the rest of buf is unspecified.  A
 * backend without one of its own allreduces the whole buffer. */
int	comm_reduce_scatter_f32(struct comm *, float *buf, size_t n,
	    const size_t *counts, char *err, size_t errlen);
/* Gather each rank's bytes: in has lens[rank] bytes; out receives every
 * rank's in rank order (sum of lens bytes). */
int	comm_allgatherv(struct comm *, const void *in, void *out,
	    const size_t *lens, char *err, size_t errlen);
/* Copy root's buf (len bytes) to every rank. */
int	comm_broadcast(struct comm *, void *buf, size_t len, int root,
	    char *err, size_t errlen);
int	comm_barrier(struct comm *, char *err, size_t errlen);

/*
 * A transfer in the background: len bytes of buf to rank peer (send) or
 * from it into buf (receive), which the backend's transport moves while
 * the caller goes on; comm_xfer_wait blocks until it is done, and frees
 * it whatever it returns.  A send and its receive name the same tag and
 * length; buf must stay until the wait.  Collectives may run while one
 * is in flight (they keep their own tags).  Only where comm_has_xfer
 * says so: Gloo, and "auto" while no two ranks share a host (shared
 * memory has no need of them); elsewhere start fails with err set.  A
 * failed transfer fails the group, as a failed collective does.
 */
struct comm_xfer;

int	comm_has_xfer(const struct comm *);
struct comm_xfer *comm_xfer_start(struct comm *, void *buf, size_t len,
	    int peer, int send, uint32_t tag, char *err, size_t errlen);
int	comm_xfer_wait(struct comm *, struct comm_xfer *, char *err,
	    size_t errlen);
void	comm_destroy(struct comm *);

int	comm_rank(const struct comm *);
int	comm_world(const struct comm *);
/* The backend's name, as in the config. */
const char *comm_backend_name(const struct comm *);
/* Where the group's buffers live: "host" or "device". */
const char *comm_memory(const struct comm *);

/* Remove the shared-memory segments that process pid made and did not
 * remove (it was killed before every rank had opened one): for the agent
 * that reaps it.  How many it removed. */
int	comm_shm_remove_left(long pid);

#ifdef __cplusplus
}
#endif

#endif
