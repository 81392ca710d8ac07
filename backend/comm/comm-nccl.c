/*
 * comm-nccl.c: the nccl backend of comm.h (comm_backend_nccl, in comm.c's
 * table), built only when configure found CUDA and NCCL.  Its buffers are
 * DEVICE pointers on cf->device; each call returns once the collective
 * has finished on the GPU.
 *
 * Rendezvous: rank 0 makes the unique id and sets it under
 * "g<generation>/nccl-id" in the caller's store; the others get it, so
 * each formation of a group has its own id.  A group of one makes its
 * id locally and needs no store.
 *
 * Nothing may hang on a dead peer.  The communicator is non-blocking
 * (config.blocking = 0): init and every collective are enqueued, then
 * polled, ncclCommGetAsyncError for the communicator and cudaStreamQuery
 * for the stream, until they finish, fail or pass the group's timeout.
 * A failure or a timeout aborts the communicator (ncclCommAbort, which
 * also stops its kernels) and the group refuses all further work, as the
 * gloo backend does: the caller destroys it and forms a new generation.
 *
 * allgatherv is one ncclBroadcast per rank with data, each from that
 * rank's slice of out, inside one ncclGroupStart/End (NCCL has no
 * allgatherv; the group runs them as one launch).  barrier is an
 * allreduce of one int.  bind_addr is not used: NCCL picks its own
 * interfaces (NCCL_SOCKET_IFNAME).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "lib/clock.h"
#include "lib/errf.h"
#include "backend/comm/comm-backend.h"

#define NCCL_SPIN_MS	1	/* poll without sleeping for this long */
#define NCCL_NAP_NS	50000	/* then sleep this long between polls */

struct comm_nccl {
	ncclComm_t	 comm;
	cudaStream_t	 stream;
	int		*one;		/* device int for the barrier */
	int		 rank, world, generation, device;
	int		 timeout_ms;
	char		 failed[512];	/* why the group is dead, or "" */
};

/* The source path from its backend/ on, as messages name files. */
static const char *
nccl_where(const char *file)
{
	const char	*p = strstr(file, "backend/");

	return p != NULL ? p : file;
}

/*
 * The check macros record file and line (llm.c's ncclCheck, cudaCheck)
 * but return -1 with the message in err rather than exit.  In progress
 * is not a failure for a non-blocking communicator.
 */
