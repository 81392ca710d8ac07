/*
 * test-blas.c: the CPU's features, the kernel chosen for them, the check
 * against the reference GEMM, the peaks by key and the threads a rank
 * gets (lib/cpuid.h, lib/blas.h, lib/peak.h).
 *
 * cpuid is read against the kernel's own view, /proc/cpuinfo's flags; the
 * choice against CPUs made up of features; the check against kernels made
 * wrong on purpose: this file defines cblas_sgemm, which the program's
 * calls reach before OpenBLAS's, and passes through to OpenBLAS's (dlsym
 * RTLD_NEXT) unless a test breaks it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "lib/blas.h"
#include "lib/cpuid.h"
#include "lib/peak.h"
#include "lib/statedir.h"

enum { KERNEL_RIGHT, KERNEL_OFF, KERNEL_NAN, KERNEL_NO_BETA };
static int kernel_mode;

typedef void sgemm_fn(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE,
    const enum CBLAS_TRANSPOSE, const blasint, const blasint, const blasint,
    const float, const float *, const blasint, const float *, const blasint,
    const float, float *, const blasint);

void
cblas_sgemm(const enum CBLAS_ORDER o, const enum CBLAS_TRANSPOSE ta,
    const enum CBLAS_TRANSPOSE tb, const blasint m, const blasint n,
    const blasint k, const float alpha, const float *a, const blasint lda,
    const float *b, const blasint ldb, const float beta, float *c,
    const blasint ldc)
{
	static sgemm_fn	*real;

	if (real == NULL)
		real = (sgemm_fn *)dlsym(RTLD_NEXT, "cblas_sgemm");
	real(o, ta, tb, m, n, k, alpha, a, lda, b, ldb,
	    kernel_mode == KERNEL_NO_BETA ? 0.0f : beta, c, ldc);
	if (kernel_mode == KERNEL_OFF)		/* one element, 1e-3 off */
		c[(size_t)(m / 2) * ldc + n / 3] *= 1.001f;
	else if (kernel_mode == KERNEL_NAN)
		c[0] = NAN;
}

/* The feature bits against /proc/cpuinfo's flags, both ways. */
static void
t_cpuid(void **state)
{
	struct cpu_info	 c;
	char		 line[8192], name[64];
	FILE		*f = fopen("/proc/cpuinfo", "r");
	bool		 found = false;

	(void)state;
	cpu_read(&c);
	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL && !found) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		found = true;
		for (int i = 0; i < CPU_NFEATURES; i++) {
			bool has;

			snprintf(name, sizeof name, " %s", cpu_feature_name(i));
			has = (strstr(line, name) != NULL && strchr(" \n",
			    strstr(line, name)[strlen(name)]) != NULL);
			printf("  %-12s cpuid %d, /proc/cpuinfo %d\n",
			    cpu_feature_name(i), !!(c.features & CPU_BIT(i)), has);
			assert_int_equal(!!(c.features & CPU_BIT(i)), has);
		}
	}
	fclose(f);
	assert_true(found);
	printf("  %s: %s %d/%d\n", c.vendor, c.brand, c.family, c.model);
	assert_true(c.brand[0] != ' ' && c.vendor[0] != '\0');
}

/* The most specific core type a CPU can run; a tier for each name. */
static void
t_choice(void **state)
{
	struct cpu_info	 c = { .vendor = "GenuineIntel" };
	const char	*names[16];

	(void)state;
	assert_null(blas_best(&c));
	c.features = CPU_BIT(CPU_SSE3);
	assert_string_equal(blas_best(&c), "Prescott");
	c.features |= CPU_BIT(CPU_AVX) | CPU_BIT(CPU_AVX2);
	assert_string_equal(blas_best(&c), "Sandybridge");	/* no FMA */
	c.features |= CPU_BIT(CPU_FMA);
	assert_string_equal(blas_best(&c), "Haswell");
	snprintf(c.vendor, sizeof c.vendor, "AuthenticAMD");
	assert_string_equal(blas_best(&c), "Zen");
	snprintf(c.vendor, sizeof c.vendor, "GenuineIntel");
	c.features |= CPU_AVX512 & ~CPU_BIT(CPU_AVX512VL);
	assert_string_equal(blas_best(&c), "Haswell");		/* not all */
	c.features |= CPU_AVX512;
	assert_string_equal(blas_best(&c), "SkylakeX");
	c.features |= CPU_BIT(CPU_AVX512_BF16);
	assert_string_equal(blas_best(&c), "Cooperlake");
	c.features |= CPU_BIT(CPU_AVX512_FP16) | CPU_BIT(CPU_AMX_TILE) |
	    CPU_BIT(CPU_AMX_BF16);
	assert_string_equal(blas_best(&c), "SapphireRapids");
	assert_int_equal(blas_candidates(&c, names, 16), 6);
	assert_string_equal(names[5], "Prescott");
	assert_int_equal(blas_tier("Prescott"), 1);
	assert_int_equal(blas_tier("Sandybridge"), 2);
	assert_int_equal(blas_tier("Zen"), 3);
	assert_int_equal(blas_tier("skylakex"), 4);
	assert_int_equal(blas_tier("ARMV8"), 0);
}

