/*
 * test-tokens.c: the token data of a language model (backend/worker/
 * tokens.h): shards written here in llm.c's format, hostile ones refused
 * with the file and the reason, text from a directory laid out as
 * fortune's (text, a .dat index holding NUL bytes, a .u8 link), the
 * split into train and validation, and the windows drawn from the seed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/worker/tokens.h"

static char	 tt_dir[256];
static char	 tt_notes[4096];

static void
tt_note(void *ctx, const char *msg)
{
	(void)ctx;
	strncat(tt_notes, msg, sizeof tt_notes - strlen(tt_notes) - 2);
	strcat(tt_notes, "\n");
}

/* A shard at dir/name with the given header and n tokens i * mul % mod. */
static const char *
tt_shard(const char *name, int32_t magic, int32_t version, int32_t count,
    int n, int mul, int mod)
{
	static char	 path[512];
	int32_t		 h[TOKENS_HEADER_INTS] = { magic, version, count };
	FILE		*f;

	snprintf(path, sizeof path, "%s/%s", tt_dir, name);
	assert_non_null(f = fopen(path, "wb"));
	fwrite(h, sizeof h, 1, f);	/* little-endian here */
	for (int i = 0; i < n; i++) {
		uint16_t t = (uint16_t)((i * mul) % mod);

		fwrite(&t, 2, 1, f);
	}
	fclose(f);
	return path;
}

static int
tt_setup(void **state)
{
	(void)state;
	snprintf(tt_dir, sizeof tt_dir, "/tmp/hunter-tokens-XXXXXX");
	assert_non_null(mkdtemp(tt_dir));
	return 0;
}

static int
tt_teardown(void **state)
{
	char	 cmd[300];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf %s", tt_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Hostile shards: each refused, naming the file and the fault. */
static void
t_shard_refused(void **state)
{
	static const struct {
		const char *name;
		int32_t	 magic, version, count;
		int	 n, mod;
		const char *why;
	} cases[] = {
		{ "magic.bin", 12345, 1, 10, 10, 100, "bad magic 12345" },
		{ "version.bin", TOKENS_MAGIC, 2, 10, 10, 100, "version 2" },
		{ "beyond.bin", TOKENS_MAGIC, 1, 1000, 10, 100,
		    "counts 1000 tokens, the file holds 10" },
		{ "vocab.bin", TOKENS_MAGIC, 1, 300, 300, 60000,
		    "is not below the vocabulary (50257)" },
		{ "empty.bin", TOKENS_MAGIC, 1, 0, 0, 100, "no tokens" },
	};
	char	 err[512];

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *p = tt_shard(cases[i].name, cases[i].magic,
		    cases[i].version, cases[i].count, cases[i].n, 257,
		    cases[i].mod);

		err[0] = '\0';
		assert_int_equal(tokens_check_shard(p, TOKENS_GPT2_VOCAB, err,
		    sizeof err), -1);
		printf("  %s\n", err);
		assert_non_null(strstr(err, cases[i].name));
		assert_non_null(strstr(err, cases[i].why));
	}
	/* A file shorter than the header, and one that is not there. */
	{
		char	 p[512];
		FILE	*f;

		snprintf(p, sizeof p, "%s/short.bin", tt_dir);
		assert_non_null(f = fopen(p, "wb"));
		fputs("tiny", f);
		fclose(f);
		assert_int_equal(tokens_check_shard(p, 256, err, sizeof err), -1);
		assert_non_null(strstr(err, "shorter than the 1024-byte header"));
		snprintf(p, sizeof p, "%s/missing.bin", tt_dir);
		assert_int_equal(tokens_check_shard(p, 256, err, sizeof err), -1);
		assert_non_null(strstr(err, "No such file"));
		assert_int_equal(tokens_check_shard(tt_dir, 256, err,
		    sizeof err), -1);
	}
}

/* Two train shards and the validation shard by glob order; windows and
 * their addressing across segments. */
