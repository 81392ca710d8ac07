/*
 * proto.h: frames (docs/architecture.md, "Frames").  A frame is a big-endian u32
 * length, at most PROTO_MAX_FRAME, followed by that many bytes holding one
 * JSON object with a string field "t", its type.  The same frames run on
 * every link: backend <-> agent (unix socket or SSH channel), agent <->
 * worker (socketpair), hunter ctl <-> console.sock.
 *
 * The decoder trusts nothing: a length over the limit is refused before
 * anything is allocated, and bad JSON or a missing or non-string "t"
 * closes the link with a message.
 */
#ifndef HUNTER_PROTO_H
#define HUNTER_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define PROTO_VERSION	1
#define PROTO_MAX_FRAME	(1u << 20)
/* The most a reader ever buffers: one largest frame and its header. */
#define PROTO_READER_LIMIT	(4 + (size_t)PROTO_MAX_FRAME)

/* Message types ("t"), for the senders; receivers use enum proto_kind. */
#define MSG_HELLO	"hello"		/* proto, versions, role, node */
#define MSG_METRICS	"metrics"	/* node or rank metrics (metrics.h) */
#define MSG_LOG		"log"		/* rank, line */
#define MSG_EVENT	"event"		/* job, kind, rank, node, reason */
#define MSG_EPOCH	"epoch"		/* docs/architecture.md, "Frames" */
#define MSG_SUMMARY	"summary"	/* docs/architecture.md, "Frames" */
#define MSG_EVAL	"eval"		/* job, step, val_loss or test_acc */
#define MSG_STORE	"store"		/* op: set|get|wait|value|error */
#define MSG_CMD		"cmd"		/* cmd: launch|stop|pause|... */
#define MSG_EXIT	"exit"		/* rank, pid, status or signal */
#define MSG_ERROR	"error"		/* reason */
#define MSG_STEP	"step"		/* job, step, loss (--trace-steps) */
#define MSG_AUTOTUNE	"autotune"	/* job, micro_batch, accum, trials */
#define MSG_OK		"ok"		/* console.sock's answer: reason */
/* Journal records (journal.h) share the key. */
#define MSG_JOB		"job"		/* a launch: job, yaml, placement */
#define MSG_JOB_END	"job_end"	/* job, state */
#define MSG_DECISION	"decision"	/* job, kind, reason, generation */

/*
 * Every type, for a receiver's switch.  proto_kind() looks the type up in
 * the table of types (kind.c), which lists each one's required fields and
 * their JSON types: a frame of a known type that lacks one, or has one of
 * the wrong type, is PK_INVALID, with a message that names the type and
 * the field.  A new type is one line there and one here.
 */
enum proto_kind {
	PK_UNKNOWN,	/* a type not in the table: ignore it, with a word */
	PK_INVALID,	/* a known type, malformed: refuse it */
	PK_HELLO, PK_METRICS, PK_LOG, PK_EVENT, PK_EPOCH, PK_SUMMARY,
	PK_STORE, PK_CMD, PK_EXIT, PK_ERROR, PK_STEP, PK_AUTOTUNE, PK_OK,
	PK_JOB, PK_JOB_END, PK_DECISION, PK_EVAL,
	PK_COUNT
};

/*
 * The commands that travel with a sequence number ("seq", enum job_cmd's
 * order): the count of that command the job's current generation was
 * sent.  A rank acts on each count once however often, or late, it hears
 * it; an agent keeps the highest it forwarded to each rank and reports
 * it in its hello ("seq" of each worker), so that a backend that
 * re-attaches counts on from there.
 */
#define PROTO_SEQ_CMDS	4
extern const char *const proto_seq_cmd_names[PROTO_SEQ_CMDS];
/* The index of a sequenced command's name, or -1. */
int		 proto_seq_cmd(const char *name);

