/*
 * tokens.c: token shards and text as the data of a language model
 * (tokens.h).  A shard is checked before it is used: the header, the
 * count against the file's size, and every token against the vocabulary,
 * so a hostile shard is refused with its name and the fault instead of
 * indexing an embedding out of bounds later.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/errf.h"
#include "lib/files.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "backend/worker/tokens.h"

#define TOKENS_HEADER_BYTES	(TOKENS_HEADER_INTS * 4)

struct token_map {
	void	*addr;
	size_t	 len;
};

/* Little-endian int32 i of a header. */
static int32_t
tokens_le32(const uint8_t *h, int i)
{
	const uint8_t *p = h + 4 * i;

	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
	    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* Map path and check it as a shard: *m holds the mapping, *tok and *n
 * its tokens.  0, or -1 with err. */
static int
tokens_map(const char *path, int vocab, struct token_map *m,
    const uint8_t **tok, size_t *n, char *err, size_t errlen)
{
	struct stat	 st;
	const uint8_t	*h;
	int32_t		 magic, version, count;
	int		 fd;

	/* A FIFO is refused, not waited on. */
	if ((fd = file_open_regular(path, 0, err, errlen)) < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		errf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (st.st_size < TOKENS_HEADER_BYTES) {
		errf(err, errlen, "%s: %lld bytes, shorter than the %d-byte "
		    "header of a token shard", path, (long long)st.st_size,
		    TOKENS_HEADER_BYTES);
		close(fd);
		return -1;
	}
	m->len = (size_t)st.st_size;
	m->addr = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m->addr == MAP_FAILED) {
		errf(err, errlen, "%s: mmap: %s", path, strerror(errno));
		m->addr = NULL;
		return -1;
	}
	h = m->addr;
	magic = tokens_le32(h, 0);
	version = tokens_le32(h, 1);
	count = tokens_le32(h, 2);
	if (magic != TOKENS_MAGIC)
		errf(err, errlen, "%s: bad magic %d (a token shard starts "
		    "with %d)", path, magic, TOKENS_MAGIC);
	else if (version != TOKENS_VERSION)
		errf(err, errlen, "%s: version %d, not %d (uint16 tokens)",
		    path, version, TOKENS_VERSION);
	else if (count <= 0)
		errf(err, errlen, "%s: %s", path, count == 0 ? "no tokens" :
		    "a negative token count");
	else if ((size_t)count > (m->len - TOKENS_HEADER_BYTES) / 2)
		errf(err, errlen, "%s: the header counts %d tokens, the file "
		    "holds %zu", path, count, (m->len - TOKENS_HEADER_BYTES) / 2);
	else {
		const uint8_t *t = h + TOKENS_HEADER_BYTES;

		for (int32_t i = 0; i < count; i++) {
			int v = t[2 * i] | t[2 * i + 1] << 8;

			if (v >= vocab) {
				errf(err, errlen, "%s: token %d at position %d "
				    "is not below the vocabulary (%d)", path, v,
				    i, vocab);
				goto bad;
			}
		}
		*tok = t;
		*n = (size_t)count;
		return 0;
	}
bad:
	munmap(m->addr, m->len);
	m->addr = NULL;
	return -1;
}

void
tokens_add_segment(struct token_part *p, const void *base, size_t n,
    int width)
{
	p->seg = xreallocarray(p->seg, (size_t)p->nseg + 1, sizeof *p->seg);
	p->seg[p->nseg++] = (struct token_segment){ base, n, width };
	p->ntokens += n;
}

/* Map one shard into part p. */
static int
tokens_add_shard(struct token_corpus *c, struct token_part *p,
    const char *path, char *err, size_t errlen)
{
	const uint8_t	*tok;
	size_t		 n;

	c->maps = xreallocarray(c->maps, (size_t)c->nmaps + 1, sizeof *c->maps);
	if (tokens_map(path, c->vocab, &c->maps[c->nmaps], &tok, &n, err,
	    errlen) != 0)
		return -1;
	c->nmaps++;
	c->files++;
	tokens_add_segment(p, tok, n, 2);
	return 0;
}

int
tokens_open_shards(struct token_corpus *c, const char *train_glob,
    const char *val, int vocab, char *err, size_t errlen)
{
	glob_t	 g;
	size_t	 ntrain;
	int	 rc = -1;

	memset(c, 0, sizeof *c);
	c->vocab = vocab;
	if (glob(train_glob, GLOB_ERR, NULL, &g) != 0 || g.gl_pathc == 0) {
		errf(err, errlen, "%s: no shard matches", train_glob);
		globfree(&g);
		return -1;
	}
	ntrain = g.gl_pathc;
	if ((val == NULL || val[0] == '\0') && ntrain >= 2)
		ntrain--;	/* the last shard validates */
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct token_part *p = i < ntrain ? &c->train : &c->val;

		if (tokens_add_shard(c, p, g.gl_pathv[i], err, errlen) != 0)
			goto out;
	}
	if (val != NULL && val[0] != '\0' &&
	    tokens_add_shard(c, &c->val, val, err, errlen) != 0)
		goto out;
	rc = 0;
out:
	globfree(&g);
	if (rc != 0)
		tokens_close(c);
	return rc;
}

