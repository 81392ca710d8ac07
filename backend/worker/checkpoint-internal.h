/*
 * checkpoint-internal.h: between the three files of checkpoint.h: the
 * format and its writer (checkpoint-file.c), the reader
 * (checkpoint-read.c), and the directory (checkpoint.c: names, the
 * temporary file, pruning, resume).  Not for other modules.
 */
#ifndef HUNTER_CHECKPOINT_INTERNAL_H
#define HUNTER_CHECKPOINT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "backend/worker/checkpoint.h"

#define CKPT_FORMAT	"hunter/2"
#define CKPT_FORMAT_OLD	"hunter/1"	/* its crc32 left the header out */
#define CKPT_MAX_HEADER	(16u << 20)
#define CKPT_MAX_BLOBS	1024
/* A blob is per-rank state (the compressor's residual and velocity, two
 * copies of the parameters at most, and a small fixed part): never more
 * than the float section, which holds at least two, plus this. */
#define CKPT_BLOB_SLACK	4096
#define CKPT_CRC_KEY	"\"crc32\":\""
#define CKPT_CRC_ZERO	"00000000"

/* The float buffers of a checkpoint, in file order, with their prefixes. */
struct ckpt_part {
	const char	*prefix;
	float		*data;
};

/* The parts of m and o into parts[3]; returns how many. */
int	ckpt_parts(const struct model *, const struct optimizer *,
	    struct ckpt_part *parts);
/* Where the crc32 value's digits are in a header: after the only
 * CKPT_CRC_KEY, eight of them and a quote; -1 when there is no such. */
long	ckpt_crc_at(const char *header, size_t hlen);
/* The file's hash: the length bytes, the header with the digits at `at`
 * read as CKPT_CRC_ZERO, the float parts (n floats each), the blobs. */
uint32_t ckpt_hash(const uint8_t lenbuf[8], const char *header, size_t hlen,
	    size_t at, const struct ckpt_part *parts, int nparts, size_t n,
	    const struct ckpt_blob *blobs, int nblobs);
/* The job named in the header of the checkpoint open on fd.  0, or -1
 * with why (a file too short or not a checkpoint). */
int	ckpt_read_job(int fd, char *job, size_t joblen, char *why,
	    size_t whylen);
/* checkpoint_load of the file open on fd (path names it in err). */
int	ckpt_load_fd(int fd, const char *path, struct model *,
	    struct optimizer *, struct ckpt_meta *, char *err, size_t errlen);
/* Write the whole checkpoint to fd.  0, or -1 with errno set. */
int	ckpt_file_write(int fd, const struct model *, const struct optimizer *,
	    const struct ckpt_meta *);

#endif
