/*
 * fuzz-idx.c: libFuzzer target for the idx loader (data_load_idx), which
 * reads an image file and a label file by path, gzipped or raw.  Input:
 *
 *   byte 0      flags: bit 0 gzips the images part, bit 1 the labels part
 *               (so the fuzzer reaches the checks behind a valid gzip
 *               stream; raw bytes that start with 1f 8b already exercise
 *               zlib on a broken one)
 *   bytes 1-2   big-endian split: how many of the following bytes are
 *               the images file (clipped to what there is)
 *   the rest    images file, then labels file
 *
 * Each part is written to a memfd and handed over as /proc/self/fd/N.
 * Beyond "no crash, no leak, no huge allocation" it checks data.h's
 * contract: -1 with a message, or 0 with a consistent data set.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/fuzz/target-util.h"
#include "backend/worker/data.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Write data to f, through gzip when gz is set. */
static void
fuzz_idx_put(struct fuzz_file *f, int gz, const uint8_t *data, size_t len)
{
	gzFile	 z;
	int	 fd;

	if (!gz) {
		fuzz_file_put(f, data, len);
		return;
	}
	fuzz_file_put(f, "", 0);
	if ((fd = dup(f->fd)) < 0 || lseek(fd, 0, SEEK_SET) != 0 ||
	    (z = gzdopen(fd, "wb1")) == NULL)
		abort();
	if (len > 0 && gzwrite(z, data, (unsigned)len) != (int)len)
		abort();
	if (gzclose(z) != Z_OK)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_file	 images, labels;
	static int		 opened;
	struct dataset		 ds;
	char			 err[512];
	size_t			 split;
	int			 flags, rc;

	if (size < 3)
		return 0;
	if (!opened) {
		fuzz_file_open(&images, "idx-images");
		fuzz_file_open(&labels, "idx-labels");
		opened = 1;
	}
	flags = data[0];
	split = (size_t)data[1] << 8 | data[2];
	data += 3;
	size -= 3;
	if (split > size)
		split = size;
	fuzz_idx_put(&images, flags & 1, data, split);
	fuzz_idx_put(&labels, flags & 2, data + split, size - split);

	err[0] = '\0';
	rc = data_load_idx(images.path, labels.path, &ds, err, sizeof err);
	fuzz_debug(rc == 0, err);
	if (rc == -1) {
		if (err[0] == '\0' || ds.x != NULL || ds.y != NULL)
			__builtin_trap();
		return 0;
	}
	if (rc != 0 || ds.n <= 0 || ds.rows <= 0 || ds.cols <= 0 ||
	    ds.x == NULL || ds.y == NULL)
		__builtin_trap();
	/* Every pixel of every image is read (MSan/ASan see it), every
	 * label is a class. */
	for (int i = 0; i < ds.n; i++) {
		if (ds.y[i] > 9)
			__builtin_trap();
	}
	for (size_t i = 0; i < (size_t)ds.n * ds.rows * ds.cols; i++) {
		if (!isfinite(ds.x[i]))
			__builtin_trap();
	}
	data_free(&ds);
	return 0;
}
