/*
 * checkpoint-file.c: the checkpoint file's format and its writer (the
 * reader is checkpoint-read.c, the directory checkpoint.c).
 *
 * Layout of the data section: the parameter tensors in model order, then
 * optim.m.* and optim.v.* in the same order, each float32 little-endian,
 * then the "extra." U8 blobs.  The header is padded with spaces to a
 * multiple of 8 bytes, as the safetensors format allows, so the tensors
 * start aligned.  The metadata's crc32 is the CRC-32 of the whole file
 * with its own eight digits read as "00000000", so an edited header is
 * as corrupt as an edited tensor; the writer puts those zeros in, hashes
 * and then writes the digits over them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "lib/xmalloc.h"
#include "backend/worker/checkpoint-internal.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian; this build assumes a little-endian host"
#endif

int
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

long
ckpt_crc_at(const char *h, size_t hlen)
{
	const char	*at, *key = CKPT_CRC_KEY;
	size_t		 kl = strlen(key);

	if ((at = memmem(h, hlen, key, kl)) == NULL ||
	    memmem(at + 1, hlen - (size_t)(at + 1 - h), key, kl) != NULL ||
	    (size_t)(at - h) + kl + 9 > hlen || at[kl + 8] != '"')
		return -1;
	return (long)(at - h) + (long)kl;
}

uint32_t
ckpt_hash(const uint8_t lenbuf[8], const char *h, size_t hlen, size_t at,
    const struct ckpt_part *parts, int nparts, size_t n,
    const struct ckpt_blob *blobs, int nblobs)
{
	uLong	 crc = crc32(0L, Z_NULL, 0);

	crc = crc_bytes(crc, lenbuf, 8);
	crc = crc_bytes(crc, h, at);
	crc = crc_bytes(crc, CKPT_CRC_ZERO, 8);
	crc = crc_bytes(crc, h + at + 8, hlen - at - 8);
	for (int i = 0; i < nparts; i++)
		crc = crc_bytes(crc, parts[i].data, n * sizeof(float));
	for (int i = 0; i < nblobs; i++)
		crc = crc_bytes(crc, blobs[i].data, blobs[i].len);
	return (uint32_t)crc;
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

/* The JSON header text, padded to a multiple of 8 bytes, with the crc32
 * still CKPT_CRC_ZERO. */
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
	meta_set(meta, "skew", "%ld", cm->skew);
	meta_set(meta, "seed", "%" PRIu64, cm->seed);
	meta_set(meta, "world", "%d", cm->world);
	meta_set(meta, "micro", "%d", cm->micro);
	meta_set(meta, "accum", "%d", cm->accum);
	meta_set(meta, "global", "%d", cm->global);
	meta_set(meta, "samples", "%ld", cm->samples);
	meta_set(meta, "adam_t", "%ld", o->t);
	meta_set(meta, "crc32", "%s", CKPT_CRC_ZERO);
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

int
ckpt_file_write(int fd, const struct model *m, const struct optimizer *o,
    const struct ckpt_meta *cm)
{
	struct ckpt_part parts[3];
	int		 nparts = ckpt_parts(m, o, parts), rc = -1;
	size_t		 hlen;
	long		 at;
	char		*header, digits[9];
	uint8_t		 lenbuf[8];

	header = ckpt_header(m, o, cm, parts, nparts, &hlen);
	for (int i = 0; i < 8; i++)
		lenbuf[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
	if ((at = ckpt_crc_at(header, hlen)) < 0) {	/* a job name cannot */
		errno = EINVAL;
		goto out;
	}
	snprintf(digits, sizeof digits, "%08" PRIx32, ckpt_hash(lenbuf,
	    header, hlen, (size_t)at, parts, nparts, m->n_params, cm->blobs,
	    cm->nblobs));
	memcpy(header + at, digits, 8);
	if (write_all(fd, lenbuf, 8) != 0 || write_all(fd, header, hlen) != 0)
		goto out;
	for (int i = 0; i < nparts; i++) {
		if (write_all(fd, parts[i].data, m->n_params * sizeof(float)) != 0)
			goto out;
	}
	for (int i = 0; i < cm->nblobs; i++) {
		if (write_all(fd, cm->blobs[i].data, cm->blobs[i].len) != 0)
			goto out;
	}
	rc = 0;
out:
	free(header);
	return rc;
}