#define NCCL_CHECK(n, call, err, errlen) \
	nccl_check((n), (call), #call, __FILE__, __LINE__, (err), (errlen))
#define NCCL_CUDA_CHECK(call, err, errlen) \
	nccl_cuda_check((call), #call, __FILE__, __LINE__, (err), (errlen))

static int
nccl_check(struct comm_nccl *n, ncclResult_t r, const char *what,
    const char *file, int line, char *err, size_t errlen)
{
	const char	*last;

	if (r == ncclSuccess || r == ncclInProgress)
		return 0;
	last = n != NULL && n->comm != NULL ? ncclGetLastError(n->comm) :
	    ncclGetLastError(NULL);
	errf(err, errlen, "%s:%d: %s: %s%s%s%s", nccl_where(file), line,
	    what, ncclGetErrorString(r), last != NULL && *last != '\0' ?
	    " (" : "", last != NULL ? last : "", last != NULL && *last != '\0' ?
	    ")" : "");
	return -1;
}

static int
nccl_cuda_check(cudaError_t e, const char *what, const char *file, int line,
    char *err, size_t errlen)
{
	if (e == cudaSuccess)
		return 0;
	(void)cudaGetLastError();	/* clear it, it is reported here */
	errf(err, errlen, "%s:%d: %s: %s", nccl_where(file), line, what,
	    cudaGetErrorString(e));
	return -1;
}

static void
nccl_nap(double started)
{
	struct timespec	ts = { 0, NCCL_NAP_NS };

	if (1e3 * clock_mono() - started >= NCCL_SPIN_MS)
		nanosleep(&ts, NULL);
}

/* Give up on the group: abort the communicator (its kernels stop) and
 * keep why, so later calls refuse.  Returns -1. */
static int
nccl_abandon(struct comm_nccl *n, const char *why, char *err, size_t errlen)
{
	snprintf(n->failed, sizeof n->failed, "%s", why);
	if (n->comm != NULL) {
		ncclCommAbort(n->comm);
		n->comm = NULL;
	}
	errf(err, errlen, "%s", why);
	return -1;
}

/*
 * Wait until the communicator has no operation in progress and, when
 * stream is set, its stream is idle; what names the work for messages.
 * An asynchronous NCCL error, a CUDA error or the timeout abandons the
 * group.
 */
static int
nccl_wait(struct comm_nccl *n, int stream, const char *what, char *err,
    size_t errlen)
{
	double		t0 = 1e3 * clock_mono();
	char		msg[512];
	ncclResult_t	st;
	cudaError_t	ce;

	for (;;) {
		if (NCCL_CHECK(n, ncclCommGetAsyncError(n->comm, &st), msg,
		    sizeof msg) != 0)
			return nccl_abandon(n, msg, err, errlen);
		if (st != ncclSuccess && st != ncclInProgress) {
			nccl_check(n, st, what, __FILE__, __LINE__, msg,
			    sizeof msg);
			return nccl_abandon(n, msg, err, errlen);
		}
		if (st == ncclSuccess) {
			if (!stream)
				return 0;
			ce = cudaStreamQuery(n->stream);
			if (ce == cudaSuccess)
				return 0;
			if (ce != cudaErrorNotReady) {
				nccl_cuda_check(ce, what, __FILE__, __LINE__,
				    msg, sizeof msg);
				return nccl_abandon(n, msg, err, errlen);
			}
		}
		if (1e3 * clock_mono() - t0 > n->timeout_ms) {
			snprintf(msg, sizeof msg, "%s: rank %d of %d "
			    "(generation %d): no progress in %d ms; the group "
			    "is aborted", what, n->rank, n->world,
			    n->generation, n->timeout_ms);
			return nccl_abandon(n, msg, err, errlen);
		}
		nccl_nap(t0);
	}
}

/* Refuse work on a dead group, and point the thread at the device. */
static int
nccl_ready(struct comm_nccl *n, const char *what, char *err, size_t errlen)
{
	if (n->failed[0] != '\0') {
		errf(err, errlen, "%s: group failed earlier (%s)", what,
		    n->failed);
		return -1;
	}
	return NCCL_CUDA_CHECK(cudaSetDevice(n->device), err, errlen);
}

/* The unique id of this generation: made by rank 0, read by the rest. */
static int
nccl_unique_id(const struct comm_config *cf, const struct comm_store *cs,
    ncclUniqueId *id, char *err, size_t errlen)
{
	char	 key[64];
	void	*val = NULL;
	size_t	 len = 0;

	snprintf(key, sizeof key, "g%d/nccl-id", cf->generation);
	if (cf->rank == 0) {
		if (NCCL_CHECK(NULL, ncclGetUniqueId(id), err, errlen) != 0)
			return -1;
		if (cf->world > 1 && cs->set(cs->ctx, key, id, sizeof *id) !=
		    0) {
			errf(err, errlen, "store: set of '%s' failed", key);
			return -1;
		}
		return 0;
	}
	if (cs->get(cs->ctx, key, &val, &len, cf->timeout_ms) != 0) {
		errf(err, errlen, "store: key '%s' not set within %d ms",
		    key, cf->timeout_ms);
		return -1;
	}
	if (len != sizeof *id) {
		errf(err, errlen, "store: '%s' holds %zu bytes, not the "
		    "%zu of an NCCL unique id", key, len, sizeof *id);
		free(val);
		return -1;
	}
	memcpy(id, val, sizeof *id);
	free(val);
	return 0;
}

static void nccl_destroy(void *);

static void *
nccl_init(const struct comm_config *cf, const struct comm_store *cs,
    char *err, size_t errlen)
{
	struct comm_nccl	*n;
	ncclConfig_t		 config = NCCL_CONFIG_INITIALIZER;
	ncclUniqueId		 id;
	char			 msg[512];

	if ((n = calloc(1, sizeof *n)) == NULL) {
		errf(err, errlen, "comm: out of memory");
		return NULL;
	}
	n->rank = cf->rank;
	n->world = cf->world;
	n->generation = cf->generation;
	n->device = cf->device;
	n->timeout_ms = cf->timeout_ms;
	config.blocking = 0;
	if (NCCL_CUDA_CHECK(cudaSetDevice(n->device), msg, sizeof msg) != 0 ||
	    NCCL_CUDA_CHECK(cudaStreamCreateWithFlags(&n->stream,
	    cudaStreamNonBlocking), msg, sizeof msg) != 0 ||
	    NCCL_CUDA_CHECK(cudaMalloc((void **)&n->one, sizeof *n->one), msg,
	    sizeof msg) != 0 ||
	    NCCL_CUDA_CHECK(cudaMemset(n->one, 0, sizeof *n->one), msg,
	    sizeof msg) != 0 ||
	    nccl_unique_id(cf, cs, &id, msg, sizeof msg) != 0 ||
	    NCCL_CHECK(n, ncclCommInitRankConfig(&n->comm, n->world, id,
	    n->rank, &config), msg, sizeof msg) != 0 ||
	    nccl_wait(n, 0, "ncclCommInitRankConfig", msg, sizeof msg) != 0) {
		errf(err, errlen, "nccl rendezvous of rank %d of %d "
		    "(generation %d, device %d): %s", cf->rank, cf->world,
		    cf->generation, cf->device, msg);
		nccl_destroy(n);
		return NULL;
	}
	return n;
}

/* Enqueue done, now wait for it; name is the call for messages. */
static int
nccl_finish(struct comm_nccl *n, const char *what, char *err, size_t errlen)
{
	return nccl_wait(n, 1, what, err, errlen);
}

static int
nccl_allreduce_f32(void *p, float *buf, size_t cnt, char *err, size_t errlen)
{
	struct comm_nccl	*n = p;
	char			 what[96], msg[512];

	snprintf(what, sizeof what, "allreduce of %zu floats", cnt);
	if (nccl_ready(n, what, err, errlen) != 0)
		return -1;
	if (cnt == 0)
		return 0;
	if (NCCL_CHECK(n, ncclAllReduce(buf, buf, cnt, ncclFloat, ncclSum,
	    n->comm, n->stream), msg, sizeof msg) != 0)
		return nccl_abandon(n, msg, err, errlen);
	return nccl_finish(n, what, err, errlen);
}

static int
nccl_allgatherv(void *p, const void *in, void *out, const size_t *lens,
    char *err, size_t errlen)
{
	struct comm_nccl	*n = p;
	uint8_t			*o = out;
	size_t			 total = 0, off = 0;
	char			 what[96], msg[512];
	int			 bad = 0;

	for (int i = 0; i < n->world; i++)
		total += lens[i];
	snprintf(what, sizeof what, "allgatherv of %zu bytes", total);
	if (nccl_ready(n, what, err, errlen) != 0)
		return -1;
	if (total == 0)
		return 0;
	if (NCCL_CHECK(n, ncclGroupStart(), msg, sizeof msg) != 0)
		return nccl_abandon(n, msg, err, errlen);
	for (int r = 0; r < n->world && !bad; r++) {
		if (lens[r] != 0)
			bad = NCCL_CHECK(n, ncclBroadcast(r == n->rank ? in :
			    o + off, o + off, lens[r], ncclUint8, r, n->comm,
			    n->stream), msg, sizeof msg);
		off += lens[r];
	}
	if (NCCL_CHECK(n, ncclGroupEnd(), bad ? NULL : msg, sizeof msg) != 0)
		bad = 1;
	if (bad)
		return nccl_abandon(n, msg, err, errlen);
	return nccl_finish(n, what, err, errlen);
}

static int
nccl_broadcast(void *p, void *buf, size_t len, int root, char *err,
    size_t errlen)
{
	struct comm_nccl	*n = p;
	char			 what[96], msg[512];

	snprintf(what, sizeof what, "broadcast of %zu bytes from rank %d",
	    len, root);
	if (nccl_ready(n, what, err, errlen) != 0)
		return -1;
	if (len == 0)
		return 0;
	if (NCCL_CHECK(n, ncclBroadcast(buf, buf, len, ncclUint8, root,
	    n->comm, n->stream), msg, sizeof msg) != 0)
		return nccl_abandon(n, msg, err, errlen);
	return nccl_finish(n, what, err, errlen);
}

static int
nccl_barrier(void *p, char *err, size_t errlen)
{
	struct comm_nccl	*n = p;
	char			 msg[512];

	if (nccl_ready(n, "barrier", err, errlen) != 0)
		return -1;
	if (NCCL_CHECK(n, ncclAllReduce(n->one, n->one, 1, ncclInt32,
	    ncclSum, n->comm, n->stream), msg, sizeof msg) != 0)
		return nccl_abandon(n, msg, err, errlen);
	return nccl_finish(n, "barrier", err, errlen);
}

/*
 * A healthy communicator is finalized (its last operations flushed,
 * within the timeout) and destroyed; a failed or stuck one is aborted.
 */
static void
nccl_destroy(void *p)
{
	struct comm_nccl	*n = p;
	char			 msg[512];

	if (n == NULL)
		return;
	(void)cudaSetDevice(n->device);
	if (n->comm != NULL) {
		if (NCCL_CHECK(n, ncclCommFinalize(n->comm), msg,
		    sizeof msg) == 0 && nccl_wait(n, 0, "ncclCommFinalize",
		    msg, sizeof msg) == 0)
			ncclCommDestroy(n->comm);
		else if (n->comm != NULL)
			ncclCommAbort(n->comm);
	}
	if (n->one != NULL)
		(void)cudaFree(n->one);
	if (n->stream != NULL)
		(void)cudaStreamDestroy(n->stream);
	(void)cudaGetLastError();
	free(n);
}

const struct comm_backend comm_backend_nccl = {
	.name = "nccl",
	.memory = "device",
	.init = nccl_init,
	.allreduce_f32 = nccl_allreduce_f32,
	.allgatherv = nccl_allgatherv,
	.broadcast = nccl_broadcast,
	.barrier = nccl_barrier,
	.destroy = nccl_destroy,
};
