/*
 * matmul.c: the dense layers of the transformer (transformer.h): the
 * projections, stored [in, out] as GPT-2's checkpoints store them, and the
 * output head, which is the token embedding used transposed.  Every FLOP
 * here is a cblas_sgemm, cut into parts of whole rows or columns of its
 * result for the pool (matmul-internal.h); what else there is rides on
 * the parts while their block is in cache: the bias (copied in first, so
 * that the GEMM adds onto it), and the epilogues of the fused layers,
 * GELU after the MLP's first projection and the residual add after the
 * projections that end a branch.  Each gives the bits of the unfused
 * layers: the same operations on each element, in the same order.
 */
#include <stdatomic.h>
#include <string.h>

#include <cblas.h>

#include "lib/clock.h"
#include "kernels/cpu/transformer.h"
#include "kernels/cpu/matmul-internal.h"
#include "kernels/cpu/vmath-internal.h"

/* Columns of a part of a bias's gradient, at least: a page of a row. */
#define MM_BIAS_COLS	1024

/* The count behind transformer_gemm_seconds, in nanoseconds: the one
 * piece of state of the kernels, off unless a benchmark turns it on. */
static atomic_int	 kgemm_counting;
static atomic_llong	 kgemm_ns;

void
transformer_gemm_count(int on)
{
	atomic_store(&kgemm_counting, on);
	atomic_store(&kgemm_ns, 0);
}

double
transformer_gemm_seconds(void)
{
	return (double)atomic_exchange(&kgemm_ns, 0) * 1e-9;
}

void
kgemm(int ta, int tb, int M, int N, int K, float alpha, const float *A,
    int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	double	 t0 = 0;
	int	 count = atomic_load_explicit(&kgemm_counting,
		    memory_order_relaxed);

	if (M <= 0 || N <= 0)
		return;
	if (count)
		t0 = clock_mono();
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
	    tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb,
	    beta, C, ldc);
	if (count)
		atomic_fetch_add_explicit(&kgemm_ns,
		    (long long)((clock_mono() - t0) * 1e9),
		    memory_order_relaxed);
}

/*
 * The parts of a GEMM of M x N x K multiply-adds, cut along its longer
 * side of n: one part every KGEMM_WORK of them, two at least once it is
 * worth a thread's wake-up (KGEMM_WORK / 8), none under KGEMM_GRAIN rows
 * or columns; an even count, then a multiple of 4, so that two or four
 * threads share them evenly.  More parts than that cost OpenBLAS a
 * packing of the other operand each, which a thread does not win back.
 */
static int
kgemm_parts(int M, int N, int K, int n)
{
	double	 macs = (double)M * N * K, work = macs / KGEMM_WORK;
	int	 p = work > KPARTS_MAX ? KPARTS_MAX : (int)work;
	int	 q = kparts((size_t)n, KGEMM_GRAIN);

	if (p < 2 && macs >= KGEMM_WORK / 8)
		p = 2;
	p = p < q ? p : q;
	if (p >= 4)
		return p & ~3;
	return p >= 2 ? 2 : 1;
}

struct ktask
kgemm_plan(struct kgemm_job *g)
{
	g->rows = g->M >= g->N;
	g->parts = kgemm_parts(g->M, g->N, g->K, g->rows ? g->M : g->N);
	return (struct ktask){ g->M > 0 && g->N > 0 ? g->parts : 0, NULL, g };
}

void
kgemm_range(const struct kgemm_job *g, int i, int *r0, int *r1, int *c0,
    int *c1)
{
	*r0 = 0;
	*r1 = g->M;
	*c0 = 0;
	*c1 = g->N;
	if (g->rows) {
		*r0 = (int)kpart_at(g->M, g->parts, i);
		*r1 = (int)kpart_at(g->M, g->parts, i + 1);
	} else {
		*c0 = (int)kpart_at(g->N, g->parts, i);
		*c1 = (int)kpart_at(g->N, g->parts, i + 1);
	}
}

