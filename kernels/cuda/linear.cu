/*
 * linear.cu: the fully connected layer on the GPU, y = x w^T + b, with
 * cuBLAS SGEMM for the products (full FP32: the handle keeps
 * CUBLAS_DEFAULT_MATH, so no TF32 unless NVIDIA_TF32_OVERRIDE says so).
 *
 * cuBLAS is column-major.  A row-major [r, c] matrix is the column-major
 * [c, r] matrix of the same memory, its transpose, so each row-major
 * product C = A B is computed as C^T = B^T A^T with the operands swapped:
 *   y[B,out]  = x w^T   ->  y^T  = w^T' x'     gemm(T, N, out, B, in)
 *   dx[B,in]  = dy w    ->  dx^T = w' dy'      gemm(N, N, in, B, out)
 *   dw[out,in] += dy^T x -> dw^T += x' dy'^T   gemm(N, T, in, out, B)
 * where a primed name is the column-major view of the row-major array.
 *
 * The bias gradient is one thread per column adding the rows in order,
 * the CPU's order, so db is the same bits as linear_backward's.
 */
#include <dlfcn.h>
#include <stdio.h>

#include <mutex>

#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

/*
 * cuBLAS is loaded on first use, not linked: its libraries (cuBLAS and
 * cuBLASLt, some 600 MB) would otherwise be mapped into every hunter
 * process -- the console, the agents, CPU ranks -- when only a cuda rank
 * multiplies on the GPU.  The entry points are the _v2 names that
 * cublas_v2.h maps the plain ones to.
 */
static struct {
	void		*lib;
	char		 why[256];	/* why it is not loaded */
	cublasStatus_t	(*Create)(cublasHandle_t *);
	cublasStatus_t	(*Destroy)(cublasHandle_t);
	cublasStatus_t	(*SetStream)(cublasHandle_t, cudaStream_t);
	cublasStatus_t	(*SetMathMode)(cublasHandle_t, cublasMath_t);
	cublasStatus_t	(*Sgemm)(cublasHandle_t, cublasOperation_t,
			    cublasOperation_t, int, int, int, const float *,
			    const float *, int, const float *, int,
			    const float *, float *, int);
	cublasStatus_t	(*SgemmStridedBatched)(cublasHandle_t,
			    cublasOperation_t, cublasOperation_t, int, int,
			    int, const float *, const float *, int, long long,
			    const float *, int, long long, const float *,
			    float *, int, long long, int);
	const char	*(*GetStatusString)(cublasStatus_t);
} cublas;
static std::once_flag	cublas_once;

/* Look name up in the library into *fn; false (and why) if it is not there. */
template <typename F> static bool
cublas_sym(F *fn, const char *name)
{
	*fn = reinterpret_cast<F>(dlsym(cublas.lib, name));
	if (*fn == nullptr)
		snprintf(cublas.why, sizeof cublas.why, "%s is not in "
		    "libcublas.so.%d", name, CUBLAS_VER_MAJOR);
	return *fn != nullptr;
}

static void
cublas_load(void)
{
	char	 name[32];

	snprintf(name, sizeof name, "libcublas.so.%d", CUBLAS_VER_MAJOR);
	if ((cublas.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) == nullptr) {
		snprintf(cublas.why, sizeof cublas.why, "dlopen: %s", dlerror());
		return;
	}
	if (!cublas_sym(&cublas.Create, "cublasCreate_v2") ||
	    !cublas_sym(&cublas.Destroy, "cublasDestroy_v2") ||
	    !cublas_sym(&cublas.SetStream, "cublasSetStream_v2") ||
	    !cublas_sym(&cublas.SetMathMode, "cublasSetMathMode") ||
	    !cublas_sym(&cublas.Sgemm, "cublasSgemm_v2") ||
	    !cublas_sym(&cublas.SgemmStridedBatched,
	    "cublasSgemmStridedBatched") ||
	    !cublas_sym(&cublas.GetStatusString, "cublasGetStatusString")) {
		dlclose(cublas.lib);
		cublas.lib = nullptr;
	}
}

/* A cuBLAS call, checked as CUDA_CHECK checks the runtime's. */
#define CUBLAS_CHECK(call) do {						\
	cublasStatus_t cublas_check_s_ = (call);			\
	if (cublas_check_s_ != CUBLAS_STATUS_SUCCESS)			\
		return cuda_fail(__FILE__, __LINE__, #call,		\
		    cublas.GetStatusString(cublas_check_s_));		\
} while (0)

static thread_local cublasHandle_t	linear_blas;
static thread_local cudaStream_t	linear_stream;

/* Make this thread's handle if there is none; a failed allocation in
 * cuBLAS sets *oom. */
static int
linear_create(int *oom)
{
	cublasStatus_t	st;

	std::call_once(cublas_once, cublas_load);
	if (cublas.lib == nullptr)
		return cuda_fail(__FILE__, __LINE__, "loading cublas",
		    cublas.why);
	if (linear_blas != nullptr)
		return 0;
	if ((st = cublas.Create(&linear_blas)) != CUBLAS_STATUS_SUCCESS) {
		linear_blas = nullptr;
		*oom = st == CUBLAS_STATUS_ALLOC_FAILED;
		return cuda_fail(__FILE__, __LINE__, "cublas.Create",
		    cublas.GetStatusString(st));
	}
	linear_stream = nullptr;
	CUBLAS_CHECK(cublas.SetMathMode(linear_blas, CUBLAS_DEFAULT_MATH));
	return 0;
}

