/*
 * test-checkpoint.c: safetensors checkpoints: round trip, corruption,
 * shape mismatch, pruning to `keep`, resume skipping a bad one, a file
 * far larger than its header says, a planted link at a temporary name,
 * a header edited without its hash, files that are not the job's (another
 * job's, a link, a FIFO: neither pruned, counted nor resumed; another
 * user's is tests/faults/foreign-ckpt.sh), and the temporary files of a
 * killed run removed when the job starts again.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "backend/worker/checkpoint.h"

static char dir[] = "/tmp/hunter-test-ckpt.XXXXXX";

static struct model *
small_model(int hidden, struct optimizer **o, enum spec_optim type)
{
	struct job_spec	 job;
	struct model	*m;

	spec_job_defaults(&job);
	job.model.type = MODEL_MLP;
	job.model.n_hidden = 1;
	job.model.hidden[0] = hidden;
	job.train.optimizer.type = type;
	m = model_create(&job, 1, 4, 4, 10, 8, 3);
	*o = optimizer_create(&job, m->n_params);
	for (size_t i = 0; i < m->n_params; i++)
		(*o)->m[i] = (float)i * 0.5f;
	return m;
}

static int
count_files(void)
{
	DIR		*d = opendir(dir);
	struct dirent	*de;
	int		 n = 0;

	while ((de = readdir(d)) != NULL)
		n += strstr(de->d_name, ".safetensors") != NULL;
	closedir(d);
	return n;
}

static int
setup(void **state)
{
	(void)state;
	return mkdtemp(dir) == NULL ? -1 : 0;
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
t_round_trip(void **state)
{
	struct optimizer *o1, *o2;
	struct model	*a = small_model(6, &o1, OPTIM_ADAMW);
	struct model	*b = small_model(6, &o2, OPTIM_ADAMW);
	struct ckpt_meta cm = { .job = "rt", .step = 17, .epoch = 2,
	    .step_in_epoch = 5, .seed = 99, .world = 2, .micro = 4, .accum = 3,
	    .global = 24, .samples = 1000 };
	struct ckpt_meta got;
	char		 path[4096], err[512];

	(void)state;
	for (size_t i = 0; i < a->n_params; i++) {
		a->params[i] = (float)i / 7.0f;
		o1->v[i] = (float)i;
	}
	o1->t = 17;
	assert_int_equal(checkpoint_write(dir, 3, a, o1, &cm, path, sizeof path,
	    err, sizeof err), 0);
	assert_non_null(strstr(path, "step-000000017.safetensors"));
	assert_int_equal(checkpoint_load(path, b, o2, &got, err, sizeof err), 0);
	assert_memory_equal(a->params, b->params, a->n_params * sizeof(float));
	assert_memory_equal(o1->m, o2->m, a->n_params * sizeof(float));
	assert_memory_equal(o1->v, o2->v, a->n_params * sizeof(float));
	assert_int_equal(o2->t, 17);
	assert_int_equal(got.step, 17);
	assert_int_equal(got.epoch, 2);
	assert_int_equal(got.step_in_epoch, 5);
	assert_int_equal(got.seed, 99);
	assert_int_equal(got.accum, 3);
	assert_int_equal(got.global, 24);
	assert_int_equal(got.samples, 1000);
	assert_string_equal(got.job, "rt");
	remove(path);
	model_free(a); model_free(b);
	optimizer_free(o1); optimizer_free(o2);
}

static void
t_corrupt_and_mismatch(void **state)
{
	struct optimizer *o1, *o2, *o3;
	struct model	*a = small_model(6, &o1, OPTIM_SGD);
	struct model	*b = small_model(6, &o2, OPTIM_SGD);
	struct model	*c = small_model(7, &o3, OPTIM_SGD);
	struct ckpt_meta cm = { .job = "bad", .step = 5 }, got;
	char		 path[4096], err[512];
	float		 before = b->params[3];
	FILE		*f;
	long		 size;

	(void)state;
	assert_int_equal(checkpoint_write(dir, 10, a, o1, &cm, path, sizeof path,
	    err, sizeof err), 0);
	/* A model of another shape refuses it, naming the tensor. */
	assert_int_equal(checkpoint_load(path, c, o3, &got, err, sizeof err), -1);
	assert_non_null(strstr(err, "fc1.weight"));
	/* Flip one byte of tensor data. */
	f = fopen(path, "r+b");
	fseek(f, -9, SEEK_END);
	fputc(0x5a ^ fgetc(f), f);
	fclose(f);
	b->params[3] = before;
	assert_int_equal(checkpoint_load(path, b, o2, &got, err, sizeof err), -1);
	assert_non_null(strstr(err, "content hash mismatch"));
	assert_true(b->params[3] == before);	/* nothing changed */
	/* Truncate it. */
	f = fopen(path, "r+b");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(path, size - 100), 0);
	assert_int_equal(checkpoint_load(path, b, o2, &got, err, sizeof err), -1);
	assert_non_null(strstr(err, "data is"));
	assert_int_equal(truncate(path, 4), 0);
	assert_int_equal(checkpoint_load(path, b, o2, &got, err, sizeof err), -1);
	assert_non_null(strstr(err, "header length"));
	remove(path);
	model_free(a); model_free(b); model_free(c);
	optimizer_free(o1); optimizer_free(o2); optimizer_free(o3);
}