void
kgemm_block(const struct kgemm_job *g, int r0, int r1, int c0, int c1)
{
	/* Row r of op(A) and column c of op(B). */
	const float *a = g->ta ? g->A + r0 : g->A + (size_t)r0 * g->lda;
	const float *b = g->tb ? g->B + (size_t)c0 * g->ldb : g->B + c0;

	kgemm(g->ta, g->tb, r1 - r0, c1 - c0, g->K, g->alpha, a, g->lda, b,
	    g->ldb, g->beta, g->C + (size_t)r0 * g->ldc + c0, g->ldc);
}

static void
kgemm_part(void *arg, int part, int thread)
{
	const struct kgemm_job *g = arg;
	int	 r0, r1, c0, c1;

	(void)thread;
	kgemm_range(g, part, &r0, &r1, &c0, &c1);
	kgemm_block(g, r0, r1, c0, c1);
}

/* A whole GEMM as a task of its own. */
static struct ktask
kgemm_task(struct kgemm_job *g)
{
	struct ktask t = kgemm_plan(g);

	t.fn = kgemm_part;
	return t;
}

enum mm_epilogue { MM_PLAIN, MM_GELU, MM_RESIDUAL };

struct mm_fwd {
	struct kgemm_job g;		/* into y, or pre before GELU */
	float		*y;
	const float	*b, *res;
	enum mm_epilogue epi;
};

/* One block of a projection: the bias, the GEMM onto it, the epilogue. */
VMATH_CLONES static void
mm_fwd_part(void *arg, int part, int thread)
{
	const struct mm_fwd *f = arg;
	int	 r0, r1, c0, c1, OC = f->g.ldc;
	size_t	 w;

	(void)thread;
	kgemm_range(&f->g, part, &r0, &r1, &c0, &c1);
	w = (size_t)(c1 - c0);
	if (f->b != NULL)
		for (int r = r0; r < r1; r++)
			memcpy(f->g.C + (size_t)r * OC + c0, f->b + c0,
			    w * sizeof(float));
	kgemm_block(&f->g, r0, r1, c0, c1);
	for (int r = r0; r < r1; r++) {
		float	*y = f->y + (size_t)r * OC + c0;

		if (f->epi == MM_GELU)
			gelu_span(y, f->g.C + (size_t)r * OC + c0, w);
		else if (f->epi == MM_RESIDUAL)
			vadd_span(y, y, f->res + (size_t)r * OC + c0, w);
	}
}

static void
mm_forward(struct pool *pool, float *y, float *out, const float *x,
    const float *w, const float *b, const float *res, enum mm_epilogue epi,
    int N, int C, int OC)
{
	struct mm_fwd f = { .g = { .M = N, .N = OC, .K = C, .lda = C,
	    .ldb = OC, .ldc = OC, .alpha = 1.0f, .beta = b != NULL ? 1.0f :
	    0.0f, .A = x, .B = w, .C = out }, .y = y, .b = b, .res = res,
	    .epi = epi };
	struct ktask t = kgemm_plan(&f.g);

	pool_run(pool, t.parts, mm_fwd_part, &f);
}

void
matmul_forward(struct pool *pool, float *y, const float *x, const float *w,
    const float *b, int N, int C, int OC)
{
	mm_forward(pool, y, y, x, w, b, NULL, MM_PLAIN, N, C, OC);
}

void
matmul_gelu_forward(struct pool *pool, float *y, float *pre, const float *x,
    const float *w, const float *b, int N, int C, int OC)
{
	mm_forward(pool, y, pre, x, w, b, NULL, MM_GELU, N, C, OC);
}

void
matmul_residual_forward(struct pool *pool, float *y, const float *x,
    const float *w, const float *b, const float *res, int N, int C, int OC)
{
	mm_forward(pool, y, y, x, w, b, res, MM_RESIDUAL, N, C, OC);
}

struct mm_bias {
	float		*db, *pre;
	const float	*dy;
	int		 N, OC, parts;
};

/* db over a strip of columns of a part, rows in order, as the serial
 * loop adds them.  The strips are wide (MM_BIAS_COLS): a narrow one would
 * read a little of every row's page, which the prefetchers do not
 * follow. */
