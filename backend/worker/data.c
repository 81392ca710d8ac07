/*
 * data.c: idx files (the MNIST family's format) and the epoch order.
 *
 * An idx file is a big-endian header (magic 0x0000080N, N the number of
 * dimensions, then N u32 sizes) followed by unsigned bytes.  zlib's gzread
 * reads gzipped and raw files alike.  Every size in the header is checked
 * before anything is allocated, and the body is read in chunks straight
 * into the floats, so neither a hostile header nor a small gzip that
 * inflates to a great deal can make a rank allocate more than 1 GiB.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/files.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "backend/worker/data.h"

#define IDX_MAX_SAMPLES	(1 << 24)
#define IDX_MAX_SIDE	1024
/*
 * What one rank may allocate for the images, as the floats it trains on
 * (4 bytes a pixel; Fashion-MNIST's training set takes 188 MB).  The cap
 * is on the allocation, not on the bytes read: a gzip of 1 MB inflates to
 * 1 GiB of pixels, 4 GiB of floats.
 */
#define IDX_MAX_FLOAT_BYTES	((size_t)1 << 30)
/* Bytes read per gzread, and the elements allocated before the data
 * shows it is there, then grown eightfold as it comes (fewer copies than
 * doubling): a header that claims more than the file holds costs at most
 * eight times what the file holds. */
#define IDX_CHUNK	65536
#define IDX_FIRST_ELEMS	((size_t)1 << 20)
/* Fashion-MNIST's training-set mean and standard deviation. */
#define FMNIST_MEAN	0.2860f
#define FMNIST_STD	0.3530f

struct idx {
	int	 ndim;
	uint32_t dims[3];
	size_t	 len;		/* elements: the product of dims */
	void	*data;		/* len bytes, or len floats (normalised) */
};

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* Read and check the header of an idx file of ndim dimensions whose body
 * becomes elements of esize bytes. */
static int
idx_header(gzFile f, const char *path, int ndim, size_t esize,
    struct idx *idx, char *err, size_t errlen)
{
	uint8_t	 hdr[16];
	size_t	 hlen = 4 + 4 * (size_t)ndim, len = 1;
	int	 n;

	n = gzread(f, hdr, (unsigned)hlen);
	if (n < 0 || (size_t)n < hlen) {
		snprintf(err, errlen, "%s: truncated idx header (%d of %zu bytes)",
		    path, n < 0 ? 0 : n, hlen);
		return -1;
	}
	if (hdr[0] != 0 || hdr[1] != 0 || hdr[2] != 0x08 || hdr[3] != ndim) {
		snprintf(err, errlen, "%s: bad idx magic 0x%08x (expected 0x%08x: "
		    "unsigned bytes, %d dimensions)", path, be32(hdr),
		    0x800 + ndim, ndim);
		return -1;
	}
	for (int i = 0; i < ndim; i++) {
		idx->dims[i] = be32(hdr + 4 + 4 * i);
		if (idx->dims[i] == 0 || idx->dims[i] >
		    (i == 0 ? IDX_MAX_SAMPLES : IDX_MAX_SIDE)) {
			snprintf(err, errlen, "%s: implausible size %u in "
			    "dimension %d", path, idx->dims[i], i);
			return -1;
		}
		len *= idx->dims[i];
		if (len > IDX_MAX_FLOAT_BYTES / esize) {
			snprintf(err, errlen, "%s: the header's sizes ask for "
			    "more than %zu bytes%s", path, IDX_MAX_FLOAT_BYTES,
			    esize == 1 ? "" : " as floats");
			return -1;
		}
	}
	idx->ndim = ndim;
	idx->len = len;
	return 0;
}

/* Store n bytes read at element off of idx->data, growing it up to
 * idx->len elements of esize bytes. */
