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
#include <math.h>
#include <time.h>
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
	assert_true(json_is_object(j) && json_object_size(j) == 0);
	assert_int_equal(gpu_samples_read(j, gs, 4), 0);
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
	json_t			*j;

	use_library(fake_path);
	unsetenv("FAKE_NVML_SCRIPT");
	assert_int_equal(nvml_sample(gs, 4), 2);
	assert_null(nvml_absent_reason());
	assert_string_equal(gs[0].name, "Fake GPU 0");
	assert_int_equal(gs[1].index, 1);
	/* Device 0: every field, each in our units. */
	assert_true(gs[0].v[GM_UTIL] == 93);
	assert_true(gs[0].v[GM_MEM_UTIL] == 40);
	assert_true(gs[0].v[GM_MEM_USED] == (double)(80ull << 30));
	assert_true(gs[0].v[GM_MEM_FREE] == (double)(70ull << 30));
	assert_true(gs[0].v[GM_MEM_TOTAL] == (double)(150ull << 30));
	assert_true(gs[0].v[GM_ENC_UTIL] == 3);
	assert_true(gs[0].v[GM_DEC_UTIL] == 1);
	assert_true(gs[0].v[GM_TEMP] == 61);
	assert_true(gs[0].v[GM_MEM_TEMP] == 70);
	assert_true(gs[0].v[GM_POWER] == 612.345);	/* mW to W */
	assert_true(gs[0].v[GM_SM_CLOCK] == 1980);
	assert_true(gs[0].v[GM_MEM_CLOCK] == 2619);
	assert_true(gs[0].v[GM_PCIE_RX] == 2000 * 1024.0);	/* KB/s */
	assert_true(gs[0].v[GM_PCIE_TX] == 1000 * 1024.0);
	assert_true(gs[0].v[GM_ENERGY] == 123456.789);	/* mJ to J */
	assert_true(gs[0].v[GM_PCIE_REPLAYS] == 2);
	assert_true(gs[0].v[GM_THROTTLE] == 4);		/* sw power cap */
	assert_true(gs[0].v[GM_ECC_CORR] == 5);
	assert_true(gs[0].v[GM_ECC_UNCORR] == 0);
	assert_true(gs[0].v[GM_REMAP_CORR] == 1);
	assert_true(gs[0].v[GM_XID] == 0);	/* registered: none yet */
	assert_string_equal(gpu_throttle_text(gs[0].v[GM_THROTTLE], v,
	    sizeof v), "sw-power");
	/* NVLink is a rate against the last sample; none on the first. */
	assert_false(gpu_sample_valid(&gs[0], GM_NVLINK_RX));
	assert_false(gpu_sample_valid(&gs[0], GM_XID_LAST));
	for (int m = 0; m < GM_COUNT; m++)
		assert_int_equal(gpu_sample_valid(&gs[0], m), m != GM_XID_LAST &&
		    m != GM_NVLINK_RX && m != GM_NVLINK_TX);
	assert_int_equal(gs[0].nprocs, 1);
	assert_int_equal(gs[0].procs[0].pid, 4242);
	assert_true(gs[0].procs[0].mem == (double)(1ull << 30));
	/* Device 1: NOT_SUPPORTED leaves the bits clear, a 0 is known. */
	assert_false(gpu_sample_valid(&gs[1], GM_TEMP));
	assert_false(gpu_sample_valid(&gs[1], GM_POWER));
	assert_false(gpu_sample_valid(&gs[1], GM_PCIE_RX));
	assert_false(gpu_sample_valid(&gs[1], GM_ENERGY));
	assert_false(gpu_sample_valid(&gs[1], GM_MEM_TEMP));
	assert_false(gpu_sample_valid(&gs[1], GM_ECC_CORR));
	assert_false(gpu_sample_valid(&gs[1], GM_THROTTLE));
	assert_true(gpu_sample_valid(&gs[1], GM_UTIL));
	assert_true(gs[1].v[GM_UTIL] == 0);	/* known zero, not unknown */
	assert_int_equal(gs[1].nprocs, -1);	/* its process call failed */

	j = gpu_samples_json(gs, 2);
	text = json_dumps(j, JSON_COMPACT);
	print_message("    %s\n", text);
	free(text);
	/* A column a row: GPU 1 is entry 1 of each. */
