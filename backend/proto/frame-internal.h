/*
 * frame-internal.h: the one write that every sender of frames uses
 * (frame-send.c), shared with the links' queues (frame-queue.c).  Not
 * for other modules.
 */
#ifndef HUNTER_FRAME_INTERNAL_H
#define HUNTER_FRAME_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

/* Write what fd takes now, never blocking on a socket and never raising
 * SIGPIPE.  *is_socket is -1 until the first call finds out.  The bytes
 * written, or -1 with errno (EAGAIN: the fd is full). */
ssize_t	frame_write_some(int fd, const void *p, size_t n, int *is_socket);
/* Wait until fd can take more, until deadline (CLOCK_MONOTONIC seconds;
 * negative: no deadline).  0, or -1 with errno (ETIMEDOUT). */
int	frame_wait_writable(int fd, double deadline);

#endif
