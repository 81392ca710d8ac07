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
 * agent can route it.
 *
 * Every request lives in a scope: the run and generation that its agent
 * tagged it with (the backend names it, "RUN.gN"; workers only prefix
 * their keys with the job).  A scope's keys are seen by no other, so a
 * job name run again never finds the last run's peer addresses, and a
 * scope is dropped, keys and parked gets, when its generation ends.  A
 * scope holds at most STORE_SCOPE_KEYS keys of STORE_SCOPE_BYTES in all
 * and STORE_SCOPE_PARKED parked gets; a get waits STORE_MAX_TIMEOUT_MS at
 * most.  What is over a bound is answered with an error that says so.
 */
#ifndef HUNTER_STORE_H
#define HUNTER_STORE_H

#include <jansson.h>

#define STORE_MAX_KEY		512	/* bytes of a key */
/* A rendezvous needs a few keys a rank and one blob a rank of its pair
 * addresses; these are far beyond a 4096-rank job and far below what
 * would hurt the backend. */
#define STORE_SCOPE_KEYS	(1 << 16)
#define STORE_SCOPE_BYTES	(64u << 20)
#define STORE_SCOPE_PARKED	8192
#define STORE_MAX_TIMEOUT_MS	600000	/* 10 min: beyond any heartbeat */

/* Deliver reply (owned by the callee) to the link it came from. */
typedef void (*store_reply_fn)(void *ctx, int link, json_t *reply);

struct store;

struct store	*store_create(store_reply_fn, void *ctx);
void		 store_free(struct store *);
/* Handle one request from link in scope; now is CLOCK_MONOTONIC seconds. */
void		 store_handle(struct store *, int link, const char *scope,
		    const json_t *req, double now);
/* Answer req with an error without looking at the store (a request of
 * no live run). */
void		 store_refuse(struct store *, int link, const json_t *req,
		    const char *reason);
/* Answer parked gets whose time is up. */
void		 store_tick(struct store *, double now);
/* Forget the parked gets of a closed link. */
void		 store_drop_link(struct store *, int link);
/* Forget the parked gets of rank in scope: it is dead. */
void		 store_drop_rank(struct store *, const char *scope, int rank);
/* Forget a scope: its keys and its parked gets, unanswered. */
void		 store_drop_scope(struct store *, const char *scope);
/* Keys held, in all (for tests and the status screen). */
size_t		 store_size(const struct store *);
/* Parked gets, in all. */
size_t		 store_parked(const struct store *);

#endif
