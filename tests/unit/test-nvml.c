/*
 * test-nvml.c: lib/nvml.c against a fake libnvidia-ml (built
 * beside this test as libfake-nvml.so) and against none, and
 * cuda-probe.c's answers.  Runs everywhere, with or without a GPU: the
 * real NVML is never loaded ($HUNTER_NVML_LIBRARY points elsewhere).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cuda-probe.h"
#include "lib/nvml.h"
#include "backend/proto/metrics.h"

static char	fake_path[PATH_MAX];

static void
use_library(const char *path)
{
	nvml_close();
	setenv("HUNTER_NVML_LIBRARY", path, 1);
}

static void
t_absent(void **state)
{
	struct gpu_sample	gs[4];
	char			v[64];
	json_t			*j;

	use_library("/nonexistent/libnvidia-ml.so.1");
	assert_null(nvml_absent_reason());
	assert_int_equal(nvml_sample(gs, 4), 0);
	assert_non_null(nvml_absent_reason());
	print_message("    absent: %s\n", nvml_absent_reason());
	assert_non_null(strstr(nvml_absent_reason(), "libnvidia-ml.so.1"));
	assert_int_equal(nvml_sample(gs, 4), 0);	/* remembered */
	assert_int_equal(nvml_driver_version(v, sizeof v), -1);
	j = gpu_samples_json(gs, 0);
	assert_true(json_is_array(j) && json_array_size(j) == 0);
	json_decref(j);
}

static void
t_init_fails(void **state)
{
	struct gpu_sample	gs[4];

	use_library(fake_path);
	setenv("FAKE_NVML_INIT_FAIL", "1", 1);
	assert_int_equal(nvml_sample(gs, 4), 0);
	unsetenv("FAKE_NVML_INIT_FAIL");
	print_message("    %s\n", nvml_absent_reason());
	assert_non_null(strstr(nvml_absent_reason(),
	    "nvmlInit_v2: Driver Not Loaded"));
}

static void
t_fake(void **state)
{
	struct gpu_sample	gs[4];
	char			v[64], *text;
	json_t			*j, *o;

	use_library(fake_path);
	assert_int_equal(nvml_sample(gs, 4), 2);
	assert_null(nvml_absent_reason());
	assert_string_equal(gs[0].name, "Fake GPU 0");
	assert_int_equal(gs[1].index, 1);
	assert_true(gs[0].v[GM_UTIL] == 93);
	assert_true(gs[0].v[GM_MEM_USED] == (double)(80ull << 30));
	assert_true(gs[0].v[GM_MEM_TOTAL] == (double)(150ull << 30));
	assert_true(gs[0].v[GM_TEMP] == 61);
	assert_true(gs[0].v[GM_POWER] == 612.345);	/* mW to W */
	assert_true(gs[0].v[GM_SM_CLOCK] == 1980);
	assert_true(gs[0].v[GM_PCIE_RX] == 2000 * 1024.0);	/* KB/s */
	assert_true(gs[0].v[GM_PCIE_TX] == 1000 * 1024.0);
	for (int m = 0; m < GM_COUNT; m++)
		assert_int_equal(gpu_sample_valid(&gs[0], m), m != GM_XID);
	assert_false(gpu_sample_valid(&gs[1], GM_TEMP));
	assert_false(gpu_sample_valid(&gs[1], GM_POWER));
	assert_false(gpu_sample_valid(&gs[1], GM_PCIE_RX));
	assert_true(gpu_sample_valid(&gs[1], GM_UTIL));
	assert_true(gs[1].v[GM_UTIL] == 0);	/* known zero, not unknown */

	j = gpu_samples_json(gs, 2);
	text = json_dumps(j, JSON_COMPACT);
	print_message("    %s\n", text);
	free(text);
	o = json_array_get(j, 1);
	assert_true(json_is_null(json_object_get(o, "temp")));
	assert_true(json_is_null(json_object_get(o, "power")));
	assert_true(json_is_null(json_object_get(o, "xid")));
	assert_true(json_real_value(json_object_get(o, "util")) == 0);
	assert_true(json_real_value(json_object_get(json_array_get(j, 0),
	    "power")) == 612.345);
	assert_string_equal(json_string_value(json_object_get(json_array_get(j,
	    0), "name")), "Fake GPU 0");
	json_decref(j);

	assert_int_equal(nvml_sample(gs, 1), 1);
	assert_int_equal(nvml_driver_version(v, sizeof v), 0);
	assert_string_equal(v, "555.42.06");
	assert_string_equal(cuda_driver_version(), "555.42.06");
	for (int m = 0; m < GM_COUNT; m++)
		assert_non_null(gpu_metric_name(m));
	assert_null(gpu_metric_name(GM_COUNT));
	nvml_close();
}

static void
t_probe(void **state)
{
	char	err[256] = "";
	int	n = cuda_device_check(err, sizeof err);

	print_message("    built %d, devices %d %s; runtime %s, nccl %s\n",
	    cuda_built(), n, err, cuda_runtime_version(), cuda_nccl_version());
#ifdef HAVE_CUDA
	assert_true(cuda_built());
	assert_true(n > 0 || strncmp(err, "no CUDA device: cudaGetDeviceCount",
	    34) == 0);
	assert_true(strchr(cuda_runtime_version(), '.') != NULL);
	assert_true(strchr(cuda_nccl_version(), '.') != NULL);
#else
	assert_false(cuda_built());
	assert_int_equal(n, -1);
	assert_string_equal(err, "no CUDA device: hunter was built without "
	    "CUDA");
	assert_string_equal(cuda_runtime_version(), "none");
	assert_string_equal(cuda_nccl_version(), "none");
#endif
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_absent),
		cmocka_unit_test(t_init_fails),
		cmocka_unit_test(t_fake),
		cmocka_unit_test(t_probe),
	};
	char			exe[PATH_MAX];
	ssize_t			len;

	/* The fake is built next to this program. */
	if ((len = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0)
		return 99;
	exe[len] = '\0';
	snprintf(fake_path, sizeof fake_path, "%s/libfake-nvml.so",
	    dirname(exe));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
