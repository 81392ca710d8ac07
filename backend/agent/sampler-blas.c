/*
 * sampler-blas.c: what BLAS a node's ranks run, for its panel.  One small
 * function: OpenBLAS's version and the core (kernel) it chose in the
 * agent's process, which loaded it under the same environment the ranks
 * inherit, and OPENBLAS_CORETYPE when that environment sets it (OpenBLAS
 * reads it once, at load).  What a rank itself measures of its BLAS is
 * the worker's to report.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/agent/sampler.h"

json_t *
sampler_blas(void)
{
	const char	*config = openblas_get_config();
	const char	*core = openblas_get_corename();
	const char	*type = getenv("OPENBLAS_CORETYPE");
	char		 lib[64] = "OpenBLAS", version[41];
	json_t		*o;

	/* "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64":
	 * its first two words. */
	if (config != NULL && sscanf(config, "%*s %40s", version) == 1)
		snprintf(lib, sizeof lib, "OpenBLAS %s", version);
	o = json_pack("{s:s, s:s}", "library", lib, "kernel", core != NULL &&
	    *core != '\0' ? core : "unknown");
	if (type != NULL && *type != '\0')
		json_object_set_new(o, "coretype", json_string(type));
	return o;
}
