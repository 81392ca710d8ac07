/*
 * optim.c: in-place parameter updates, SGD with momentum and AdamW.
 *
 * Both follow PyTorch's definitions (torch.optim.SGD with dampening 0 and
 * no Nesterov; torch.optim.AdamW), so a run can be compared step for step
 * with a PyTorch one.  The per-step scalars (bias corrections) are worked
 * out once in double; the per-element work is float.
 *
 * The loops run over the whole model every step, so they must vectorise at
 * the project's -O2.  GCC's -O2 cost model only vectorises loops whose trip
 * count is a known multiple of the vector width, hence the fixed-size
 * spans, and C's sqrtf must be able to set errno, which keeps it scalar
 * unless SSE's sqrtps is called directly.
 */

#include <math.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/parts-internal.h"

#define OPTIM_SPAN	16

/* Scalars of one AdamW step. */
struct optim_adamw {
	float	lr, beta1, beta2, c1, c2, r1, r2, eps, wd;
};

static inline void
optim_sgd_span(float *restrict p, const float *restrict g, size_t n,
    float lr, float wd)
{
	for (size_t i = 0; i < n; i++)
		p[i] -= lr * (g[i] + wd * p[i]);
}

static inline void
optim_sgd_momentum_span(float *restrict p, const float *restrict g,
    float *restrict m, size_t n, float lr, float mu, float wd)
{
	for (size_t i = 0; i < n; i++) {
		m[i] = mu * m[i] + (g[i] + wd * p[i]);
		p[i] -= lr * m[i];
	}
}

void
sgd_step(float *restrict p, const float *restrict g, float *restrict m,
    size_t n, float lr, float mu, float wd)
{
	size_t	i = 0;

	if (mu == 0.0f) {
		for (; i + OPTIM_SPAN <= n; i += OPTIM_SPAN)
			optim_sgd_span(p + i, g + i, OPTIM_SPAN, lr, wd);
		optim_sgd_span(p + i, g + i, n - i, lr, wd);
		return;
	}
	for (; i + OPTIM_SPAN <= n; i += OPTIM_SPAN) {
		optim_sgd_momentum_span(p + i, g + i, m + i, OPTIM_SPAN, lr,
		    mu, wd);
	}
	optim_sgd_momentum_span(p + i, g + i, m + i, n - i, lr, mu, wd);
}

/* d[i] = sqrt(d[i]) for a whole span; the d[i] are not negative. */
static inline void
optim_sqrt_span(float *d)
{
#if defined(__SSE__)
	for (int i = 0; i < OPTIM_SPAN; i += 4)
		_mm_storeu_ps(d + i, _mm_sqrt_ps(_mm_loadu_ps(d + i)));
#else
	for (int i = 0; i < OPTIM_SPAN; i++)
		d[i] = sqrtf(d[i]);
#endif
}

/* One span of AdamW: moments, then sqrt(vhat), then the update. */
static inline void
optim_adamw_span(float *restrict p, const float *restrict g,
    float *restrict m, float *restrict v, size_t n,
    const struct optim_adamw *a)
{
	float	d[OPTIM_SPAN] = { 0 };

	for (size_t i = 0; i < n; i++) {
		m[i] = a->beta1 * m[i] + a->c1 * g[i];
		v[i] = a->beta2 * v[i] + a->c2 * g[i] * g[i];
		d[i] = v[i] * a->r2;
	}
	optim_sqrt_span(d);
	for (size_t i = 0; i < n; i++)
		p[i] -= a->lr * (m[i] * a->r1 / (d[i] + a->eps) + a->wd * p[i]);
}

struct optim_adamw_job {
	struct optim_adamw a;
	float		*p, *m, *v;
	const float	*g;
	size_t		 n;
	int		 parts;
};

/* A part of whole spans (the last takes the rest). */
static void
optim_adamw_part(void *arg, int part, int thread)
{
	const struct optim_adamw_job *j = arg;
	size_t	 spans = j->n / OPTIM_SPAN;
	size_t	 i = kpart_at(spans, j->parts, part) * OPTIM_SPAN;
	size_t	 hi = kpart_at(spans, j->parts, part + 1) * OPTIM_SPAN;

	(void)thread;
	for (; i < hi; i += OPTIM_SPAN) {
		optim_adamw_span(j->p + i, j->g + i, j->m + i, j->v + i,
		    OPTIM_SPAN, &j->a);
	}
	if (part == j->parts - 1)
		optim_adamw_span(j->p + i, j->g + i, j->m + i, j->v + i,
		    j->n - i, &j->a);
}

void
adamw_step(struct pool *pool, float *p, const float *g, float *m, float *v,
    size_t n, float lr, float beta1, float beta2, float eps, float wd,
    long t)
{
	struct optim_adamw_job j = {
		.a = { .lr = lr, .beta1 = beta1, .beta2 = beta2, .eps = eps,
		    .wd = wd, .c1 = 1.0f - beta1, .c2 = 1.0f - beta2,
		    .r1 = (float)(1.0 / (1.0 - pow(beta1, (double)t))),
		    .r2 = (float)(1.0 / (1.0 - pow(beta2, (double)t))) },
		.p = p, .g = g, .m = m, .v = v, .n = n,
		.parts = kparts(n, 2 * KPARTS_GRAIN),
	};

	pool_run(pool, j.parts, optim_adamw_part, &j);
}