/* The kind of msg; err (may be NULL) says why it is PK_INVALID. */
enum proto_kind proto_kind(const json_t *msg, char *err, size_t errlen);
/* The fields of a command (a "cmd" frame, or one a front end posts
 * without "t"): "cmd" a string and what that command needs (a job's
 * command its "job" as a string; launch, kill and migrate a rank that
 * is an integer 0..INT_MAX, migrate a node; submit a file).  An unknown
 * command passes, for its receiver to refuse by name.  0, or -1 with
 * err naming the command and the field. */
int		 proto_cmd_check(const json_t *cmd, char *err, size_t errlen);
/* The type name of a kind ("store"); NULL for PK_UNKNOWN and PK_INVALID. */
const char	*proto_kind_name(enum proto_kind);
/* The kind of a type name, without looking at any field; PK_UNKNOWN. */
enum proto_kind	 proto_kind_named(const char *t);
/* Whether a slow reader may lose frames of this kind (metrics, log, step:
 * the table in kind.c).  Never an unknown one. */
bool		 proto_kind_droppable(enum proto_kind);

/* An incremental decoder: feed it whatever read() returned, then take
 * complete frames out.  It never holds more than PROTO_READER_LIMIT bytes.
 * A zeroed struct is a valid empty reader. */
struct proto_reader {
	uint8_t	*buf;
	size_t	 len, cap;
	char	 err[256];	/* set when the link must close */
	size_t	 off;		/* start of the bytes not yet taken */
	json_t	*pending;	/* frames decoded early to make room */
};

void	proto_reader_init(struct proto_reader *);
void	proto_reader_free(struct proto_reader *);
/* Append bytes.  Returns 0, or -1 (with r->err) when the stream is
 * already known to be bad (an oversized length). */
int	proto_reader_feed(struct proto_reader *, const void *, size_t);
/*
 * Take the next complete frame.  Returns 1 with *msg set (caller
 * json_decref's it), 0 when more bytes are needed, -1 (with r->err) on a
 * malformed frame: the link must then be closed.
 */
int	proto_reader_next(struct proto_reader *, json_t **msg);
/* Read from fd into the reader.  Returns bytes read, 0 at EOF, -1 on an
 * error (errno, and r->err set).  Bad bytes read are reported by proto_reader_next, after the good frames
 * before them; EAGAIN leaves r->err empty; EOF inside a frame sets r->err
 * ("link closed 12 bytes into a 300-byte frame") and still returns 0. */
ssize_t	proto_reader_fill(struct proto_reader *, int fd);

/* Encode msg into a newly allocated frame; NULL (with err, which may be
 * NULL) when the JSON is over PROTO_MAX_FRAME, or when the peer would
 * refuse it: not an object, no string "t", a NUL inside a string. */
uint8_t	*proto_encode(const json_t *msg, size_t *len, char *err, size_t errlen);
/* Encode and write the whole frame, for a one-shot client (hunter ctl, a
 * takeover's detach): waits for the fd at most PROTO_SEND_TIMEOUT_MS.
 * 0 or -1 (errno; EINVAL when proto_encode refuses msg, ETIMEDOUT).
 * Never raises SIGPIPE.  A link that lives on uses a proto_queue. */
#define PROTO_SEND_TIMEOUT_MS	10000
int	proto_send(int fd, const json_t *msg);
/* The same, taking ownership of msg (json_decref'd). */
int	proto_send_new(int fd, json_t *msg);

/*
 * json_pack with a message: jansson refuses a NULL or non-UTF-8 string
 * (text cut mid-character, a file name, a remote's stderr), and a NULL
 * must never be sent, journalled or shown.  Returns the value, or NULL
 * with err saying what could not be encoded.  Text from outside is best
 * made valid first (lib/utf8.h).
 */
json_t	*proto_pack(char *err, size_t errlen, const char *fmt, ...);

