/*
 * blas.c: the kernel OpenBLAS runs, corrected where its detection falls
 * short (blas.h), and what runs now.  The check against a reference and
 * the GFLOP/s are blas-check.c's.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cblas.h>

#include "lib/blas.h"
#include "lib/xmalloc.h"

/* The variable hunter sets beside OPENBLAS_CORETYPE: its value is the
 * core type hunter chose, so a child tells its choice from an operator's. */
#define BLAS_MARK	"HUNTER_BLAS_CORETYPE"
/* Set across the one re-exec, so it happens once. */
#define BLAS_AGAIN	"HUNTER_BLAS_REEXEC"

/* Core types to choose from, the most specific first: the first whose
 * instructions the CPU has wins. */
static const struct blas_core {
	const char	*name;
	const char	*vendor;	/* NULL: any */
	uint32_t	 needs;
} blas_cores[] = {
	{ "SapphireRapids", NULL, CPU_AVX512 | CPU_BIT(CPU_AVX512_BF16) |
	    CPU_BIT(CPU_AVX512_FP16) | CPU_BIT(CPU_AMX_TILE) |
	    CPU_BIT(CPU_AMX_BF16) },
	{ "Cooperlake", NULL, CPU_AVX512 | CPU_BIT(CPU_AVX512_BF16) },
	{ "SkylakeX", NULL, CPU_AVX512 },
	{ "Zen", "AuthenticAMD", CPU_BIT(CPU_AVX2) | CPU_BIT(CPU_FMA) },
	{ "Haswell", NULL, CPU_BIT(CPU_AVX2) | CPU_BIT(CPU_FMA) },
	{ "Sandybridge", NULL, CPU_BIT(CPU_AVX) },
	{ "Nehalem", NULL, CPU_BIT(CPU_SSE42) | CPU_BIT(CPU_SSSE3) },
	{ "Prescott", NULL, CPU_BIT(CPU_SSE3) },
};

/* Every x86-64 core type OpenBLAS 0.3 names, by the class of its
 * kernels: 1 SSE, 2 AVX, 3 AVX2 and FMA, 4 AVX-512. */
static const struct blas_tier {
	const char	*name;
	int		 tier;
} blas_tiers[] = {
	{ "Katmai", 1 }, { "Coppermine", 1 }, { "Northwood", 1 },
	{ "Prescott", 1 }, { "Banias", 1 }, { "Atom", 1 }, { "Core2", 1 },
	{ "Penryn", 1 }, { "Dunnington", 1 }, { "Nehalem", 1 },
	{ "Athlon", 1 }, { "Opteron", 1 }, { "Opteron_SSE3", 1 },
	{ "Barcelona", 1 }, { "Nano", 1 }, { "Bobcat", 1 },
	{ "Sandybridge", 2 }, { "Bulldozer", 2 }, { "Piledriver", 2 },
	{ "Steamroller", 2 },
	{ "Haswell", 3 }, { "Excavator", 3 }, { "Zen", 3 },
	{ "SkylakeX", 4 }, { "Cooperlake", 4 }, { "SapphireRapids", 4 },
};

int
blas_candidates(const struct cpu_info *c, const char **names, int max)
{
	int	 n = 0;

	for (size_t i = 0; i < sizeof blas_cores / sizeof blas_cores[0] &&
	    n < max; i++) {
		const struct blas_core *k = &blas_cores[i];

		if ((c->features & k->needs) == k->needs && (k->vendor ==
		    NULL || strcmp(k->vendor, c->vendor) == 0))
			names[n++] = k->name;
	}
	return n;
}

const char *
blas_best(const struct cpu_info *c)
{
	const char	*name;

	return blas_candidates(c, &name, 1) == 1 ? name : NULL;
}

int
blas_tier(const char *core)
{
	for (size_t i = 0; i < sizeof blas_tiers / sizeof blas_tiers[0]; i++) {
		if (strcasecmp(blas_tiers[i].name, core) == 0)
			return blas_tiers[i].tier;
	}
	return 0;
}

/* Start this program again with OPENBLAS_CORETYPE as want (unset for
 * NULL), marked as hunter's.  If that fails (no /proc), the environment
 * is put back: it describes the kernel that stays loaded. */
