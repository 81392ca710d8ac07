/*
 * compressor-internal.h: what the compressor files share and nobody else
 * sees: the state of struct compressor, the descriptor each method is
 * (one file each: compressor-none.c, -fp16.c, -topk.c, -threshold.c, and
 * one line in compressor.c's table), and the helpers of the wire and of
 * the sparse pipeline (compressor-sparse.c) that topk and threshold run.
 */
#ifndef HUNTER_COMPRESSOR_INTERNAL_H
#define HUNTER_COMPRESSOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/rng.h"
#include "backend/worker/compressor.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the wire format is little-endian and is copied as such"
#endif

#define COMP_SPAN	16		/* fixed trip counts vectorise at -O2 */
#define COMP_HEADER	2		/* method byte and scale exponent */
#define COMP_DENSE	0x80		/* in the method byte: all n in fp16 */

/* A method; the public part comes first. */
struct comp_method {
	struct compressor_type	 type;
	/* Allocate what the method keeps between steps; may be NULL. */
	void	(*setup)(struct compressor *);
	size_t	(*bound)(const struct compressor *);
	size_t	(*encode)(struct compressor *, const float *, uint8_t *);
	int	(*decode)(const struct compressor *, const uint8_t *, size_t,
		    float *);
	/* Sparse methods: the indices of the about k largest |v| into idx,
	 * ascending; their number. */
	size_t	(*select)(struct compressor *, size_t k);
};

struct compressor {
	const struct comp_method *ops;
	size_t			 n;
	double			 target;	/* the density after warm-up */
	double			 warmup;	/* epochs */
	double			 warmup_steps;	/* or steps: the sooner */
	double			 warm_start;	/* the density it starts at */
	int			 warm_fp16;	/* all of v in fp16 may pay */
	uint64_t		 steps;		/* encodes so far */
	double			 density;	/* of the last encode */
	double			 epoch;		/* of the current encode */
	double			 clip_mean;	/* 0 until the first norm */
	int			 ef, mc;
	float			 momentum;
	size_t			 kmax;		/* the most one encode sends */
	/* The residual (or, without error feedback, the selection's input)
	 * and the momentum-correction velocity. */
	float			*v, *u;
	uint32_t		*idx;
	float			*scratch;
	struct rng		 rng;
};

/* The exponent e that puts max * 2^e just under 2^15. */
int	comp_exponent(float max);
/* The decode scale 2^-e of a header, or 0 when it is not this method's. */
float	comp_header(const struct compressor *, const uint8_t *, size_t len);

/* compressor-sparse.c: setup, bound, encode and decode of the sparse
 * methods, around their select. */
void	comp_sparse_setup(struct compressor *);
size_t	comp_sparse_bound(const struct compressor *);
size_t	comp_sparse_encode(struct compressor *, const float *, uint8_t *);
int	comp_sparse_decode(const struct compressor *, const uint8_t *, size_t,
	    float *);

#endif
