/*
 * checkpoint-read.c: checkpoint_load, the reader of checkpoint-file.c's
 * format.  It believes no size it has not checked: it reads the length
 * and the header (at most CKPT_MAX_HEADER), checks the header against the
 * model (names, dtypes, shapes, offsets, blobs) and its numbers, and only
 * then reads the data, whose size the model and the header fix and the
 * file must match exactly; then the hash, and only then does anything
 * change.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/files.h"
#include "lib/xmalloc.h"
#include "backend/worker/checkpoint-internal.h"

void
checkpoint_meta_free(struct ckpt_meta *cm)
{
	for (int i = 0; i < cm->nblobs; i++)
		free(cm->blobs[i].data);
	free(cm->blobs);
	cm->blobs = NULL;
	cm->nblobs = 0;
}

/* len bytes at off; -1 on an error or a short file. */
static int
read_at(int fd, void *buf, size_t len, off_t off)
{
	uint8_t	*p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

static const char *
meta_get(json_t *meta, const char *key)
{
	const char	*s = json_string_value(json_object_get(meta, key));

	return s != NULL ? s : "";
}

/* A metadata field as a decimal number in [0, max]. */
static int
meta_num(json_t *meta, const char *key, unsigned long long max,
    unsigned long long *v, char *why, size_t whylen)
{
	const char	*s = meta_get(meta, key);
	char		*end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || *v > max) {
		snprintf(why, whylen, "metadata %s is '%.32s', not a number "
		    "up to %llu", key, s, max);
		return -1;
	}
	return 0;
}

/* The metadata's numbers: the field of struct ckpt_meta each goes to (an
 * int, or a long or uint64_t, which are one size here), and the most it
 * may be. */
_Static_assert(sizeof(long) == sizeof(uint64_t), "an LP64 host");
#define CKPT_NUM(f, max)	{ #f, offsetof(struct ckpt_meta, f),	\
	sizeof(((struct ckpt_meta *)NULL)->f), max }
static const struct ckpt_num {
	const char		*key;
	size_t			 off, size;
	unsigned long long	 max;
} ckpt_nums[] = {
	CKPT_NUM(step, LONG_MAX),
	CKPT_NUM(epoch, INT_MAX),
	CKPT_NUM(step_in_epoch, LONG_MAX),
	CKPT_NUM(seed, UINT64_MAX),
	CKPT_NUM(world, INT_MAX),
	CKPT_NUM(micro, INT_MAX),
	CKPT_NUM(accum, INT_MAX),
	CKPT_NUM(global, INT_MAX),
	CKPT_NUM(samples, LONG_MAX),
};

/* The metadata's job and numbers into cm, Adam's step count into
 * *adam_t. */
static int
ckpt_meta_read(json_t *meta, struct ckpt_meta *cm, long *adam_t, char *why,
    size_t whylen)
{
	unsigned long long v;

	memset(cm, 0, sizeof *cm);
	snprintf(cm->job, sizeof cm->job, "%s", meta_get(meta, "job"));
	for (size_t i = 0; i < sizeof ckpt_nums / sizeof ckpt_nums[0]; i++) {
		const struct ckpt_num *n = &ckpt_nums[i];
		int	 small;
		uint64_t wide;

		if (meta_num(meta, n->key, n->max, &v, why, whylen) != 0)
			return -1;
		small = (int)v;
		wide = v;
		if (n->size == sizeof small)
			memcpy((char *)cm + n->off, &small, sizeof small);
		else
			memcpy((char *)cm + n->off, &wide, sizeof wide);
	}
	/* Written since adaptive batches; an older file's skew is 0. */
	if (json_object_get(meta, "skew") != NULL) {
		if (meta_num(meta, "skew", INT_MAX, &v, why, whylen) != 0)
			return -1;
		cm->skew = (long)v;
	}
	if (meta_num(meta, "adam_t", LONG_MAX, &v, why, whylen) != 0)
		return -1;
	*adam_t = (long)v;
	return 0;
}

/* A shape as "[a,b]": the checkpoint's array j, or the model's t when j
 * is NULL. */
static void
ckpt_shape_text(char *buf, size_t len, json_t *j, const struct tensor_info *t)
{
	size_t	 n = j != NULL ? json_array_size(j) : (size_t)t->ndim, off;

	off = (size_t)snprintf(buf, len, "[");
	for (size_t d = 0; d < n && off < len; d++)
		off += (size_t)snprintf(buf + off, len - off, "%s%lld",
		    d > 0 ? "," : "", j != NULL ?
		    (long long)json_integer_value(json_array_get(j, d)) :
		    (long long)t->shape[d]);
	if (off < len)
		snprintf(buf + off, len - off, "]");
}

