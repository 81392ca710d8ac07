/*
 * checkpoint.c: writing, checking and finding safetensors checkpoints.
 *
 * Layout of the data section: the parameter tensors in model order, then
 * optim.m.* and optim.v.* in the same order, each float32 little-endian.
 * The header is padded with spaces to a multiple of 8 bytes, as the
 * safetensors format allows, so the tensors start aligned.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/worker/checkpoint.h"

#define CKPT_FORMAT	"hunter/1"
#define CKPT_MAX_HEADER	(16u << 20)

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian; this build assumes a little-endian host"
#endif

/* The float buffers of a checkpoint, in file order, with their prefixes. */
struct ckpt_part {
	const char	*prefix;
	float		*data;
};

static int
ckpt_parts(const struct model *m, const struct optimizer *o,
    struct ckpt_part *parts)
{
	int	 n = 0;

	parts[n++] = (struct ckpt_part){ "", m->params };
	parts[n++] = (struct ckpt_part){ "optim.m.", o->m };
	if (o->v != NULL)
		parts[n++] = (struct ckpt_part){ "optim.v.", o->v };
	return n;
}

static uLong
crc_bytes(uLong crc, const void *data, size_t left)
{
	const Bytef	*p = data;

	while (left > 0) {
		uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;

		crc = crc32(crc, p, chunk);
		p += chunk;
		left -= chunk;
	}
	return crc;
}

/* CRC-32 of the data section: the float parts, then the blobs. */
static uint32_t
ckpt_crc(const struct ckpt_part *parts, int nparts, size_t n,
    const struct ckpt_blob *blobs, int nblobs)
{
	uLong	 crc = crc32(0L, Z_NULL, 0);

	for (int i = 0; i < nparts; i++)
		crc = crc_bytes(crc, parts[i].data, n * sizeof(float));
	for (int i = 0; i < nblobs; i++)
		crc = crc_bytes(crc, blobs[i].data, blobs[i].len);
	return (uint32_t)crc;
}

void
checkpoint_meta_free(struct ckpt_meta *cm)
{
	for (int i = 0; i < cm->nblobs; i++)
		free(cm->blobs[i].data);
	free(cm->blobs);
	cm->blobs = NULL;
	cm->nblobs = 0;
}