static void
skipped(void *ctx, const char *path, const char *why)
{
	(void)why;
	snprintf(ctx, 4096, "%s", path);
}

static void
t_keep_and_resume(void **state)
{
	struct optimizer *o1, *o2;
	struct model	*a = small_model(5, &o1, OPTIM_SGD);
	struct model	*b = small_model(5, &o2, OPTIM_SGD);
	struct ckpt_meta cm = { .job = "keep" }, got;
	char		 path[4096], err[512], skip[4096] = "";
	FILE		*f;

	(void)state;
	for (long s = 10; s <= 50; s += 10) {
		cm.step = s;
		a->params[0] = (float)s;
		assert_int_equal(checkpoint_write(dir, 2, a, o1, &cm, path,
		    sizeof path, err, sizeof err), 0);
	}
	assert_int_equal(count_files(), 2);
	/* Corrupt the newest (step 50): resume falls back to step 40. */
	f = fopen(path, "r+b");
	fseek(f, -1, SEEK_END);
	fputc(0x77, f);
	fclose(f);
	assert_int_equal(checkpoint_resume(dir, "keep", b, o2, &got, path, sizeof path,
	    skipped, skip, err, sizeof err), 0);
	assert_int_equal(got.step, 40);
	assert_true(b->params[0] == 40.0f);
	assert_non_null(strstr(skip, "step-000000050"));
	model_free(a); model_free(b);
	optimizer_free(o1); optimizer_free(o2);
}

/* A file much larger than its header says is refused as corrupt, not
 * read: the reader must not allocate what the file system claims. */
static void
t_huge_file(void **state)
{
	struct optimizer *o1, *o2;
	struct model	*a = small_model(5, &o1, OPTIM_SGD);
	struct model	*b = small_model(5, &o2, OPTIM_SGD);
	struct ckpt_meta cm = { .job = "huge", .step = 3 }, got;
	char		 path[4096], err[512];

	(void)state;
	assert_int_equal(checkpoint_write(dir, 10, a, o1, &cm, path, sizeof path,
	    err, sizeof err), 0);
	/* 1 TiB, sparse: no disk space, and more than any machine here can
	 * allocate. */
	assert_int_equal(truncate(path, (off_t)1 << 40), 0);
	assert_int_equal(checkpoint_load(path, b, o2, &got, err, sizeof err), -1);
	assert_non_null(strstr(err, "data is"));
	remove(path);
	model_free(a); model_free(b);
	optimizer_free(o1); optimizer_free(o2);
}

/* A link planted where the writer used to put its temporary file (the
 * directory may be shared) is neither followed nor renamed over the
 * checkpoint: the file it points at stays as it was. */