/* Check one tensor's header entry against what the model expects. */
static int
ckpt_check_tensor(json_t *root, const char *name, const struct tensor_info *t,
    size_t off, char *err, size_t errlen)
{
	json_t		*tj = json_object_get(root, name), *shape, *offs;
	const char	*dtype;
	char		 have[64], want[64];
	int		 same;

	if (!json_is_object(tj)) {
		snprintf(err, errlen, "tensor %s is missing", name);
		return -1;
	}
	dtype = json_string_value(json_object_get(tj, "dtype"));
	shape = json_object_get(tj, "shape");
	offs = json_object_get(tj, "data_offsets");
	if (dtype == NULL || strcmp(dtype, "F32") != 0) {
		snprintf(err, errlen, "tensor %s: dtype %s, expected F32", name,
		    dtype != NULL ? dtype : "missing");
		return -1;
	}
	same = json_is_array(shape) &&
	    json_array_size(shape) == (size_t)t->ndim;
	for (int d = 0; same && d < t->ndim; d++) {
		json_t *dim = json_array_get(shape, (size_t)d);

		same = json_is_integer(dim) &&
		    json_integer_value(dim) == t->shape[d];
	}
	if (!same) {
		if (json_is_array(shape))
			ckpt_shape_text(have, sizeof have, shape, NULL);
		else
			snprintf(have, sizeof have, "missing");
		ckpt_shape_text(want, sizeof want, NULL, t);
		snprintf(err, errlen, "tensor %s: shape %s in the checkpoint, "
		    "%s in the job's model", name, have, want);
		return -1;
	}
	if (!json_is_array(offs) || json_array_size(offs) != 2 ||
	    json_integer_value(json_array_get(offs, 0)) != (json_int_t)off ||
	    json_integer_value(json_array_get(offs, 1)) !=
	    (json_int_t)(off + t->numel * 4)) {
		snprintf(err, errlen, "tensor %s: unexpected data_offsets", name);
		return -1;
	}
	return 0;
}

static int
cmp_blob_off(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct ckpt_blob *)a)->data;
	uintptr_t y = (uintptr_t)((const struct ckpt_blob *)b)->data;

	return (x > y) - (x < y);
}

/*
 * The "extra." U8 tensors: each blob's data holds its offset into the
 * data section for now.  They must tile the data after the floats
 * (from `start`) with no gap or overlap, none larger than start plus
 * CKPT_BLOB_SLACK; *total is their length.
 */
static int
ckpt_find_blobs(json_t *root, size_t start, struct ckpt_blob **out, int *n,
    size_t *total, char *why, size_t whylen)
{
	const char	*key;
	json_t		*tj;
	size_t		 pos = start;

	json_object_foreach(root, key, tj) {
		json_t		*offs = json_object_get(tj, "data_offsets");
		const char	*dtype = json_string_value(json_object_get(tj, "dtype"));
		json_int_t	 b, e;
		struct ckpt_blob *bl;

		if (strncmp(key, "extra.", 6) != 0)
			continue;
		b = json_integer_value(json_array_get(offs, 0));
		e = json_integer_value(json_array_get(offs, 1));
		if (dtype == NULL || strcmp(dtype, "U8") != 0 || b < 0 || e < b ||
		    strlen(key + 6) >= sizeof bl->name || *n >= CKPT_MAX_BLOBS) {
			snprintf(why, whylen, "tensor %s is not a U8 blob", key);
			return -1;
		}
		if ((uint64_t)(e - b) > (uint64_t)start + CKPT_BLOB_SLACK) {
			snprintf(why, whylen, "tensor %s: %lld bytes, more than "
			    "any state of this model", key, (long long)(e - b));
			return -1;
		}
		*out = xreallocarray(*out, (size_t)*n + 1, sizeof **out);
		bl = &(*out)[(*n)++];
		snprintf(bl->name, sizeof bl->name, "%s", key + 6);
		bl->data = (uint8_t *)(uintptr_t)b;
		bl->len = (size_t)(e - b);
	}
	if (*n > 1)
		qsort(*out, (size_t)*n, sizeof **out, cmp_blob_off);
	for (int i = 0; i < *n; i++) {
		if ((uintptr_t)(*out)[i].data != pos) {
			snprintf(why, whylen, "extra.%s is not where the data "
			    "says", (*out)[i].name);
			return -1;
		}
		pos += (*out)[i].len;
	}
	*total = pos - start;
	return 0;
}

