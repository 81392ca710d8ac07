/*
 * test-data.c: the idx reader, the epoch permutation, sharding and the
 * prefetch loader.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <zlib.h>

#include "backend/worker/data.h"

static char dir[] = "/tmp/hunter-test-data.XXXXXX";

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

/* Write an idx file: magic, dims, then `len` bytes of data (which may be
 * shorter than the dims say, to make truncated files). */
static void
write_idx(const char *name, int gz, uint32_t magic, const uint32_t *dims,
    int ndim, const uint8_t *data, size_t len)
{
	char	 path[256];
	uint8_t	 hdr[16];

	put_be32(hdr, magic);
	for (int i = 0; i < ndim; i++)
		put_be32(hdr + 4 + 4 * i, dims[i]);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (gz) {
		gzFile f = gzopen(path, "wb");
		gzwrite(f, hdr, 4 + 4 * ndim);
		if (len)
			gzwrite(f, data, (unsigned)len);
		gzclose(f);
	} else {
		FILE *f = fopen(path, "wb");
		fwrite(hdr, 1, 4 + 4 * (size_t)ndim, f);
		if (len)
			fwrite(data, 1, len, f);
		fclose(f);
	}
}

/* n images of 2x2 where pixel value = sample index, labels = index % 10. */
static void
write_set(const char *prefix, int gz, int n)
{
	uint8_t	*x = malloc((size_t)n * 4), *y = malloc((size_t)n);
	char	 name[128];

	for (int i = 0; i < n; i++) {
		memset(x + 4 * i, i & 0xff, 4);
		y[i] = (uint8_t)(i % 10);
	}
	snprintf(name, sizeof name, "%s-images-idx3-ubyte%s", prefix, gz ? ".gz" : "");
	write_idx(name, gz, 0x803, (uint32_t[]){ n, 2, 2 }, 3, x, (size_t)n * 4);
	snprintf(name, sizeof name, "%s-labels-idx1-ubyte%s", prefix, gz ? ".gz" : "");
	write_idx(name, gz, 0x801, (uint32_t[]){ n }, 1, y, (size_t)n);
	free(x);
	free(y);
}

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	write_set("train", 1, 100);
	write_set("t10k", 0, 20);
	return 0;
}

static int
teardown(void **state)
{
	char	 cmd[300];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}

static void
t_load_gz_and_raw(void **state)
{
	struct dataset	 ds;
	char		 err[512];

	(void)state;
	assert_int_equal(data_load_fmnist(dir, 1, &ds, err, sizeof err), 0);
	assert_int_equal(ds.n, 100);
	assert_int_equal(ds.rows, 2);
	assert_int_equal(ds.y[37], 7);
	/* Pixel 37 normalised: (37/255 - mean) / std. */
	assert_float_equal(ds.x[37 * 4 + 3], (37 / 255.0f - 0.2860f) / 0.3530f, 1e-6);
	data_free(&ds);
	assert_int_equal(data_load_fmnist(dir, 0, &ds, err, sizeof err), 0);
	assert_int_equal(ds.n, 20);
	data_free(&ds);
}

static void
expect_error(const char *images, const char *labels, const char *needle)
{
	struct dataset	 ds;
	char		 xp[256], yp[256], err[512] = "";

	snprintf(xp, sizeof xp, "%s/%s", dir, images);
	snprintf(yp, sizeof yp, "%s/%s", dir, labels);
	assert_int_equal(data_load_idx(xp, yp, &ds, err, sizeof err), -1);
	if (strstr(err, needle) == NULL)
		fail_msg("error '%s' lacks '%s'", err, needle);
	assert_non_null(strstr(err, images));
}