/* When a process starts again, and with what: the operator's value is
 * never touched; the library's is replaced only by a better class;
 * hunter's own (inherited) only where it is not this CPU's choice. */
static void
t_decide(void **state)
{
	struct cpu_info	 spr = { .vendor = "GenuineIntel", .features =
	    CPU_AVX512 | CPU_BIT(CPU_AVX512_BF16) | CPU_BIT(CPU_AVX512_FP16) |
	    CPU_BIT(CPU_AMX_TILE) | CPU_BIT(CPU_AMX_BF16) | CPU_BIT(CPU_SSE3) };
	struct cpu_info	 zen = { .vendor = "AuthenticAMD", .features =
	    CPU_BIT(CPU_SSE3) | CPU_BIT(CPU_AVX) | CPU_BIT(CPU_AVX2) |
	    CPU_BIT(CPU_FMA) };
	struct cpu_info	 none = { .vendor = "" };
	const char	*want;

	(void)state;
	/* The library under-detects: Prescott on an AVX-512 CPU. */
	assert_true(blas_decide(NULL, NULL, "Prescott", &spr, &want));
	assert_string_equal(want, "SapphireRapids");
	/* The same class: left alone. */
	assert_false(blas_decide(NULL, NULL, "SkylakeX", &spr, &want));
	assert_false(blas_decide(NULL, NULL, "Zen", &zen, &want));
	/* A name hunter does not know: left alone. */
	assert_false(blas_decide(NULL, NULL, "Nextlake", &spr, &want));
	/* The operator's, even a slow one, even with a stale mark. */
	assert_false(blas_decide("Prescott", NULL, "Prescott", &spr, &want));
	assert_false(blas_decide("Prescott", "SkylakeX", "Prescott", &spr,
	    &want));
	/* Hunter's own: kept on this CPU, redone on another. */
	assert_false(blas_decide("SapphireRapids", "SapphireRapids",
	    "Cooperlake", &spr, &want));
	assert_true(blas_decide("SapphireRapids", "SapphireRapids",
	    "SapphireRapids", &zen, &want));
	assert_string_equal(want, "Zen");
	assert_true(blas_decide("Zen", "Zen", "Zen", &none, &want));
	assert_null(want);
	assert_false(blas_decide(NULL, NULL, "Prescott", &none, &want));
}

/* What this process runs, and who chose it. */
static void
t_info(void **state)
{
	struct blas_info bi;

	(void)state;
	unsetenv("OPENBLAS_CORETYPE");
	unsetenv("HUNTER_BLAS_CORETYPE");
	blas_info(&bi);
	printf("  %s, %s, %s; best %s; %s; %d threads\n", bi.library,
	    bi.kernel, blas_by_words(bi.by), bi.best, bi.cpu, bi.threads);
	assert_int_equal(strncmp(bi.library, "OpenBLAS ", 9), 0);
	assert_null(strchr(bi.library + 9, ' '));
	assert_string_equal(bi.kernel, openblas_get_corename());
	assert_int_equal(bi.by, BLAS_BY_LIBRARY);
	assert_int_equal(bi.threads, openblas_get_num_threads());
	setenv("OPENBLAS_CORETYPE", "Haswell", 1);
	blas_info(&bi);
	assert_int_equal(bi.by, BLAS_BY_OPERATOR);
	setenv("HUNTER_BLAS_CORETYPE", "Haswell", 1);
	blas_info(&bi);
	assert_int_equal(bi.by, BLAS_BY_HUNTER);
	unsetenv("OPENBLAS_CORETYPE");
	unsetenv("HUNTER_BLAS_CORETYPE");
}

/* The running kernel passes; one element off by 1e-3, a NaN, or a beta
 * left out fails. */
