/*
 * nvml-show.c: what the agent's GPU sampler (lib/nvml.c) and
 * cuda-probe see on this machine: each GPU's metrics with their validity
 * bits, as JSON, and the driver, runtime and NCCL versions.  Run by
 * tests/gpu/gpu-check.sh on a GPU machine.
 */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "lib/cuda-probe.h"
#include "lib/nvml.h"
#include "backend/proto/metrics.h"

int
main(void)
{
	struct gpu_sample gs[16];
	int		 n = nvml_sample(gs, 16);
	json_t		*j = gpu_samples_json(gs, n);
	char		*s = json_dumps(j, JSON_INDENT(1));
	const char	*why = nvml_absent_reason();

	printf("%d GPU(s)%s%s\n%s\n", n, n > 0 ? "" : ": ",
	    n > 0 ? "" : (why != NULL ? why : "none"), s != NULL ? s : "?");
	printf("driver %s, CUDA runtime %s, NCCL %s\n", cuda_driver_version(),
	    cuda_runtime_version(), cuda_nccl_version());
	free(s);
	json_decref(j);
	return 0;
}