/* This thread's handle, made on first use, on stream s. */
static int
linear_handle(cublasHandle_t *h, cudaStream_t s)
{
	int	 oom = 0;

	if (linear_create(&oom) != 0)
		return -1;
	CUBLAS_CHECK(cublas.SetStream(linear_blas, s));
	linear_stream = s;
	*h = linear_blas;
	return 0;
}

int
cuda_blas_init(int *oom)
{
	*oom = 0;
	return linear_create(oom);
}

void
cuda_blas_detach(cudaStream_t s)
{
	if (linear_blas != nullptr && linear_stream == s && s != nullptr &&
	    cublas.SetStream(linear_blas, nullptr) == CUBLAS_STATUS_SUCCESS)
		linear_stream = nullptr;
}

void
cuda_blas_release(void)
{
	if (linear_blas != nullptr) {
		cublas.Destroy(linear_blas);
		linear_blas = nullptr;
	}
}

/* Copy b into every row of y[B,out]. */
static __global__ void
linear_bias_rows(float *y, const float *b, int B, int out)
{
	size_t	total = (size_t)B * out;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	    i < total; i += (size_t)gridDim.x * blockDim.x)
		y[i] = b[i % out];
}

/* db[j] += dy[0][j] + dy[1][j] + ..., rows in order. */
static __global__ void
linear_bias_grad(float *db, const float *dy, int B, int out)
{
	int	j = blockIdx.x * blockDim.x + threadIdx.x;
	float	acc;

	if (j >= out)
		return;
	acc = db[j];
	for (int i = 0; i < B; i++)
		acc = __fadd_rn(acc, dy[(size_t)i * out + j]);
	db[j] = acc;
}

int
cuda_linear_forward(float *y, const float *x, const float *w, const float *b,
    int B, int in, int out, cudaStream_t s)
{
	cublasHandle_t	h;
	float		one = 1.0f, beta = 0.0f;

	if (B <= 0 || in <= 0 || out <= 0)
		return 0;
	if (linear_handle(&h, s) != 0)
		return -1;
	if (b != nullptr) {
		linear_bias_rows<<<grid_for((size_t)B * out, EW_TPB), EW_TPB, 0,
		    s>>>(y, b, B, out);
		CUDA_LAUNCHED();
		beta = 1.0f;
	}
	CUBLAS_CHECK(cublas.Sgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, out, B, in, &one,
	    w, in, x, in, &beta, y, out));
	return 0;
}

int
cuda_linear_backward(float *dx, float *dw, float *db, const float *dy,
    const float *x, const float *w, int B, int in, int out, cudaStream_t s)
{
	cublasHandle_t	h;
	float		one = 1.0f, zero = 0.0f;

	if (B <= 0 || in <= 0 || out <= 0)
		return 0;
	if (linear_handle(&h, s) != 0)
		return -1;
	if (dx != nullptr)
		CUBLAS_CHECK(cublas.Sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, in, B,
		    out, &one, w, in, dy, out, &zero, dx, in));
	if (dw != nullptr)
		CUBLAS_CHECK(cublas.Sgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, in, out,
		    B, &one, x, in, dy, out, &one, dw, in));
	if (db != nullptr) {
		linear_bias_grad<<<(out + EW_TPB - 1) / EW_TPB, EW_TPB, 0,
		    s>>>(db, dy, B, out);
		CUDA_LAUNCHED();
	}
	return 0;
}

/*
 * The row-major products the transformer's kernels share (cuda-internal.cuh):
 * C[M,N] = alpha op(A) op(B) + beta C is, column-major, C' = op(B)' op(A)'
 * with the same transposition flags, as the table at the top shows for
 * linear.
 */
int
hk::gemm(cudaStream_t s, bool ta, bool tb, int M, int N, int K, float alpha,
    const float *A, int lda, const float *B, int ldb, float beta, float *C,
    int ldc)
{
	cublasHandle_t	h;

	if (M <= 0 || N <= 0)
		return 0;
	if (linear_handle(&h, s) != 0)
		return -1;
	CUBLAS_CHECK(cublas.Sgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
	    ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda,
	    &beta, C, ldc));
	return 0;
}

int
hk::gemm_strided(cudaStream_t s, bool ta, bool tb, int M, int N, int K,
    float alpha, const float *A, int lda, long long sa, const float *B,
    int ldb, long long sb, float beta, float *C, int ldc, long long sc,
    int batch)
{
	cublasHandle_t	h;

	if (M <= 0 || N <= 0 || batch <= 0)
		return 0;
	if (linear_handle(&h, s) != 0)
		return -1;
	CUBLAS_CHECK(cublas.SgemmStridedBatched(h, tb ? CUBLAS_OP_T :
	    CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B,
	    ldb, sb, A, lda, sa, &beta, C, ldc, sc, batch));
	return 0;
}

int
hk::bias_rows(float *y, const float *b, int rows, int cols, cudaStream_t s)
{
	if (rows <= 0 || cols <= 0)
		return 0;
	linear_bias_rows<<<grid_for((size_t)rows * cols, EW_TPB), EW_TPB, 0,
	    s>>>(y, b, rows, cols);
	CUDA_LAUNCHED();
	return 0;
}

int
hk::bias_grad(float *db, const float *dy, int rows, int cols, cudaStream_t s)
{
	if (rows <= 0 || cols <= 0)
		return 0;
	linear_bias_grad<<<(cols + EW_TPB - 1) / EW_TPB, EW_TPB, 0, s>>>(db,
	    dy, rows, cols);
	CUDA_LAUNCHED();
	return 0;
}