/*
 * A link's outgoing side (frame-queue.c).  Every process sends its
 * frames through one, so that no sender ever blocks on a slow reader: a
 * frame goes out at once as far as the fd takes it, and the rest waits
 * here until the owner's event loop sees the fd writable (poll for
 * proto_queue_events(), or proto_queue_want()) and calls
 * proto_queue_flush().
 *
 * Once `bound` bytes wait, a frame of a droppable kind (metrics, log,
 * step) is dropped and counted by kind; any other kind always waits, up
 * to PROTO_QUEUE_HARD bytes: a reader that far behind has stopped, and
 * the link is failed (ENOBUFS) rather than hold the sender's memory.
 * proto_queue_drop_event() reports the drops once the reader caught up.
 *
 * Not locked: one thread at a time (the worker holds its send lock).
 * A zeroed struct with fd -1 is a queue of no link: sends fail.
 */
/* Some 8 s of a busy node (20 log lines a rank a second, metrics). */
#define PROTO_QUEUE_BOUND	(128u << 10)
#define PROTO_QUEUE_HARD	(64u << 20)

struct proto_queue {
	int		 fd;
	uint8_t		*buf;
	size_t		 off, len, cap;	/* waiting: buf[off..len) */
	size_t		 bound;
	int		 err;		/* errno once the link failed; 0 */
	int		 is_socket;	/* -1 until the first write says */
	/* Dropped since the last report: frames by kind, and bytes. */
	uint64_t	 dropped[PK_COUNT];
	uint64_t	 dropped_bytes;
};

/* Start a queue on fd, which becomes non-blocking (its readers must take
 * EAGAIN); bound 0 means PROTO_QUEUE_BOUND. */
void	proto_queue_init(struct proto_queue *, int fd, size_t bound);
/* Forget what waits (the fd is the caller's to close); q is then a
 * queue of no link. */
void	proto_queue_free(struct proto_queue *);
/* Queue msg and write what the fd takes now.  0 when sent or waiting,
 * 1 when dropped (counted), -1 with errno: EINVAL when proto_encode
 * refuses msg (the link is still good), else the link has failed and
 * q->err says why (every later send fails at once). */
int	proto_queue_send(struct proto_queue *, const json_t *msg);
/* The same, taking ownership of msg (json_decref'd). */
int	proto_queue_send_new(struct proto_queue *, json_t *msg);
/* Write what the fd takes now.  0, or -1 when the link failed (q->err). */
int	proto_queue_flush(struct proto_queue *);
/* Flush, waiting for the fd up to timeout_ms (-1: as long as the link
 * lives), for the last frames of a process.  0 once nothing waits, -1
 * (errno; ETIMEDOUT) otherwise. */
int	proto_queue_drain(struct proto_queue *, int timeout_ms);
/* Bytes waiting. */
size_t	proto_queue_waiting(const struct proto_queue *);
/* POLLOUT while bytes wait, for the owner's poll(). */
short	proto_queue_events(const struct proto_queue *);
/* POLLIN, and POLLOUT while bytes wait in the queue q: the events of a
 * link in an event loop (an evloop_want_cb, lib/evloop.h). */
short	proto_queue_want(void *q);
/* When frames were dropped and the reader has caught up (less than a
 * quarter of the bound waits), an event frame saying so ("kind":
 * "dropped", "link", "reason" naming link, "dropped": {KIND: count}),
 * for the caller to tag (node, job, rank) and send; the counts start
 * again.  NULL otherwise. */
json_t	*proto_queue_drop_event(struct proto_queue *, const char *link);

/* The type of a decoded message, as it came ("" never happens: the
 * decoder rejects messages without one). */
const char *proto_type(const json_t *msg);

/* A hello message for this process: protocol version and the versions of
 * docs/architecture.md ("Frames"), plus role ("backend", "agent", "worker", "ctl")
 * and node name (may be NULL). */
json_t	*proto_hello(const char *role, const char *node);

/* Base64 for store values (Gloo's rendezvous blobs are binary). */
char	*proto_b64_encode(const void *, size_t);
/* Returns a malloc'd buffer and its length, or NULL on bad input. */
void	*proto_b64_decode(const char *, size_t *len);

#endif