static void
idx_store(struct idx *idx, size_t esize, size_t *cap, size_t off,
    const uint8_t *buf, size_t n)
{
	float	*x;
	void	*grown;
	size_t	 want;

	if (off + n > *cap) {
		for (want = *cap ? *cap : IDX_FIRST_ELEMS; want < off + n;)
			want *= 8;
		if (want > idx->len)
			want = idx->len;
		grown = xmalloc_aligned(want * esize);
		if (off > 0)
			memcpy(grown, idx->data, off * esize);
		free(idx->data);
		idx->data = grown;
		*cap = want;
	}
	if (esize == 1) {
		memcpy((uint8_t *)idx->data + off, buf, n);
		return;
	}
	x = (float *)idx->data + off;
	for (size_t i = 0; i < n; i++)
		x[i] = (buf[i] / 255.0f - FMNIST_MEAN) / FMNIST_STD;
}

/* Read one idx file of ndim dimensions into idx: its bytes as they are
 * (esize 1) or as normalised floats (esize 4). */
static int
idx_read(const char *path, int ndim, size_t esize, struct idx *idx,
    char *err, size_t errlen)
{
	gzFile	 f;
	uint8_t	*buf;
	size_t	 got = 0, cap = 0, want;
	int	 n, zerr, fd;
	char	 extra;

	memset(idx, 0, sizeof *idx);
	/* A FIFO is refused at once, not waited on. */
	if ((fd = file_open_regular(path, 0, err, errlen)) < 0)
		return -1;
	if ((f = gzdopen(fd, "rb")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
		close(fd);
		return -1;
	}
	if (idx_header(f, path, ndim, esize, idx, err, errlen) != 0) {
		gzclose(f);
		return -1;
	}
	buf = xmalloc(IDX_CHUNK);
	while (got < idx->len) {
		want = idx->len - got < IDX_CHUNK ? idx->len - got : IDX_CHUNK;
		if ((n = gzread(f, buf, (unsigned)want)) < 0) {
			snprintf(err, errlen, "%s: %s", path, gzerror(f, &zerr));
			goto fail;
		}
		if (n == 0) {
			snprintf(err, errlen, "%s: truncated: expected %zu bytes "
			    "of data after the header, got %zu", path, idx->len,
			    got);
			goto fail;
		}
		idx_store(idx, esize, &cap, got, buf, (size_t)n);
		got += (size_t)n;
	}
	if (gzread(f, &extra, 1) != 0) {
		snprintf(err, errlen, "%s: unexpected bytes after %zu bytes of "
		    "data", path, idx->len);
		goto fail;
	}
	free(buf);
	gzclose(f);
	return 0;
fail:
	free(buf);
	free(idx->data);
	idx->data = NULL;
	gzclose(f);
	return -1;
}

int
data_load_idx(const char *images, const char *labels, struct dataset *ds,
    char *err, size_t errlen)
{
	struct idx	 xi, yi;
	const uint8_t	*y;

	memset(ds, 0, sizeof *ds);
	if (idx_read(images, 3, sizeof(float), &xi, err, errlen) != 0)
		return -1;
	if (idx_read(labels, 1, 1, &yi, err, errlen) != 0) {
		free(xi.data);
		return -1;
	}
	if (xi.dims[0] != yi.dims[0]) {
		snprintf(err, errlen, "%s has %u images but %s has %u labels",
		    images, xi.dims[0], labels, yi.dims[0]);
		goto fail;
	}
	y = yi.data;
	for (size_t i = 0; i < yi.len; i++) {
		if (y[i] > 9) {
			snprintf(err, errlen, "%s: label %u of sample %zu is "
			    "not a class 0..9", labels, y[i], i);
			goto fail;
		}
	}
	ds->n = (int)xi.dims[0];
	ds->rows = (int)xi.dims[1];
	ds->cols = (int)xi.dims[2];
	ds->x = xi.data;
	ds->y = yi.data;
	return 0;
fail:
	free(xi.data);
	free(yi.data);
	return -1;
}

/* Find dir/name.gz or dir/name. */
static void
data_find(char *buf, size_t len, const char *dir, const char *name)
{
	/* Whether it is there, not opened: a FIFO would block an open
	 * (idx_read refuses what is not a regular file). */
	snprintf(buf, len, "%s/%s.gz", dir, name);
	if (access(buf, F_OK) == 0)
		return;
	snprintf(buf, len, "%s/%s", dir, name);
}

int
data_load_fmnist(const char *dir, int train, struct dataset *ds, char *err,
    size_t errlen)
{
	char	 xp[4096], yp[4096];

	if (dir == NULL || *dir == '\0')
		dir = FMNIST_DEFAULT_DIR;
	data_find(xp, sizeof xp, dir, train ? "train-images-idx3-ubyte" :
	    "t10k-images-idx3-ubyte");
	data_find(yp, sizeof yp, dir, train ? "train-labels-idx1-ubyte" :
	    "t10k-labels-idx1-ubyte");
	if (data_load_idx(xp, yp, ds, err, errlen) != 0) {
		if (strcmp(dir, FMNIST_DEFAULT_DIR) == 0 && errno == ENOENT) {
			size_t	 used = strlen(err);
			snprintf(err + used, errlen - used, " (apt-get install "
			    "dataset-fashion-mnist, or set data.path)");
		}
		return -1;
	}
	return 0;
}

int
data_check_fmnist(const char *dir, char *err, size_t errlen)
{
	static const char *const names[] = { "train-images-idx3-ubyte",
	    "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
	    "t10k-labels-idx1-ubyte" };
	char		 path[4096];
	struct idx	 idx;
	gzFile		 f;
	int		 fd, rc;

	if (dir == NULL || *dir == '\0')
		dir = FMNIST_DEFAULT_DIR;
	for (int i = 0; i < 4; i++) {
		data_find(path, sizeof path, dir, names[i]);
		if ((fd = file_open_regular(path, 0, err, errlen)) < 0) {
			if (errno == ENOENT &&
			    strcmp(dir, FMNIST_DEFAULT_DIR) == 0) {
				size_t used = strlen(err);

				snprintf(err + used, errlen - used, " (apt-get "
				    "install dataset-fashion-mnist, or set "
				    "data.path)");
			}
			return -1;
		}
		if ((f = gzdopen(fd, "rb")) == NULL) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		memset(&idx, 0, sizeof idx);
		rc = idx_header(f, path, i % 2 == 0 ? 3 : 1, 1, &idx, err,
		    errlen);
		gzclose(f);
		if (rc != 0)
			return -1;
	}
	return 0;
}

void
data_free(struct dataset *ds)
{
	free(ds->x);
	free(ds->y);
	memset(ds, 0, sizeof *ds);
}

void
data_shard(int global, int world, int rank, int accum, int micro_step,
    int *offset, int *count)
{
	int	 slices = world * accum;
	int	 slice = rank * accum + micro_step;

	/* Spread any remainder over the first slices, one sample each. */
	*count = global / slices + (slice < global % slices);
	*offset = slice * (global / slices) +
	    (slice < global % slices ? slice : global % slices);
}

long
data_epoch_steps(long n, int global, long skew)
{
	return global > 0 && n > skew ? (n - skew) / global : 0;
}

void
data_resume_pos(long n, int global, int epoch, long seen,
    struct data_pos *p)
{
	long	 spe = data_epoch_steps(n, global, 0), left;

	p->epoch = epoch;
	p->step_in_epoch = seen / global;
	p->skew = seen % global;
	if (p->step_in_epoch >= data_epoch_steps(n, global, p->skew)) {
		p->epoch++;
		p->step_in_epoch = p->skew = 0;
	}
	left = data_epoch_steps(n, global, p->skew) - p->step_in_epoch;
	p->step = (p->epoch + 1L) * spe - left;
}

void
data_permutation(uint32_t *perm, int n, uint64_t seed, int epoch)
{
	struct rng	 r;

	rng_seed(&r, seed, 0x10000u + (uint64_t)epoch);
	for (int i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (int i = n - 1; i > 0; i--) {
		uint32_t j = rng_below(&r, (uint32_t)i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}
