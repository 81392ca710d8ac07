/*
 * compressor.h: gradient compression (DGC-style) as a table of const
 * descriptors, one file each: none, fp16, topk, threshold (compressor.c
 * has the table).  The numeric kernels live in
 * kernels/cpu/compress.h; this is the glue a rank keeps between steps:
 * the residual (error feedback), the momentum-correction velocity, the
 * warm-up of the density, and the wire format.
 *
 * One step on one rank:
 *   len = compressor_encode(c, grad, epoch_progress, out, cap);
 *   ... allgatherv(out, len) across ranks ...
 *   compressor_decode(c, all, lens, world, grad);   // grad := mean update
 *
 * Every rank decodes the same bytes in rank order, so every rank gets a
 * bit-identical result.
 */
#ifndef HUNTER_COMPRESSOR_H
#define HUNTER_COMPRESSOR_H

#include <stddef.h>
#include <stdint.h>

#include "backend/spec/spec.h"

struct compressor;

/* A method's descriptor; its name is the spec's (spec_compress_name). */
struct compressor_type {
	enum spec_compress	 method;
	/* Sends some of the values (a density, error feedback, momentum
	 * correction), not all of them. */
	int			 sparse;
};

/* n: gradient length.  The job gives method, density, error_feedback,
 * momentum_correction (with train.optimizer.momentum), warmup_epochs,
 * warmup_steps (counted in encodes, kept in the state) and
 * warmup_density. */
struct compressor *compressor_create(const struct job_spec *, size_t n,
	    uint64_t seed);
void	compressor_free(struct compressor *);
const struct compressor_type *compressor_type(const struct compressor *);

/* Upper bound of encode's output for this n. */
size_t	compressor_max_bytes(const struct compressor *);

/*
 * Encode this rank's gradient (already scaled so that the SUM over ranks
 * is the mean gradient).  epoch is the fractional epoch (for the
 * warm-up).  Returns the bytes written to out.
 */
size_t	compressor_encode(struct compressor *, const float *grad,
	    double epoch, uint8_t *out, size_t cap);

/* Sum every rank's part into grad (n floats, overwritten) in rank order.
 * Returns 0, or -1 on a malformed buffer. */
int	compressor_decode(struct compressor *, const uint8_t *all,
	    const size_t *lens, int world, float *grad);
/* The same with rank r's part at parts[r], wherever each lies. */
int	compressor_decode_parts(struct compressor *,
	    const uint8_t *const *parts, const size_t *lens, int world,
	    float *grad);

/* Whether the optimizer must skip its own momentum (momentum correction
 * already folded it into what was sent). */
int	compressor_owns_momentum(const struct compressor *);

/* The density used by the last encode (after warm-up). */
double	compressor_density(const struct compressor *);

/* Error-feedback state, n floats each, NULL when unused: the residual v
 * and the momentum-correction velocity u. */
const float *compressor_residual(const struct compressor *);
const float *compressor_velocity(const struct compressor *);

/*
 * Everything a checkpoint must keep for a bit-identical resume (v, u, the
 * clipping mean and the sampling RNG) as one blob of state_bytes.  Load
 * returns -1 when the blob is not this compressor's (size, n, flags).
 */
size_t	compressor_state_bytes(const struct compressor *);
void	compressor_state_save(const struct compressor *, uint8_t *out);
int	compressor_state_load(struct compressor *, const uint8_t *in,
	    size_t len);
/* Add another rank's saved state (of the same settings) into c's: its
 * residual and velocity, summed.  0, or -1 when it does not fit. */
int	compressor_state_fold(struct compressor *, const uint8_t *in,
	    size_t len);

#endif
