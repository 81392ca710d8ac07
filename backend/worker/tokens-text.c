/*
 * tokens-text.c: text as tokens (tokens.h): its bytes, vocabulary 256.
 * A path is a file, a directory (its files in name order, not recursing)
 * or a glob.  What is not text is skipped with a note: a file holding a
 * NUL byte (fortune's .dat indexes), a link to a file already read
 * (fortune's .u8 links), anything that is not a regular file.  Each
 * file's last TOKENS_VAL_PERCENT is its validation part.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/errf.h"
#include "lib/files.h"
#include "lib/xmalloc.h"
#include "backend/worker/tokens.h"

/* Text read at the most: a byte-level corpus larger than this belongs
 * in token shards, which are mapped rather than read. */
#define TOKENS_TEXT_MAX	((size_t)1 << 30)

struct text_read {
	struct token_corpus *c;
	size_t		 len, cap;	/* of c->text */
	char		**seen;		/* real paths read */
	int		 nseen;
	/* Where each file's parts lie in c->text, fixed up at the end. */
	size_t		*off, *ntr, *nva;
	int		 nfiles;
	tokens_note_fn	 note;
	void		*ctx;
};

static void
text_note(struct text_read *tr, const char *fmt, const char *a,
    const char *b)
{
	char	 msg[PATH_MAX * 2 + 64];

	if (tr->note == NULL)
		return;
	snprintf(msg, sizeof msg, fmt, a, b);
	tr->note(tr->ctx, msg);
}

/* Read one file into the text; skipped files are noted, not errors. */
static int
text_add_file(struct text_read *tr, const char *path, char *err,
    size_t errlen)
{
	char		 real[PATH_MAX];
	struct stat	 st;
	const char	*nul;
	size_t		 n = 0;
	ssize_t		 got;
	int		 fd;

	if (realpath(path, real) == NULL) {
		errf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < tr->nseen; i++) {
		if (strcmp(tr->seen[i], real) == 0) {
			text_note(tr, "%s: skipped, the same file as %s, "
			    "already read", path, real);
			return 0;
		}
	}
	/* Not blocking on a FIFO: the type is checked before a read. */
	if ((fd = file_open_regular(real, O_NOFOLLOW, err, errlen)) < 0) {
		if (errno != EINVAL)
			return -1;
		text_note(tr, "%s: skipped, %s", path, err + strlen(real) + 2);
		return 0;
	}
	if (fstat(fd, &st) != 0) {
		errf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if ((size_t)st.st_size > TOKENS_TEXT_MAX - tr->len) {
		close(fd);
		errf(err, errlen, "%s: the text passes %zu MiB; use token "
		    "shards for a corpus this large", path,
		    TOKENS_TEXT_MAX >> 20);
		return -1;
	}
	if (tr->len + (size_t)st.st_size + 1 > tr->cap) {
		tr->cap = tr->len + (size_t)st.st_size + 1 + tr->cap / 2;
		tr->c->text = xrealloc(tr->c->text, tr->cap);
	}
	while (n < (size_t)st.st_size && (got = read(fd, tr->c->text +
	    tr->len + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)got;
	close(fd);
	if ((nul = memchr(tr->c->text + tr->len, '\0', n)) != NULL) {
		char at[32];

		snprintf(at, sizeof at, "%zu", (size_t)(nul -
		    (tr->c->text + tr->len)));
		text_note(tr, "%s: skipped, not text (a NUL byte at offset "
		    "%s)", path, at);
		return 0;
	}
	tr->seen = xreallocarray(tr->seen, (size_t)tr->nseen + 1,
	    sizeof *tr->seen);
	tr->seen[tr->nseen++] = xstrdup(real);
	tr->off = xreallocarray(tr->off, (size_t)tr->nfiles + 1, sizeof *tr->off);
	tr->ntr = xreallocarray(tr->ntr, (size_t)tr->nfiles + 1, sizeof *tr->ntr);
	tr->nva = xreallocarray(tr->nva, (size_t)tr->nfiles + 1, sizeof *tr->nva);
	tr->off[tr->nfiles] = tr->len;
	tr->nva[tr->nfiles] = n * TOKENS_VAL_PERCENT / 100;
	tr->ntr[tr->nfiles] = n - tr->nva[tr->nfiles];
	tr->nfiles++;
	tr->len += n;
	tr->c->files++;
	return 0;
}

static int
text_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's entries in name order, not recursing. */
static int
text_add_dir(struct text_read *tr, const char *dir, char *err, size_t errlen)
{
	DIR		*d;
	struct dirent	*e;
	char		**names = NULL, path[PATH_MAX];
	int		 n = 0, rc = 0;

	if ((d = opendir(dir)) == NULL) {
		errf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		names = xreallocarray(names, (size_t)n + 1, sizeof *names);
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof *names, text_cmp);
	for (int i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (rc == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			text_note(tr, "%s: skipped, a directory%s", path, "");
		else if (rc == 0)
			rc = text_add_file(tr, path, err, errlen);
		free(names[i]);
	}
	free(names);
	return rc;
}

static int
text_add_path(struct text_read *tr, const char *path, char *err,
    size_t errlen)
{
	struct stat	 st;
	glob_t		 g;
	int		 rc = 0;

	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) ? text_add_dir(tr, path, err,
		    errlen) : text_add_file(tr, path, err, errlen);
	if (glob(path, GLOB_ERR, NULL, &g) != 0 || g.gl_pathc == 0) {
		errf(err, errlen, "%s: %s", path, strpbrk(path, "*?[") ?
		    "no file matches" : strerror(ENOENT));
		globfree(&g);
		return -1;
	}
	for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
		rc = text_add_file(tr, g.gl_pathv[i], err, errlen);
	globfree(&g);
	return rc;
}

int
tokens_open_text(struct token_corpus *c, const char *path,
    tokens_note_fn note, void *ctx, char *err, size_t errlen)
{
	struct text_read tr = { .c = c, .note = note, .ctx = ctx };
	int		 rc;

	memset(c, 0, sizeof *c);
	c->vocab = 256;
	rc = text_add_path(&tr, path, err, errlen);
	if (rc == 0 && tr.len == 0) {
		errf(err, errlen, "%s: no text in it", path);
		rc = -1;
	}
	for (int i = 0; rc == 0 && i < tr.nfiles; i++) {
		const char *base = c->text + tr.off[i];

		tokens_add_segment(&c->train, base, tr.ntr[i], 1);
		if (tr.nva[i] > 0)
			tokens_add_segment(&c->val, base + tr.ntr[i],
			    tr.nva[i], 1);
	}
	for (int i = 0; i < tr.nseen; i++)
		free(tr.seen[i]);
	free(tr.seen);
	free(tr.off);
	free(tr.ntr);
	free(tr.nva);
	if (rc != 0)
		tokens_close(c);
	return rc;
}
