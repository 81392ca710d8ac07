/*
 * store.h: the backend's rendezvous key-value store.  Workers reach it
 * through their agent with "store" frames:
 *
 *   {"t":"store","op":"set","key":K,"value":B64}
 *   {"t":"store","op":"get","key":K,"timeout_ms":N,"job":J,"rank":R,"req":I}
 *
 * A get for a key that does not exist yet is parked until a set arrives
 * or its timeout passes; the answer is {"op":"value",...} or
 * {"op":"error","reason":...}, carrying job, rank and req back so the
 * agent can route it.  Keys are opaque: clients scope them by job and
 * group generation.
 */
#ifndef HUNTER_STORE_H
#define HUNTER_STORE_H

#include <jansson.h>

/* Deliver reply (owned by the callee) to the link it came from. */
typedef void (*store_reply_fn)(void *ctx, int link, json_t *reply);

struct store;

struct store	*store_create(store_reply_fn, void *ctx);
void		 store_free(struct store *);
/* Handle one request from link; now is CLOCK_MONOTONIC seconds. */
void		 store_handle(struct store *, int link, const json_t *req,
		    double now);
/* Answer parked gets whose time is up. */
void		 store_tick(struct store *, double now);
/* Forget the parked gets of a closed link. */
void		 store_drop_link(struct store *, int link);
/* Number of keys held (for tests and the status screen). */
size_t		 store_size(const struct store *);

#endif