static void
t_check(void **state)
{
	double	 e;

	(void)state;
	kernel_mode = KERNEL_RIGHT;
	e = blas_check();
	printf("  %s: %.2e\n", openblas_get_corename(), e);
	assert_true(e <= BLAS_CHECK_TOLERANCE && e > 0);
	openblas_set_num_threads(2);
	assert_true(blas_check() <= BLAS_CHECK_TOLERANCE);
	openblas_set_num_threads(1);
	kernel_mode = KERNEL_OFF;
	assert_true(blas_check() > 1e-4);
	kernel_mode = KERNEL_NAN;
	assert_true(blas_check() > 1);
	kernel_mode = KERNEL_NO_BETA;
	assert_true(blas_check() > 1e-2);
	kernel_mode = KERNEL_RIGHT;
	assert_true(blas_gflops(128, 0.01, true) > 0);
}

/* A peak is found under its own key only; writing one keeps the others;
 * a file of the old format (one bare number) gives nothing. */
static void
t_peak(void **state)
{
	char	 dir[] = "/tmp/hunter-test-peak.XXXXXX", path[256], cmd[300];
	struct peak_key k = { "Xeon 6/167", "OpenBLAS 0.3.21", "SkylakeX", 1 };
	struct peak_key p = { "Xeon 6/167", "OpenBLAS 0.3.21", "Prescott", 1 };
	struct peak_key two = { "Xeon 6/167", "OpenBLAS 0.3.21", "SkylakeX", 2 };
	struct peak_key tab = { "Xeon\t6/167\n", "OpenBLAS 0.3.21", "SkylakeX",
	    1 };
	double	 g = 0;
	FILE	*f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(peak_read(dir, &k, &g), -1);
	snprintf(path, sizeof path, "%s/bench", dir);
	assert_int_equal(mkdir_p(path, 0700), 0);
	snprintf(path, sizeof path, "%s/bench/sgemm-peak", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "28.000\n");		/* the old format */
	fclose(f);
	assert_int_equal(peak_read(dir, &k, &g), -1);
	assert_int_equal(peak_write(dir, &p, 28.5), 0);
	assert_int_equal(peak_read(dir, &k, &g), -1);
	assert_int_equal(peak_write(dir, &k, 131.25), 0);
	assert_int_equal(peak_write(dir, &two, 250), 0);
	assert_int_equal(peak_read(dir, &k, &g), 0);
	assert_true(g == 131.25);
	assert_int_equal(peak_read(dir, &p, &g), 0);
	assert_true(g == 28.5);
	assert_int_equal(peak_read(dir, &two, &g), 0);
	assert_true(g == 250);
	assert_int_equal(peak_write(dir, &k, 140), 0);	/* replaced */
	assert_int_equal(peak_read(dir, &k, &g), 0);
	assert_true(g == 140);
	assert_int_equal(peak_read(dir, &tab, &g), -1);	/* not "Xeon 6/167" */
	assert_int_equal(peak_write(dir, &tab, 99), 0);
	assert_int_equal(peak_read(dir, &tab, &g), 0);
	assert_true(g == 99);
	assert_int_equal(peak_read(dir, &k, &g), 0);
	assert_true(g == 140);
	snprintf(cmd, sizeof cmd, "cat %s; rm -rf %s", path, dir);
	assert_int_equal(system(cmd), 0);
}

/* A rank's share of the cores; what its environment asks for. */
static void
t_threads(void **state)
{
	(void)state;
	assert_int_equal(blas_rank_threads(2, 1), 2);
	assert_int_equal(blas_rank_threads(2, 2), 1);
	assert_int_equal(blas_rank_threads(2, 8), 1);
	assert_int_equal(blas_rank_threads(32, 4), 8);
	assert_int_equal(blas_rank_threads(32, 5), 6);
	assert_int_equal(blas_rank_threads(2, 0), 1);
	unsetenv("OPENBLAS_NUM_THREADS");
	assert_int_equal(blas_env_threads(), 1);
	setenv("OPENBLAS_NUM_THREADS", "3", 1);
	assert_int_equal(blas_env_threads(), 3);
	setenv("OPENBLAS_NUM_THREADS", "3x", 1);
	assert_int_equal(blas_env_threads(), 1);
	setenv("OPENBLAS_NUM_THREADS", "0", 1);
	assert_int_equal(blas_env_threads(), 1);
	unsetenv("OPENBLAS_NUM_THREADS");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_cpuid),
		cmocka_unit_test(t_choice),
		cmocka_unit_test(t_decide),
		cmocka_unit_test(t_info),
		cmocka_unit_test(t_check),
		cmocka_unit_test(t_peak),
		cmocka_unit_test(t_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