VMATH_CLONES static void
mm_bias_part(void *arg, int part, int thread)
{
	const struct mm_bias *m = arg;
	size_t	 c0, c1;

	(void)thread;
	kpart_cols((size_t)m->OC, m->parts, part, &c0, &c1);
	for (int n = 0; n < m->N; n++)
		vadd_span(m->db + c0, m->db + c0,
		    m->dy + (size_t)n * m->OC + c0, c1 - c0);
}

/* The gradient through GELU over rows of a part, written over pre. */
VMATH_CLONES static void
mm_dgelu_part(void *arg, int part, int thread)
{
	const struct mm_bias *m = arg;
	size_t	 OC = (size_t)m->OC;
	size_t	 r0 = kpart_at((size_t)m->N, m->parts, part);
	size_t	 r1 = kpart_at((size_t)m->N, m->parts, part + 1);

	(void)thread;
	gelu_grad_span(m->pre + r0 * OC, m->pre + r0 * OC, m->dy + r0 * OC,
	    (r1 - r0) * OC);
}

void
matmul_backward(struct pool *pool, float *dx, int add, float *dw, float *db,
    const float *dy, const float *x, const float *w, int N, int C, int OC)
{
	/* dx += dy w^T (or =); dw += x^T dy; db += the column sums of dy. */
	struct kgemm_job gx = { .tb = 1, .M = N, .N = C, .K = OC, .lda = OC,
	    .ldb = OC, .ldc = C, .alpha = 1.0f, .beta = add ? 1.0f : 0.0f,
	    .A = dy, .B = w, .C = dx };
	struct kgemm_job gw = { .ta = 1, .M = C, .N = OC, .K = N, .lda = C,
	    .ldb = OC, .ldc = OC, .alpha = 1.0f, .beta = 1.0f, .A = x, .B = dy,
	    .C = dw };
	struct mm_bias	 mb = { .db = db, .dy = dy, .N = N, .OC = OC,
	    .parts = kparts_cols((size_t)N, (size_t)OC, MM_BIAS_COLS) };
	struct ktask	 t[3];

	/* The bias's few parts first, so that they run beside the GEMMs'
	 * instead of after them. */
	t[0] = (struct ktask){ db != NULL ? mb.parts : 0, mm_bias_part, &mb };
	t[1] = kgemm_task(&gx);
	if (dx == NULL)
		t[1].parts = 0;
	t[2] = kgemm_task(&gw);
	kparts_run(pool, t, 3);
}

void
matmul_gelu_backward(struct pool *pool, float *dx, int add, float *dw,
    float *db, const float *dy, float *pre, const float *x, const float *w,
    int N, int C, int OC)
{
	struct mm_bias	 mg = { .pre = pre, .dy = dy, .N = N, .OC = OC,
	    .parts = kparts((size_t)N * OC, KPARTS_GRAIN) };

	pool_run(pool, mg.parts, mm_dgelu_part, &mg);
	matmul_backward(pool, dx, add, dw, db, pre, x, w, N, C, OC);
}

void
head_forward(struct pool *pool, float *logits, const float *x,
    const float *wte, int N, int C, int V)
{
	struct kgemm_job g = { .tb = 1, .M = N, .N = V, .K = C, .lda = C,
	    .ldb = C, .ldc = V, .alpha = 1.0f, .A = x, .B = wte, .C = logits };
	struct ktask	 t = kgemm_task(&g);

	kparts_run(pool, &t, 1);
}

void
head_backward(struct pool *pool, float *dx, int add, float *dwte,
    const float *dlogits, const float *x, const float *wte, int N, int C,
    int V)
{
	/* dx += dlogits wte (or =); dwte += dlogits^T x. */
	struct kgemm_job gx = { .M = N, .N = C, .K = V, .lda = V, .ldb = C,
	    .ldc = C, .alpha = 1.0f, .beta = add ? 1.0f : 0.0f, .A = dlogits,
	    .B = wte, .C = dx };
	struct kgemm_job gw = { .ta = 1, .M = V, .N = C, .K = N, .lda = V,
	    .ldb = C, .ldc = C, .alpha = 1.0f, .beta = 1.0f, .A = dlogits,
	    .B = x, .C = dwte };
	struct ktask	 t[2] = { kgemm_task(&gx), kgemm_task(&gw) };

	kparts_run(pool, t, 2);
}