#define COL(name, i)	json_array_get(json_object_get(j, name), i)
	assert_true(json_is_null(COL("temp", 1)));
	assert_true(json_is_null(COL("power", 1)));
	assert_true(json_is_null(COL("procs", 1)));
	assert_true(json_is_number(COL("util", 1)) &&
	    json_number_value(COL("util", 1)) == 0);
	assert_true(json_number_value(COL("power", 0)) == 612.345);
	assert_string_equal(json_string_value(COL("name", 0)), "Fake GPU 0");
	assert_int_equal(json_integer_value(COL("index", 1)), 1);
	assert_int_equal(json_array_size(json_object_get(j, "util")), 2);
#undef COL
	/* And back, as the backend reads a node's frame. */
	{
		struct gpu_sample back[4];

		assert_int_equal(gpu_samples_read(j, back, 4), 2);
		assert_int_equal(back[0].valid, gs[0].valid);
		assert_int_equal(back[1].valid, gs[1].valid);
		assert_true(back[0].v[GM_ENERGY] == gs[0].v[GM_ENERGY]);
		assert_int_equal(back[0].nprocs, 1);
		assert_int_equal(back[0].procs[0].pid, 4242);
		assert_int_equal(back[1].nprocs, -1);
	}
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

/* A script: values and errors as the test wants them, NVLink as a rate,
 * processes sorted by memory, and XID errors raised once each. */
static void
t_script(void **state)
{
	char		 path[] = "/tmp/test-nvml.XXXXXX";
	struct gpu_sample gs[4];
	struct nvml_xid	 x[8];
	struct timespec	 ts = { 0, 200 * 1000 * 1000 };
	FILE		*f;
	int		 fd;

	assert_true((fd = mkstemp(path)) >= 0);
	assert_non_null(f = fdopen(fd, "w"));
	fprintf(f, "devices 1\n0 name NVIDIA H200\n0 util 55\n0 mem_util 20\n"
	    "0 power ERR 15\n0 nvlink_rx 1000\n0 nvlink_tx 500\n"
	    "0 proc 11 100\n0 proc 22 3000\n0 proc 33 200\n");
	fclose(f);
	setenv("FAKE_NVML_SCRIPT", path, 1);
	use_library(fake_path);
	assert_int_equal(nvml_sample(gs, 4), 1);
	assert_string_equal(gs[0].name, "NVIDIA H200");
	assert_true(gs[0].v[GM_UTIL] == 55);
	assert_true(gs[0].v[GM_MEM_UTIL] == 20);
	assert_false(gpu_sample_valid(&gs[0], GM_ENC_UTIL));	/* not named */
	assert_false(gpu_sample_valid(&gs[0], GM_POWER));	/* GPU lost */
	assert_int_equal(gs[0].nprocs, 3);
	assert_int_equal(gs[0].procs[0].pid, 22);	/* the largest first */
	assert_int_equal(gs[0].procs[2].pid, 11);
	assert_int_equal(nvml_xids(x, 8), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(nvml_sample(gs, 4), 1);
	/* 1000 KiB/s on the double's clock, against ours: close. */
	assert_true(gpu_sample_valid(&gs[0], GM_NVLINK_RX));
	print_message("    nvlink rx %.0f B/s, tx %.0f B/s\n",
	    gs[0].v[GM_NVLINK_RX], gs[0].v[GM_NVLINK_TX]);
	assert_true(fabs(gs[0].v[GM_NVLINK_RX] - 1024000) < 1024000 * 0.05);
	assert_true(fabs(gs[0].v[GM_NVLINK_TX] - 512000) < 512000 * 0.05);
	/* Two XIDs appended: each comes once, and the count follows. */
	assert_non_null(f = fopen(path, "a"));
	fprintf(f, "xid 0 79\nxid 0 48\n");
	fclose(f);
	{
		struct timespec later = { 1, 100 * 1000 * 1000 };

		nanosleep(&later, NULL);	/* a new mtime for the re-read */
	}
	assert_int_equal(nvml_xids(x, 8), 2);
	assert_int_equal(x[0].index, 0);
	assert_true(x[0].xid == 79 && x[1].xid == 48);
	assert_int_equal(nvml_xids(x, 8), 0);
	assert_int_equal(nvml_sample(gs, 4), 1);
	assert_true(gs[0].v[GM_XID] == 2);
	assert_true(gs[0].v[GM_XID_LAST] == 48);
	unsetenv("FAKE_NVML_SCRIPT");
	unlink(path);
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
		cmocka_unit_test(t_script),
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