static void
t_bad_files(void **state)
{
	uint8_t	 data[400] = { 0 };

	(void)state;
	write_idx("short-img", 0, 0x803, (uint32_t[]){ 100, 2, 2 }, 3, data, 399);
	expect_error("short-img", "train-labels-idx1-ubyte.gz",
	    "truncated: expected 400 bytes");
	write_idx("magic-img", 1, 0x801, (uint32_t[]){ 100, 2, 2 }, 3, data, 400);
	expect_error("magic-img", "train-labels-idx1-ubyte.gz", "bad idx magic");
	write_idx("huge-img", 0, 0x803, (uint32_t[]){ 0xffffffffu, 2, 2 }, 3, data, 400);
	expect_error("huge-img", "train-labels-idx1-ubyte.gz", "implausible size");
	write_idx("hdr-img", 0, 0x803, (uint32_t[]){ 100 }, 1, NULL, 0);
	expect_error("hdr-img", "train-labels-idx1-ubyte.gz", "truncated idx header");
	write_idx("long-img", 0, 0x803, (uint32_t[]){ 99, 2, 2 }, 3, data, 400);
	expect_error("long-img", "train-labels-idx1-ubyte.gz", "unexpected bytes after");
	write_idx("n99-img", 0, 0x803, (uint32_t[]){ 99, 2, 2 }, 3, data, 396);
	expect_error("n99-img", "train-labels-idx1-ubyte.gz", "has 99 images but");
	data[5] = 10;
	write_idx("bad-lbl", 0, 0x801, (uint32_t[]){ 100 }, 1, data, 100);
	{
		struct dataset ds;
		char xp[256], yp[256], err[512];
		snprintf(xp, sizeof xp, "%s/train-images-idx3-ubyte.gz", dir);
		snprintf(yp, sizeof yp, "%s/bad-lbl", dir);
		assert_int_equal(data_load_idx(xp, yp, &ds, err, sizeof err), -1);
		assert_non_null(strstr(err, "label 10 of sample 5"));
	}
	expect_error("missing", "missing2", "No such file");
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* In a child under an address-space limit of what it has plus 64 MiB
 * (not in a sanitizer build, whose shadow needs terabytes), load images
 * with the good labels of n samples: 0 if it failed with needle in the
 * message, 1 with the message otherwise; killed if it tried to allocate
 * what the header claims. */
static void
expect_small_failure(const char *images, int n, const char *needle)
{
	char	 xp[256], yp[256], err[512] = "";
	long	 pages = 0;
	FILE	*f;
	pid_t	 pid;
	int	 st;

	snprintf(xp, sizeof xp, "%s/%s", dir, images);
	snprintf(yp, sizeof yp, "%s/lbl-%d", dir, n);
	if ((pid = fork()) == 0) {
		struct dataset	ds;
		struct rlimit	rl;

#ifndef UNDER_ASAN
		if ((f = fopen("/proc/self/statm", "r")) != NULL) {
			if (fscanf(f, "%ld", &pages) != 1)
				pages = 0;
			fclose(f);
		}
		rl.rlim_cur = rl.rlim_max = (rlim_t)pages *
		    (rlim_t)sysconf(_SC_PAGESIZE) + (64 << 20);
		if (pages > 0)
			setrlimit(RLIMIT_AS, &rl);
#else
		(void)f; (void)rl;
#endif
		if (data_load_idx(xp, yp, &ds, err, sizeof err) != -1)
			_exit(2);
		if (strstr(err, needle) == NULL) {
			fprintf(stderr, "error '%s' lacks '%s'\n", err, needle);
			_exit(1);
		}
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("%s: killed by signal %d (it allocated what the "
		    "header claims)", images, WTERMSIG(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * The cap is on what is allocated: 1024^3 pixels (1 GiB of bytes, 4 GiB
 * of floats) are refused from the header; a header of 256 MiB of pixels
 * (1 GiB of floats, the limit) over 1000 bytes of data costs what the data
 * holds, not what the header claims; a file over the first allocation
 * grows into the right values.
 */
static void
t_big_headers(void **state)
{
	struct dataset	 ds;
	uint8_t		 data[1024] = { 0 }, *x, *y;
	char		 name[64], err[512];
	size_t		 n = 300, side = 64, i;

	(void)state;
	write_idx("lbl-1024", 1, 0x801, (uint32_t[]){ 1024 }, 1, data, 1024);
	write_idx("lbl-256", 1, 0x801, (uint32_t[]){ 256 }, 1, data, 256);
	write_idx("giga-img", 1, 0x803, (uint32_t[]){ 1024, 1024, 1024 }, 3,
	    data, 1000);
	expect_small_failure("giga-img", 1024,
	    "more than 1073741824 bytes as floats");
	write_idx("liar-img", 1, 0x803, (uint32_t[]){ 256, 1024, 1024 }, 3,
	    data, 1000);
	expect_small_failure("liar-img", 256,
	    "expected 268435456 bytes of data after the header, got 1000");

	x = malloc(n * side * side);
	y = malloc(n);
	for (i = 0; i < n * side * side; i++)
		x[i] = (uint8_t)(i * 7);
	for (i = 0; i < n; i++)
		y[i] = (uint8_t)(i % 10);
	write_idx("grow-img", 1, 0x803, (uint32_t[]){ n, side, side }, 3, x,
	    n * side * side);
	write_idx("grow-lbl", 0, 0x801, (uint32_t[]){ n }, 1, y, n);
	snprintf(name, sizeof name, "%s/grow-img", dir);
	{
		char yp[256];
		snprintf(yp, sizeof yp, "%s/grow-lbl", dir);
		assert_int_equal(data_load_idx(name, yp, &ds, err, sizeof err), 0);
	}
	assert_int_equal(ds.n, (int)n);
	for (i = 0; i < n * side * side; i += 4099)
		assert_float_equal(ds.x[i], ((uint8_t)(i * 7) / 255.0f -
		    0.2860f) / 0.3530f, 1e-6);
	i = n * side * side - 1;
	assert_float_equal(ds.x[i], ((uint8_t)(i * 7) / 255.0f - 0.2860f) /
	    0.3530f, 1e-6);
	assert_int_equal(ds.y[n - 1], (n - 1) % 10);
	data_free(&ds);
	free(x);
	free(y);
}

static void
t_shard_partition(void **state)
{
	static const int cases[][3] = { { 256, 2, 1 }, { 256, 4, 2 },
	    { 128, 1, 4 }, { 100, 3, 2 }, { 7, 2, 3 } };

	(void)state;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		int	 G = cases[c][0], W = cases[c][1], A = cases[c][2], next = 0;

		/* Rank-major, micro-step-minor slices tile [0, G) in order. */
		for (int r = 0; r < W; r++) {
			for (int a = 0; a < A; a++) {
				int off, n;
				data_shard(G, W, r, A, a, &off, &n);
				assert_int_equal(off, next);
				assert_true(n == G / (W * A) || n == G / (W * A) + 1);
				next += n;
			}
		}
		assert_int_equal(next, G);
	}
}

static void
t_permutation(void **state)
{
	enum { N = 1000 };
	uint32_t a[N], b[N], c[N];
	int	 seen[N] = { 0 }, moved = 0;

	(void)state;
	data_permutation(a, N, 42, 0);
	data_permutation(b, N, 42, 0);
	data_permutation(c, N, 42, 1);
	assert_memory_equal(a, b, sizeof a);
	assert_memory_not_equal(a, c, sizeof a);
	for (int i = 0; i < N; i++) {
		seen[a[i]]++;
		moved += a[i] != (uint32_t)i;
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	assert_true(moved > N / 2);
}

/* Every rank's slices of each step, concatenated, are the one-rank batch;
 * and a loader started mid-way, one with no thread (prefetch 0), yields
 * what a running one would. */
static void
t_loader_order(void **state)
{
	struct dataset	 ds;
	char		 err[256];
	struct loader	*one, *ranks[2], *mid;
	const struct batch *b;
	uint8_t		 labels[20];
	double		 wait = 0;

	(void)state;
	assert_int_equal(data_load_fmnist(dir, 1, &ds, err, sizeof err), 0);
	one = loader_start(&(struct loader_source){ .images = &ds,
	    .steps_per_epoch = ds.n / 20 }, 9, 20, 1, 0, 1, 2, 0, 0, 2);
	ranks[0] = loader_start(&(struct loader_source){ .images = &ds,
	    .steps_per_epoch = ds.n / 20 }, 9, 20, 2, 0, 2, 3, 0, 0, 2);
	ranks[1] = loader_start(&(struct loader_source){ .images = &ds,
	    .steps_per_epoch = ds.n / 20 }, 9, 20, 2, 1, 2, 1, 0, 0, 2);
	/* With prefetch 0: no thread, the same batches. */
	mid = loader_start(&(struct loader_source){ .images = &ds,
	    .steps_per_epoch = ds.n / 20 }, 9, 20, 1, 0, 1, 0, 1, 2, 2);
	for (int step = 0; step < 10; step++) {
		int n = 0;

		b = loader_next(one, &wait);
		assert_non_null(b);
		assert_int_equal(b->n, 20);
		memcpy(labels, b->y, 20);
		for (int r = 0; r < 2; r++) {
			for (int a = 0; a < 2; a++) {
				const struct batch *s = loader_next(ranks[r], &wait);
				assert_non_null(s);
				assert_int_equal(s->n, 5);
				assert_memory_equal(s->y, labels + n, 5);
				/* Images follow labels: pixel = index & 0xff. */
				assert_memory_equal(s->x, b->x + (size_t)n * 4,
				    5 * 4 * sizeof(float));
				n += 5;
			}
		}
		if (step >= 7) {	/* epoch 1, step 2 onwards */
			const struct batch *m = loader_next(mid, &wait);
			assert_non_null(m);
			assert_int_equal(m->epoch, 1);
			assert_memory_equal(m->y, labels, 20);
		}
	}
	assert_null(loader_next(one, &wait));
	assert_null(loader_next(mid, &wait));
	loader_stop(one);
	loader_stop(ranks[0]);
	loader_stop(ranks[1]);
	loader_stop(mid);
	data_free(&ds);
}

/* An adaptive batch's resume (data_resume_pos) by hand: 100 samples,
 * 40 seen at 20, now at 30 (3 steps an epoch). */
static void
t_resume_pos(void **state)
{
	struct data_pos	 p;

	(void)state;
	/* 40 = 1 x 30 + 10: step 1 of an epoch skewed by 10, which has
	 * (100 - 10) / 30 = 3 steps, 2 left: step 3 - 2 = 1. */
	data_resume_pos(100, 30, 0, 40, &p);
	assert_int_equal(p.epoch, 0);
	assert_int_equal(p.step_in_epoch, 1);
	assert_int_equal(p.skew, 10);
	assert_int_equal(p.step, 1);
	assert_int_equal(data_epoch_steps(100, 30, 10), 3);
	/* In epoch 2, 60 seen at 30 now at 40: 1 step, skew 20, which
	 * leaves (100 - 20) / 40 = 2 steps, 1 left: (2 + 1) x 2 - 1. */
	data_resume_pos(100, 40, 2, 60, &p);
	assert_int_equal(p.step_in_epoch, 1);
	assert_int_equal(p.skew, 20);
	assert_int_equal(p.step, 5);
	/* 90 seen, less than a batch of 40 left: the next epoch's start. */
	data_resume_pos(100, 40, 2, 90, &p);
	assert_int_equal(p.epoch, 3);
	assert_int_equal(p.step_in_epoch, 0);
	assert_int_equal(p.skew, 0);
	assert_int_equal(p.step, 6);
	/* The same batch: the same step, no skew. */
	data_resume_pos(100, 20, 1, 60, &p);
	assert_int_equal(p.step_in_epoch, 3);
	assert_int_equal(p.skew, 0);
	assert_int_equal(p.step, 8);
}

/* A loader resumed at another batch by samples: its first step's samples
 * are those after the ones seen, its epoch ends a whole batch before the
 * data does, and the next epoch is as any other. */
static void
t_loader_skew(void **state)
{
	struct dataset	 ds;
	char		 err[256];
	struct loader	*ref, *sk;
	const struct batch *b;
	float		 first[100], next[30];
	double		 wait = 0;
	struct data_pos	 p;

	(void)state;
	assert_int_equal(data_load_fmnist(dir, 1, &ds, err, sizeof err), 0);
	/* The order of epochs 0 and 1, a sample's first pixel naming it. */
	ref = loader_start(&(struct loader_source){ .images = &ds,
	    .steps_per_epoch = 5 }, 9, 20, 1, 0, 1, 2, 0, 0, 2);
	for (int s = 0; s < 5; s++) {
		assert_non_null(b = loader_next(ref, &wait));
		for (int i = 0; i < 20; i++)
			first[s * 20 + i] = b->x[(size_t)i * 4];
	}
	assert_non_null(b = loader_next(ref, &wait));
	for (int i = 0; i < 20; i++)
		next[i] = b->x[(size_t)i * 4];
	assert_non_null(b = loader_next(ref, &wait));
	for (int i = 0; i < 10; i++)
		next[20 + i] = b->x[(size_t)i * 4];
	/* 40 seen at 20; at 30 on 2 ranks' rank 1 as 1 micro-batch. */
	data_resume_pos(100, 30, 0, 40, &p);
	sk = loader_start(&(struct loader_source){ .images = &ds,
	    .steps_per_epoch = 3, .skew = p.skew,
	    .first_steps = data_epoch_steps(100, 30, p.skew) }, 9, 30, 2, 1,
	    1, 2, p.epoch, p.step_in_epoch, 2);
	for (int s = 0; s < 2; s++) {	/* samples 55..69, then 85..99 */
		assert_non_null(b = loader_next(sk, &wait));
		assert_int_equal(b->n, 15);
		assert_int_equal(b->epoch, 0);
		for (int i = 0; i < 15; i++)
			assert_true(b->x[(size_t)i * 4] == first[55 + 30 * s + i]);
	}
	assert_non_null(b = loader_next(sk, &wait));	/* epoch 1: 15..29 */
	assert_int_equal(b->epoch, 1);
	assert_int_equal(b->step, 0);
	for (int i = 0; i < 15; i++)
		assert_true(b->x[(size_t)i * 4] == next[15 + i]);
	loader_stop(ref);
	loader_stop(sk);
	data_free(&ds);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_load_gz_and_raw),
		cmocka_unit_test(t_bad_files),
		cmocka_unit_test(t_big_headers),
		cmocka_unit_test(t_shard_partition),
		cmocka_unit_test(t_permutation),
		cmocka_unit_test(t_loader_order),
		cmocka_unit_test(t_resume_pos),
		cmocka_unit_test(t_loader_skew),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
