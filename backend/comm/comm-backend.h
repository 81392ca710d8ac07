/*
 * comm-backend.h: what a collective backend provides behind comm.h.  Each
 * backend file exports one const struct comm_backend (comm-gloo.cc:
 * comm_backend_gloo; comm-nccl.c: comm_backend_nccl, built only with
 * CUDA), and comm.c keeps the table that comm_init picks from by name.
 * comm.c checks what every backend needs (rank in the world, a positive
 * timeout) before calling init, and owns struct comm; a backend sees
 * only its own state.
 */
#ifndef HUNTER_COMM_BACKEND_H
#define HUNTER_COMM_BACKEND_H

#include "backend/comm/comm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct comm_backend {
	const char	*name;
	/* The buffers collectives take: "host" or "device" (CUDA). */
	const char	*memory;
	/* Form the group; the backend's state, or NULL with err set. */
	void	*(*init)(const struct comm_config *, const struct comm_store *,
		    char *err, size_t errlen);
	int	 (*allreduce_f32)(void *, float *buf, size_t n, char *err,
		    size_t errlen);
	int	 (*allgatherv)(void *, const void *in, void *out,
		    const size_t *lens, char *err, size_t errlen);
	int	 (*broadcast)(void *, void *buf, size_t len, int root,
		    char *err, size_t errlen);
	int	 (*barrier)(void *, char *err, size_t errlen);
	void	 (*destroy)(void *);
	/* May be NULL: comm.c then allreduces the whole buffer. */
	int	 (*reduce_scatter_f32)(void *, float *buf, size_t n,
		    const size_t *counts, char *err, size_t errlen);
	/* Transfers in the background (comm.h); NULL, or has_xfer false,
	 * where the backend has none. */
	int	 (*has_xfer)(void *);
	void	*(*xfer_start)(void *, void *buf, size_t len, int peer,
		    int send, uint32_t tag, char *err, size_t errlen);
	int	 (*xfer_wait)(void *, void *xfer, char *err, size_t errlen);
};

extern const struct comm_backend comm_backend_gloo;
extern const struct comm_backend comm_backend_shm;
extern const struct comm_backend comm_backend_auto;
#ifdef HAVE_CUDA
extern const struct comm_backend comm_backend_nccl;
#endif

#ifdef __cplusplus
}
#endif

#endif