static void
blas_exec(char **argv, const char *want)
{
	char	*set = getenv("OPENBLAS_CORETYPE");
	char	*mark = getenv(BLAS_MARK), path[PATH_MAX];
	ssize_t	 n;

	set = set != NULL ? xstrdup(set) : NULL;
	mark = mark != NULL ? xstrdup(mark) : NULL;
	if (want != NULL) {
		setenv("OPENBLAS_CORETYPE", want, 1);
		setenv(BLAS_MARK, want, 1);
	} else {
		unsetenv("OPENBLAS_CORETYPE");
		unsetenv(BLAS_MARK);
	}
	setenv(BLAS_AGAIN, "1", 1);
	/* By its path, so the process keeps its name ("hunter", not "exe");
	 * /proc/self/exe still works when the file was replaced. */
	if ((n = readlink("/proc/self/exe", path, sizeof path - 1)) > 0) {
		path[n] = '\0';
		execv(path, argv);
	}
	execv("/proc/self/exe", argv);
	unsetenv(BLAS_AGAIN);
	if (set != NULL)
		setenv("OPENBLAS_CORETYPE", set, 1);
	else
		unsetenv("OPENBLAS_CORETYPE");
	if (mark != NULL)
		setenv(BLAS_MARK, mark, 1);
	else
		unsetenv(BLAS_MARK);
	free(set);
	free(mark);
}

bool
blas_decide(const char *set, const char *mark, const char *loaded,
    const struct cpu_info *c, const char **want)
{
	int	 have = blas_tier(loaded);

	*want = blas_best(c);
	if (set != NULL && (mark == NULL || strcmp(set, mark) != 0))
		return false;			/* the operator's */
	if (set == NULL)
		/* Only a better class than the library's; a name it has
		 * that hunter does not know is left alone. */
		return *want != NULL && have > 0 && blas_tier(*want) > have;
	/* Inherited from a hunter process, maybe on another CPU (srun
	 * passes the environment on): kept only if it is this CPU's. */
	return *want == NULL || strcmp(*want, set) != 0;
}

void
blas_reexec(char **argv)
{
	const char	*want;
	struct cpu_info	 c;

	if (getenv(BLAS_AGAIN) != NULL) {
		unsetenv(BLAS_AGAIN);
		return;
	}
	cpu_read(&c);
	if (blas_decide(getenv("OPENBLAS_CORETYPE"), getenv(BLAS_MARK),
	    openblas_get_corename(), &c, &want))
		blas_exec(argv, want);
}

void
blas_info(struct blas_info *bi)
{
	const char	*set = getenv("OPENBLAS_CORETYPE");
	const char	*mark = getenv(BLAS_MARK), *best;
	struct cpu_info	 c;
	int		 n = 0;

	memset(bi, 0, sizeof *bi);
	/* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": its first words. */
	snprintf(bi->library, sizeof bi->library, "%s", openblas_get_config());
	for (char *s = bi->library; *s != '\0'; s++) {
		if (*s == ' ' && ++n == 2) {
			*s = '\0';
			break;
		}
	}
	snprintf(bi->kernel, sizeof bi->kernel, "%s", openblas_get_corename());
	cpu_read(&c);
	if ((best = blas_best(&c)) != NULL)
		snprintf(bi->best, sizeof bi->best, "%s", best);
	cpu_model_name(&c, bi->cpu, sizeof bi->cpu);
	bi->by = set == NULL ? BLAS_BY_LIBRARY : mark != NULL &&
	    strcmp(set, mark) == 0 ? BLAS_BY_HUNTER : BLAS_BY_OPERATOR;
	bi->threads = openblas_get_num_threads();
}

const char *
blas_by_words(enum blas_by by)
{
	switch (by) {
	case BLAS_BY_HUNTER:
		return "hunter's choice, from cpuid";
	case BLAS_BY_OPERATOR:
		return "OPENBLAS_CORETYPE";
	default:
		return "the library's choice";
	}
}

int
blas_env_threads(void)
{
	const char	*v = getenv("OPENBLAS_NUM_THREADS");
	char		*end;
	long		 n;

	if (v == NULL)
		return 1;
	n = strtol(v, &end, 10);
	return *end == '\0' && n >= 1 && n <= 4096 ? (int)n : 1;
}

int
blas_rank_threads(int ncores, int slots)
{
	int	 t = slots > 0 ? ncores / slots : 1;

	return t >= 1 ? t : 1;
}