int
tokens_check_shard(const char *path, int vocab, char *err, size_t errlen)
{
	struct token_map m;
	const uint8_t	*tok;
	size_t		 n;

	if (tokens_map(path, vocab, &m, &tok, &n, err, errlen) != 0)
		return -1;
	munmap(m.addr, m.len);
	return 0;
}

int
tokens_check_data(int text, const char *train_glob, const char *val,
    const char *path, int vocab, char *err, size_t errlen)
{
	struct token_corpus c;

	if (text) {
		if (tokens_open_text(&c, path, NULL, NULL, err, errlen) != 0)
			return -1;
	} else if (tokens_open_shards(&c, train_glob, val, vocab, err,
	    errlen) != 0)
		return -1;
	tokens_close(&c);
	return 0;
}

void
tokens_close(struct token_corpus *c)
{
	for (int i = 0; i < c->nmaps; i++)
		if (c->maps[i].addr != NULL)
			munmap(c->maps[i].addr, c->maps[i].len);
	free(c->maps);
	free(c->train.seg);
	free(c->val.seg);
	free(c->text);
	memset(c, 0, sizeof *c);
}

uint64_t
tokens_windows(const struct token_part *p, int T)
{
	uint64_t n = 0;

	for (int i = 0; i < p->nseg; i++)
		if (p->seg[i].n > (size_t)T)
			n += p->seg[i].n - (size_t)T;
	return n;
}

void
tokens_window(const struct token_part *p, uint64_t w, int T, int32_t *out)
{
	for (int i = 0; i < p->nseg; i++) {
		const struct token_segment *s = &p->seg[i];
		uint64_t starts = s->n > (size_t)T ? s->n - (size_t)T : 0;

		if (w >= starts) {
			w -= starts;
			continue;
		}
		if (s->width == 1) {
			const uint8_t *b = (const uint8_t *)s->base + w;

			for (int t = 0; t <= T; t++)
				out[t] = b[t];
		} else {
			const uint8_t *b = (const uint8_t *)s->base + 2 * w;

			for (int t = 0; t <= T; t++)
				out[t] = b[2 * t] | b[2 * t + 1] << 8;
		}
		return;
	}
	abort();	/* w was checked against tokens_windows */
}

uint64_t
tokens_draw(uint64_t seed, long step, long i, uint64_t nwindows)
{
	struct rng	 r;

	rng_seed(&r, seed ^ 0x746f6b656e73ULL, (uint64_t)step << 20 ^
	    (uint64_t)i);
	return (uint64_t)(((unsigned __int128)rng_next(&r) * nwindows) >> 64);
}