static void
t_tmp_symlink(void **state)
{
	struct optimizer *o1, *o2;
	struct model	*a = small_model(5, &o1, OPTIM_SGD);
	struct model	*b = small_model(5, &o2, OPTIM_SGD);
	struct ckpt_meta cm = { .job = "link", .step = 17 }, got;
	char		 path[4096], err[512], victim[4200], link[4200];
	char		 buf[64] = "";
	struct stat	 st;
	FILE		*f;

	(void)state;
	snprintf(victim, sizeof victim, "%s/victim", dir);
	snprintf(link, sizeof link, "%s/.step-000000017.safetensors.tmp", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious", f);
	fclose(f);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(checkpoint_write(dir, 10, a, o1, &cm, path, sizeof path,
	    err, sizeof err), 0);
	f = fopen(victim, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	fclose(f);
	assert_string_equal(buf, "precious");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(checkpoint_load(path, b, o2, &got, err, sizeof err), 0);
	remove(path);
	remove(link);
	remove(victim);
	model_free(a); model_free(b);
	optimizer_free(o1); optimizer_free(o2);
}

/* The hash covers the header: a position edited in __metadata__ (same
 * length, so the layout holds) is a hash mismatch. */
static void
t_header_hash(void **state)
{
	struct optimizer *o1, *o2;
	struct model	*a = small_model(5, &o1, OPTIM_SGD);
	struct model	*b = small_model(5, &o2, OPTIM_SGD);
	struct ckpt_meta cm = { .job = "hash", .step = 25, .epoch = 2,
	    .step_in_epoch = 5 }, got;
	char		 path[4096], err[512], *text, *at;
	long		 size;
	FILE		*f;

	(void)state;
	assert_int_equal(checkpoint_write(dir, 10, a, o1, &cm, path, sizeof path,
	    err, sizeof err), 0);
	f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	text = malloc((size_t)size + 1);
	assert_non_null(text);
	rewind(f);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	text[size] = '\0';
	at = strstr(text + 8, "\"step_in_epoch\":\"5\"");
	assert_non_null(at);
	at[strlen("\"step_in_epoch\":\"")] = '9';
	rewind(f);
	assert_int_equal(fwrite(text, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	free(text);
	assert_int_equal(checkpoint_load(path, b, o2, &got, err, sizeof err), -1);
	assert_non_null(strstr(err, "content hash mismatch"));
	remove(path);
	model_free(a); model_free(b);
	optimizer_free(o1); optimizer_free(o2);
}

/* What is not the job's decides nothing: another job's checkpoint at a
 * higher step, a link and a FIFO under checkpoint names are left where
 * they are, do not count for `keep`, and are skipped (with a word) by a
 * resume, which neither hangs on the FIFO nor loads the other job's. */
static void
t_foreign_files(void **state)
{
	struct optimizer *o1, *o2;
	struct model	*a = small_model(5, &o1, OPTIM_SGD);
	struct model	*b = small_model(5, &o2, OPTIM_SGD);
	struct ckpt_meta cm = { .job = "mine" }, other = { .job = "theirs",
	    .step = 900 }, got;
	char		 path[4096], err[512], skip[4096] = "", p[4200];
	char		 link[4200], fifo[4200], theirs[4200];
	struct stat	 st;

	(void)state;
	a->params[0] = 900.0f;
	assert_int_equal(checkpoint_write(dir, 1, a, o1, &other, theirs,
	    sizeof theirs, err, sizeof err), 0);
	snprintf(link, sizeof link, "%s/step-000000950.safetensors", dir);
	assert_int_equal(symlink(theirs, link), 0);
	snprintf(fifo, sizeof fifo, "%s/step-000000990.safetensors", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	for (long s = 10; s <= 30; s += 10) {
		cm.step = s;
		a->params[0] = (float)s;
		assert_int_equal(checkpoint_write(dir, 2, a, o1, &cm, path,
		    sizeof path, err, sizeof err), 0);
	}
	/* Two of its own kept (20 and 30), whatever has higher steps. */
	snprintf(p, sizeof p, "%s/step-000000010.safetensors", dir);
	assert_int_equal(stat(p, &st), -1);
	snprintf(p, sizeof p, "%s/step-000000020.safetensors", dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(stat(theirs, &st), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_int_equal(checkpoint_resume(dir, "mine", b, o2, &got, path,
	    sizeof path, skipped, skip, err, sizeof err), 0);
	assert_int_equal(got.step, 30);
	assert_true(b->params[0] == 30.0f);
	/* Another job has no checkpoint there: none loads. */
	assert_int_equal(checkpoint_resume(dir, "nobody", b, o2, &got, path,
	    sizeof path, skipped, skip, err, sizeof err), 1);
	assert_true(b->params[0] == 30.0f);
	remove(link);
	remove(fifo);
	remove(theirs);
	for (long s = 20; s <= 30; s += 10) {
		snprintf(p, sizeof p, "%s/step-%09ld.safetensors", dir, s);
		remove(p);
	}
	model_free(a); model_free(b);
	optimizer_free(o1); optimizer_free(o2);
}

/* A run killed while it wrote leaves its temporary file; the next run's
 * start removes the job's, and only the job's: the same run's, another
 * job's and a fresh one of unknown name stay. */
static void
t_clean_tmp(void **state)
{
	static const char *const names[] = {
		".step-000000040.cj.1000.0123456789abcdef.tmp",	/* removed */
		".step-000000050.cj.2000.0123456789abcdef.tmp",	/* this run */
		".step-000000040.cjx.1000.0123456789abcdef.tmp",	/* other job */
		".step-000000040.0123456789abcdef.tmp",		/* old name */
	};
	char		 p[4200];
	struct stat	 st;
	FILE		*f;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		assert_non_null(f = fopen(p, "w"));
		fclose(f);
	}
	assert_int_equal(checkpoint_clean(dir, "cj", 2000), 1);
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		assert_int_equal(stat(p, &st), i == 0 ? -1 : 0);
		remove(p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_round_trip),
		cmocka_unit_test(t_corrupt_and_mismatch),
		cmocka_unit_test(t_keep_and_resume),
		cmocka_unit_test(t_huge_file),
		cmocka_unit_test(t_tmp_symlink),
		cmocka_unit_test(t_header_hash),
		cmocka_unit_test(t_foreign_files),
		cmocka_unit_test(t_clean_tmp),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