static void
meta_set(json_t *meta, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
meta_set(json_t *meta, const char *key, const char *fmt, ...)
{
	char	 buf[128];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	json_object_set_new(meta, key, json_string(buf));
}

/* Build the JSON header text, padded to a multiple of 8 bytes. */
static char *
ckpt_header(const struct model *m, const struct optimizer *o,
    const struct ckpt_meta *cm, const struct ckpt_part *parts, int nparts,
    size_t *hlen)
{
	json_t	*root = json_object(), *meta = json_object();
	size_t	 off = 0, len;
	char	*text, *padded;

	meta_set(meta, "format", "%s", CKPT_FORMAT);
	meta_set(meta, "job", "%s", cm->job);
	meta_set(meta, "model", "%s", m->type->name);
	meta_set(meta, "optimizer", "%s", spec_optim_name(o->type));
	meta_set(meta, "step", "%ld", cm->step);
	meta_set(meta, "epoch", "%d", cm->epoch);
	meta_set(meta, "step_in_epoch", "%ld", cm->step_in_epoch);
	meta_set(meta, "seed", "%" PRIu64, cm->seed);
	meta_set(meta, "world", "%d", cm->world);
	meta_set(meta, "micro", "%d", cm->micro);
	meta_set(meta, "accum", "%d", cm->accum);
	meta_set(meta, "adam_t", "%ld", o->t);
	meta_set(meta, "crc32", "%08x", ckpt_crc(parts, nparts, m->n_params,
	    cm->blobs, cm->nblobs));
	json_object_set_new(root, "__metadata__", meta);

	for (int p = 0; p < nparts; p++) {
		for (int i = 0; i < m->n_tensors; i++) {
			const struct tensor_info *t = &m->tensors[i];
			json_t	*shape = json_array(), *tj = json_object();
			char	 name[80];

			for (int d = 0; d < t->ndim; d++)
				json_array_append_new(shape, json_integer(t->shape[d]));
			json_object_set_new(tj, "dtype", json_string("F32"));
			json_object_set_new(tj, "shape", shape);
			json_object_set_new(tj, "data_offsets", json_pack("[I,I]",
			    (json_int_t)off, (json_int_t)(off + t->numel * 4)));
			off += t->numel * 4;
			snprintf(name, sizeof name, "%s%s", parts[p].prefix, t->name);
			json_object_set_new(root, name, tj);
		}
	}
	for (int i = 0; i < cm->nblobs; i++) {
		char	 name[80];

		snprintf(name, sizeof name, "extra.%s", cm->blobs[i].name);
		json_object_set_new(root, name, json_pack("{s:s, s:[I], s:[I,I]}",
		    "dtype", "U8", "shape", (json_int_t)cm->blobs[i].len,
		    "data_offsets", (json_int_t)off,
		    (json_int_t)(off + cm->blobs[i].len)));
		off += cm->blobs[i].len;
	}
	text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	len = strlen(text);
	*hlen = (len + 7) & ~(size_t)7;
	padded = xmalloc(*hlen);
	memcpy(padded, text, len);
	memset(padded + len, ' ', *hlen - len);
	free(text);
	return padded;
}

static int
write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
ckpt_name_step(const char *name, long *step)
{
	char	 tail[32];

	if (sscanf(name, "step-%ld.safetenso%31s", step, tail) != 2)
		return -1;
	return strcmp(tail, "rs") == 0 ? 0 : -1;
}

static int
cmp_long_desc(const void *a, const void *b)
{
	long	 x = *(const long *)a, y = *(const long *)b;

	return (x < y) - (x > y);
}

/* The steps of dir's checkpoints, newest first.  Returns the count. */
static int
ckpt_list(const char *dir, long **steps)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;
	long		 step;

	*steps = NULL;
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (ckpt_name_step(de->d_name, &step) != 0)
			continue;
		*steps = xreallocarray(*steps, (size_t)n + 1, sizeof **steps);
		(*steps)[n++] = step;
	}
	closedir(d);
	if (n > 1)
		qsort(*steps, (size_t)n, sizeof **steps, cmp_long_desc);
	return n;
}

static void
ckpt_prune(const char *dir, int keep)
{
	long	*steps;
	int	 n = ckpt_list(dir, &steps);
	char	 path[4096];

	for (int i = keep; i < n; i++) {
		snprintf(path, sizeof path, "%s/step-%09ld.safetensors", dir,
		    steps[i]);
		unlink(path);
	}
	free(steps);
}

int
checkpoint_write(const char *dir, int keep, const struct model *m,
    const struct optimizer *o, const struct ckpt_meta *cm, char *path,
    size_t pathlen, char *err, size_t errlen)
{
	struct ckpt_part parts[3];
	int		 nparts = ckpt_parts(m, o, parts), fd, dfd;
	size_t		 hlen;
	char		*header, tmp[4096];
	uint8_t		 lenbuf[8];

	if (mkdir_p(dir, 0700) != 0) {
		snprintf(err, errlen, "checkpoint dir %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, pathlen, "%s/step-%09ld.safetensors", dir, cm->step);
	snprintf(tmp, sizeof tmp, "%s/.step-%09ld.safetensors.tmp", dir, cm->step);
	header = ckpt_header(m, o, cm, parts, nparts, &hlen);
	for (int i = 0; i < 8; i++)
		lenbuf[i] = (uint8_t)((uint64_t)hlen >> (8 * i));

	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		goto fail;
	if (write_all(fd, lenbuf, 8) != 0 || write_all(fd, header, hlen) != 0)
		goto fail_fd;
	for (int i = 0; i < nparts; i++) {
		if (write_all(fd, parts[i].data, m->n_params * sizeof(float)) != 0)
			goto fail_fd;
	}
	for (int i = 0; i < cm->nblobs; i++) {
		if (write_all(fd, cm->blobs[i].data, cm->blobs[i].len) != 0)
			goto fail_fd;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) != 0)
		goto fail;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(header);
	ckpt_prune(dir, keep);
	return 0;

fail_fd:
	close(fd);
fail:
	snprintf(err, errlen, "writing checkpoint %s: %s (the previous "
	    "checkpoints are intact)", path, strerror(errno));
	unlink(tmp);
	free(header);
	return -1;
}

/* Read a whole file; NULL with err set on failure. */
static uint8_t *
read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	struct stat	 st;
	uint8_t		*buf;
	int		 fd;
	size_t		 got = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: short read", path);
			free(buf);
			close(fd);
			return NULL;
		}
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
}