/* A checkpoint file as it is read: checked in steps, each setting why
 * when it refuses. */
struct ckpt_read {
	int		 fd;
	size_t		 size, hlen;
	uint8_t		 lenbuf[8];
	char		*header;
	json_t		*root, *meta;
	struct ckpt_meta got;
	long		 adam_t;
	struct ckpt_blob *blobs;
	int		 nblobs;
	size_t		 dlen, blen;	/* the floats' bytes, the blobs' */
	uint8_t		*data;
};

/* The length and the header, which must be JSON: 0, or -1 with why. */
static int
ckpt_read_header(struct ckpt_read *r, char *why, size_t whylen)
{
	json_error_t	 jerr;

	if (r->size < 8 || read_at(r->fd, r->lenbuf, 8, 0) != 0)
		r->hlen = SIZE_MAX;
	for (int i = 7; i >= 0 && r->hlen != SIZE_MAX; i--)
		r->hlen = r->hlen << 8 | r->lenbuf[i];
	if (r->hlen > CKPT_MAX_HEADER || 8 + r->hlen > r->size) {
		snprintf(why, whylen, "truncated or bad header length");
		return -1;
	}
	r->header = xmalloc(r->hlen + 1);
	if (read_at(r->fd, r->header, r->hlen, 8) != 0) {
		snprintf(why, whylen, "short read");
		return -1;
	}
	if ((r->root = json_loadb(r->header, r->hlen, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL) {
		snprintf(why, whylen, "header is not JSON: %s", jerr.text);
		return -1;
	}
	r->meta = json_object_get(r->root, "__metadata__");
	return 0;
}

/* The metadata: this format, this model and optimizer, its numbers. */
static int
ckpt_read_meta(struct ckpt_read *r, const struct model *m,
    const struct optimizer *o, char *why, size_t whylen)
{
	const char	*format = meta_get(r->meta, "format");

	if (strcmp(format, CKPT_FORMAT_OLD) == 0) {
		snprintf(why, whylen, "format %s, an older hunter's, whose "
		    "hash leaves the header out: not resumable", CKPT_FORMAT_OLD);
		return -1;
	}
	if (strcmp(format, CKPT_FORMAT) != 0) {
		snprintf(why, whylen, "not a hunter checkpoint (format '%s')",
		    format);
		return -1;
	}
	if (strcmp(meta_get(r->meta, "optimizer"), spec_optim_name(o->type)) != 0 ||
	    strcmp(meta_get(r->meta, "model"), m->type->name) != 0) {
		snprintf(why, whylen, "written for model %s with %s, not "
		    "%s with %s", meta_get(r->meta, "model"),
		    meta_get(r->meta, "optimizer"), m->type->name,
		    spec_optim_name(o->type));
		return -1;
	}
	return ckpt_meta_read(r->meta, &r->got, &r->adam_t, why, whylen);
}

/* The tensors where the model has them, the blobs after them, and a file
 * of exactly that size; then its data. */
static int
ckpt_read_layout(struct ckpt_read *r, const struct model *m,
    const struct ckpt_part *parts, int nparts, char *why, size_t whylen)
{
	size_t	 off = 0;

	for (int p = 0; p < nparts; p++) {
		for (int i = 0; i < m->n_tensors; i++) {
			char name[80];

			snprintf(name, sizeof name, "%s%s", parts[p].prefix,
			    m->tensors[i].name);
			if (ckpt_check_tensor(r->root, name, &m->tensors[i], off,
			    why, whylen) != 0)
				return -1;
			off += m->tensors[i].numel * 4;
		}
	}
	if (ckpt_find_blobs(r->root, r->dlen, &r->blobs, &r->nblobs, &r->blen,
	    why, whylen) != 0)
		return -1;
	if (r->size - 8 - r->hlen != r->dlen + r->blen) {
		snprintf(why, whylen, "data is %zu bytes, expected %zu",
		    r->size - 8 - r->hlen, r->dlen + r->blen);
		return -1;
	}
	r->data = xmalloc(r->dlen + r->blen + 1);
	if (read_at(r->fd, r->data, r->dlen + r->blen, (off_t)(8 + r->hlen)) != 0) {
		snprintf(why, whylen, "short read");
		return -1;
	}
	for (int i = 0; i < r->nblobs; i++)
		r->blobs[i].data = r->data + (size_t)r->blobs[i].data;
	return 0;
}

/* The content hash the header names, against the one of what was read. */
static int
ckpt_read_hash(struct ckpt_read *r, const struct model *m,
    const struct ckpt_part *file_parts, int nparts, char *why, size_t whylen)
{
	const char	*want = meta_get(r->meta, "crc32");
	char		 crc[16];
	long		 at;

	if ((at = ckpt_crc_at(r->header, r->hlen)) < 0 || strlen(want) != 8 ||
	    memcmp(r->header + at, want, 8) != 0) {
		snprintf(why, whylen, "content hash missing (crc32 '%.16s')",
		    want);
		return -1;
	}
	snprintf(crc, sizeof crc, "%08" PRIx32, ckpt_hash(r->lenbuf, r->header,
	    r->hlen, (size_t)at, file_parts, nparts, m->n_params, r->blobs,
	    r->nblobs));
	if (strcmp(crc, want) != 0) {
		snprintf(why, whylen, "content hash mismatch (crc32 %s, "
		    "header says %s)", crc, want);
		return -1;
	}
	return 0;
}

int
ckpt_read_job(int fd, char *job, size_t joblen, char *why, size_t whylen)
{
	struct ckpt_read r = { .fd = fd };
	struct stat	 st;
	int		 rc = -1;

	if (fstat(fd, &st) != 0)
		snprintf(why, whylen, "%s", strerror(errno));
	else {
		r.size = (size_t)st.st_size;
		if (ckpt_read_header(&r, why, whylen) == 0) {
			snprintf(job, joblen, "%s", meta_get(r.meta, "job"));
			rc = 0;
		}
	}
	json_decref(r.root);
	free(r.header);
	return rc;
}

int
checkpoint_load(const char *path, struct model *m, struct optimizer *o,
    struct ckpt_meta *cm, char *err, size_t errlen)
{
	int	 fd, rc;

	/* Not blocking on a FIFO planted under a checkpoint's name. */
	if ((fd = file_open_regular(path, 0, err, errlen)) < 0)
		return -1;
	rc = ckpt_load_fd(fd, path, m, o, cm, err, errlen);
	close(fd);
	return rc;
}

int
ckpt_load_fd(int fd, const char *path, struct model *m, struct optimizer *o,
    struct ckpt_meta *cm, char *err, size_t errlen)
{
	struct ckpt_part parts[3], file_parts[3];
	int		 nparts = ckpt_parts(m, o, parts);
	struct ckpt_read r = { .fd = fd,
	    .dlen = (size_t)nparts * m->n_params * 4 };
	struct stat	 st;
	char		 why[256] = "";

	if (fstat(r.fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	r.size = (size_t)st.st_size;
	if (!S_ISREG(st.st_mode))
		snprintf(why, sizeof why, "not a regular file");
	else if (ckpt_read_header(&r, why, sizeof why) == 0 &&
	    ckpt_read_meta(&r, m, o, why, sizeof why) == 0 &&
	    ckpt_read_layout(&r, m, parts, nparts, why, sizeof why) == 0) {
		for (int p = 0; p < nparts; p++)
			file_parts[p] = (struct ckpt_part){ "",
			    (float *)(r.data + (size_t)p * m->n_params * 4) };
		if (ckpt_read_hash(&r, m, file_parts, nparts, why,
		    sizeof why) == 0) {
			/* Every check passed: now the model changes. */
			*cm = r.got;
			o->t = r.adam_t;
			for (int p = 0; p < nparts; p++)
				memcpy(parts[p].data, file_parts[p].data,
				    m->n_params * 4);
			for (int i = 0; i < r.nblobs; i++) {
				uint8_t *copy = xmalloc(r.blobs[i].len ?
				    r.blobs[i].len : 1);

				memcpy(copy, r.blobs[i].data, r.blobs[i].len);
				r.blobs[i].data = copy;
			}
			cm->blobs = r.blobs;
			cm->nblobs = r.nblobs;
			r.blobs = NULL;
		}
	}
	if (why[0] != '\0')
		snprintf(err, errlen, "%s: %s", path, why);
	free(r.blobs);
	json_decref(r.root);
	free(r.header);
	free(r.data);
	return why[0] != '\0' ? -1 : 0;
}