static void
t_shard_windows(void **state)
{
	struct token_corpus c;
	char		 glob[512], err[512];
	int32_t		 w[9];
	uint64_t	 nw;

	(void)state;
	tt_shard("train_000.bin", TOKENS_MAGIC, 1, 100, 100, 1, 50000);
	tt_shard("train_001.bin", TOKENS_MAGIC, 1, 40, 40, 3, 50000);
	tt_shard("train_002.bin", TOKENS_MAGIC, 1, 30, 30, 7, 50000);
	snprintf(glob, sizeof glob, "%s/train_*.bin", tt_dir);
	assert_int_equal(tokens_open_shards(&c, glob, NULL,
	    TOKENS_GPT2_VOCAB, err, sizeof err), 0);
	assert_int_equal(c.train.nseg, 2);
	assert_int_equal(c.train.ntokens, 140);
	assert_int_equal(c.val.ntokens, 30);	/* the last shard */
	nw = tokens_windows(&c.train, 8);
	assert_int_equal(nw, (100 - 8) + (40 - 8));
	tokens_window(&c.train, 5, 8, w);
	for (int t = 0; t <= 8; t++)
		assert_int_equal(w[t], 5 + t);
	tokens_window(&c.train, 92 + 2, 8, w);	/* third window of shard 1 */
	for (int t = 0; t <= 8; t++)
		assert_int_equal(w[t], (2 + t) * 3);
	/* Draws: a function of seed, step and index alone, in range. */
	for (long i = 0; i < 1000; i++) {
		uint64_t a = tokens_draw(42, 7, i, nw);

		assert_true(a < nw);
		assert_int_equal(a, tokens_draw(42, 7, i, nw));
	}
	assert_true(tokens_draw(42, 7, 0, 1u << 30) !=
	    tokens_draw(43, 7, 0, 1u << 30));
	tokens_close(&c);
	/* One bad shard among good ones fails the whole corpus. */
	tt_shard("train_003.bin", 1, 1, 10, 10, 1, 100);
	assert_int_equal(tokens_open_shards(&c, glob, NULL,
	    TOKENS_GPT2_VOCAB, err, sizeof err), -1);
	assert_non_null(strstr(err, "train_003.bin: bad magic"));
}

/* Text laid out as fortune's: the .dat index is skipped as not text,
 * the .u8 link as already read; 5% of each file validates. */
static void
t_text_dir(void **state)
{
	struct token_corpus c;
	char		 d[512], p[600], q[600], err[512];
	FILE		*f;
	int32_t		 w[5];

	(void)state;
	snprintf(d, sizeof d, "%s/fortunes", tt_dir);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(p, sizeof p, "%s/art", d);
	assert_non_null(f = fopen(p, "w"));
	for (int i = 0; i < 200; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	snprintf(p, sizeof p, "%s/art.dat", d);
	assert_non_null(f = fopen(p, "w"));
	fwrite("\0\0\0\2idx", 1, 7, f);
	fclose(f);
	snprintf(p, sizeof p, "%s/art.u8", d);
	assert_int_equal(symlink("art", p), 0);
	snprintf(q, sizeof q, "%s/zen", d);
	assert_non_null(f = fopen(q, "w"));
	for (int i = 0; i < 100; i++)
		fputc('A' + i % 26, f);
	fclose(f);
	tt_notes[0] = '\0';
	assert_int_equal(tokens_open_text(&c, d, tt_note, NULL, err,
	    sizeof err), 0);
	printf("%s", tt_notes);
	assert_non_null(strstr(tt_notes, "art.dat: skipped, not text (a NUL "
	    "byte at offset 0)"));
	assert_non_null(strstr(tt_notes, "art.u8: skipped, the same file as"));
	assert_int_equal(c.vocab, 256);
	assert_int_equal(c.files, 2);
	assert_int_equal(c.train.ntokens, 190 + 95);
	assert_int_equal(c.val.ntokens, 10 + 5);
	/* The validation part of art is its last 10 bytes. */
	tokens_window(&c.val, 0, 4, w);
	for (int t = 0; t <= 4; t++)
		assert_int_equal(w[t], 'a' + (190 + t) % 26);
	tokens_close(&c);
	/* A glob, and a path with nothing behind it. */
	snprintf(p, sizeof p, "%s/z*", d);
	assert_int_equal(tokens_open_text(&c, p, NULL, NULL, err, sizeof err), 0);
	assert_int_equal(c.train.ntokens, 95);
	tokens_close(&c);
	snprintf(p, sizeof p, "%s/nothing*", d);
	assert_int_equal(tokens_open_text(&c, p, NULL, NULL, err, sizeof err), -1);
	assert_non_null(strstr(err, "no file matches"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_shard_refused),
		cmocka_unit_test(t_shard_windows),
		cmocka_unit_test(t_text_dir),
	};

	return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