static const char *
meta_get(json_t *meta, const char *key)
{
	const char	*s = json_string_value(json_object_get(meta, key));

	return s != NULL ? s : "";
}

/* Check one tensor's header entry against what the model expects. */
static int
ckpt_check_tensor(json_t *root, const char *name, const struct tensor_info *t,
    size_t off, char *err, size_t errlen)
{
	json_t		*tj = json_object_get(root, name), *shape, *offs;
	const char	*dtype;

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
	if (!json_is_array(shape) || json_array_size(shape) != (size_t)t->ndim) {
		snprintf(err, errlen, "tensor %s: wrong shape rank", name);
		return -1;
	}
	for (int d = 0; d < t->ndim; d++) {
		if (json_integer_value(json_array_get(shape, (size_t)d)) != t->shape[d]) {
			snprintf(err, errlen, "tensor %s: shape differs from "
			    "the model's in dimension %d", name, d);
			return -1;
		}
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
 * (from `start`) with no gap or overlap; *total is their length.
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
		    strlen(key + 6) >= sizeof bl->name || *n >= 1024) {
			snprintf(why, whylen, "tensor %s is not a U8 blob", key);
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

int
checkpoint_load(const char *path, struct model *m, struct optimizer *o,
    struct ckpt_meta *cm, char *err, size_t errlen)
{
	struct ckpt_part parts[3];
	int		 nparts = ckpt_parts(m, o, parts);
	size_t		 len, hlen = 0, dlen = (size_t)nparts * m->n_params * 4;
	size_t		 off = 0;
	uint8_t		*buf;
	json_t		*root = NULL, *meta;
	json_error_t	 jerr;
	char		 why[256], crc[16];
	const float	*data;
	struct ckpt_part file_parts[3];
	struct ckpt_blob *blobs = NULL;
	int		 nblobs = 0;
	size_t		 blen = 0;

	if ((buf = read_file(path, &len, err, errlen)) == NULL)
		return -1;
	for (int i = 7; i >= 0 && len >= 8; i--)
		hlen = hlen << 8 | buf[i];
	if (len < 8 || hlen > CKPT_MAX_HEADER || 8 + hlen > len) {
		snprintf(why, sizeof why, "truncated or bad header length");
		goto bad;
	}
	if ((root = json_loadb((const char *)buf + 8, hlen, 0, &jerr)) == NULL) {
		snprintf(why, sizeof why, "header is not JSON: %s", jerr.text);
		goto bad;
	}
	meta = json_object_get(root, "__metadata__");
	if (strcmp(meta_get(meta, "format"), CKPT_FORMAT) != 0) {
		snprintf(why, sizeof why, "not a hunter checkpoint (format '%s')",
		    meta_get(meta, "format"));
		goto bad;
	}
	if (strcmp(meta_get(meta, "optimizer"), spec_optim_name(o->type)) != 0 ||
	    strcmp(meta_get(meta, "model"), m->type->name) != 0) {
		snprintf(why, sizeof why, "written for model %s with %s, not "
		    "%s with %s", meta_get(meta, "model"),
		    meta_get(meta, "optimizer"), m->type->name,
		    spec_optim_name(o->type));
		goto bad;
	}
	for (int p = 0; p < nparts; p++) {
		for (int i = 0; i < m->n_tensors; i++) {
			char name[80];

			snprintf(name, sizeof name, "%s%s", parts[p].prefix,
			    m->tensors[i].name);
			if (ckpt_check_tensor(root, name, &m->tensors[i], off,
			    why, sizeof why) != 0)
				goto bad;
			off += m->tensors[i].numel * 4;
		}
	}
	if (ckpt_find_blobs(root, dlen, &blobs, &nblobs, &blen, why,
	    sizeof why) != 0)
		goto bad;
	if (len - 8 - hlen != dlen + blen) {
		snprintf(why, sizeof why, "data is %zu bytes, expected %zu",
		    len - 8 - hlen, dlen + blen);
		goto bad;
	}
	data = (const float *)(buf + 8 + hlen);
	for (int p = 0; p < nparts; p++)
		file_parts[p] = (struct ckpt_part){ "", (float *)data + (size_t)p * m->n_params };
	for (int i = 0; i < nblobs; i++)
		blobs[i].data = buf + 8 + hlen + (size_t)blobs[i].data;
	snprintf(crc, sizeof crc, "%08x", ckpt_crc(file_parts, nparts,
	    m->n_params, blobs, nblobs));
	if (strcmp(crc, meta_get(meta, "crc32")) != 0) {
		snprintf(why, sizeof why, "content hash mismatch (crc32 %s, "
		    "header says %s)", crc, meta_get(meta, "crc32"));
		goto bad;
	}

	memset(cm, 0, sizeof *cm);
	snprintf(cm->job, sizeof cm->job, "%s", meta_get(meta, "job"));
	cm->step = strtol(meta_get(meta, "step"), NULL, 10);
	cm->epoch = (int)strtol(meta_get(meta, "epoch"), NULL, 10);
	cm->step_in_epoch = strtol(meta_get(meta, "step_in_epoch"), NULL, 10);
	cm->seed = strtoull(meta_get(meta, "seed"), NULL, 10);
	cm->world = (int)strtol(meta_get(meta, "world"), NULL, 10);
	cm->micro = (int)strtol(meta_get(meta, "micro"), NULL, 10);
	cm->accum = (int)strtol(meta_get(meta, "accum"), NULL, 10);
	o->t = strtol(meta_get(meta, "adam_t"), NULL, 10);
	for (int p = 0; p < nparts; p++)
		memcpy(parts[p].data, file_parts[p].data, m->n_params * 4);
	for (int i = 0; i < nblobs; i++) {
		uint8_t *copy = xmalloc(blobs[i].len ? blobs[i].len : 1);

		memcpy(copy, blobs[i].data, blobs[i].len);
		blobs[i].data = copy;
	}
	cm->blobs = blobs;
	cm->nblobs = nblobs;
	json_decref(root);
	free(buf);
	return 0;
bad:
	snprintf(err, errlen, "%s: %s", path, why);
	free(blobs);
	json_decref(root);
	free(buf);
	return -1;
}

int
checkpoint_resume(const char *dir, struct model *m, struct optimizer *o,
    struct ckpt_meta *cm, char *path, size_t pathlen,
    void (*skipped)(void *, const char *, const char *), void *ctx,
    char *err, size_t errlen)
{
	long	*steps;
	int	 n = ckpt_list(dir, &steps), rc = 1;
	char	 why[512];

	for (int i = 0; i < n; i++) {
		snprintf(path, pathlen, "%s/step-%09ld.safetensors", dir, steps[i]);
		if (checkpoint_load(path, m, o, cm, why, sizeof why) == 0) {
			rc = 0;
			break;
		}
		if (skipped != NULL)
			skipped(ctx, path, why);
	}
	if (rc == 1 && n > 0) {
		snprintf(err, errlen, "no valid checkpoint among %d in %s", n, dir);
		rc = -1;
	}
	free(steps);
	return rc;
}
