/*
 * store.c: the rendezvous store.  Values live in one jansson object, the
 * key being "SCOPE/KEY" (base64 text, as they arrive); parked gets are a
 * short list, since a rendezvous has at most a few per rank at a time;
 * each scope's counts (keys, bytes, parked gets) are a row of a small
 * table, there being a scope per live generation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/store.h"

/* The default wait when a get names no timeout. */
#define STORE_DEFAULT_TIMEOUT_MS 30000
#define STORE_SCOPE_NAME	64

struct waiter {
	int	 link;
	int	 scope;		/* index into scopes */
	char	*key;		/* "SCOPE/KEY" */
	json_t	*req;		/* the get, kept for its routing fields */
	double	 deadline;
};

struct scope {
	char	 name[STORE_SCOPE_NAME];
	size_t	 keys, bytes, parked;
	int	 used;
};

struct store {
	json_t		*kv;
	struct waiter	*w;
	size_t		 nw, capw;
	struct scope	*sc;
	int		 nsc;
	store_reply_fn	 reply;
	void		*ctx;
};

struct store *
store_create(store_reply_fn reply, void *ctx)
{
	struct store	*s = xcalloc(1, sizeof *s);

	s->kv = json_object();
	s->reply = reply;
	s->ctx = ctx;
	return s;
}

void
store_free(struct store *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nw; i++) {
		json_decref(s->w[i].req);
		free(s->w[i].key);
	}
	free(s->w);
	free(s->sc);
	json_decref(s->kv);
	free(s);
}

/* The row of scope name, made if asked to; -1 when absent. */
static int
store_scope(struct store *s, const char *name, int make)
{
	int	 free_row = -1;

	for (int i = 0; i < s->nsc; i++) {
		if (!s->sc[i].used)
			free_row = free_row < 0 ? i : free_row;
		else if (strcmp(s->sc[i].name, name) == 0)
			return i;
	}
	if (!make)
		return -1;
	if (free_row < 0) {
		s->sc = xreallocarray(s->sc, (size_t)s->nsc + 1, sizeof *s->sc);
		free_row = s->nsc++;
	}
	memset(&s->sc[free_row], 0, sizeof s->sc[free_row]);
	snprintf(s->sc[free_row].name, sizeof s->sc[free_row].name, "%s", name);
	s->sc[free_row].used = 1;
	return free_row;
}

/* An answer to req with its routing fields copied over. */
static json_t *
store_answer(const json_t *req, const char *op)
{
	json_t		*a = json_pack("{s:s, s:s}", "t", MSG_STORE, "op", op);
	const char	*keys[] = { "key", "job", "rank", "req" };

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		json_t *v = json_object_get(req, keys[i]);
		if (v != NULL)
			json_object_set(a, keys[i], v);
	}
	return a;
}

static void
store_error(struct store *s, int link, const json_t *req, const char *reason)
{
	json_t	*a = store_answer(req, "error");

	json_object_set_new(a, "reason", json_string(reason));
	s->reply(s->ctx, link, a);
}

void
store_refuse(struct store *s, int link, const json_t *req, const char *reason)
{
	store_error(s, link, req, reason);
}

static void
store_value(struct store *s, int link, const json_t *req, json_t *value)
{
	json_t	*a = store_answer(req, "value");

	json_object_set(a, "value", value);
	s->reply(s->ctx, link, a);
}

static void
store_remove_waiter(struct store *s, size_t i)
{
	if (s->sc[s->w[i].scope].parked > 0)
		s->sc[s->w[i].scope].parked--;
	json_decref(s->w[i].req);
	free(s->w[i].key);
	s->w[i] = s->w[--s->nw];
}

/* A set: stored within the scope's bounds, and the gets waiting for it
 * answered. */
static void
store_set(struct store *s, int link, int sc, const char *full,
    const json_t *req)
{
	json_t		*value = json_object_get(req, "value"), *old;
	struct scope	*p = &s->sc[sc];
	size_t		 len, was = 0;
	char		 why[160];

	if (!json_is_string(value)) {
		store_error(s, link, req, "store set needs a string value");
		return;
	}
	len = json_string_length(value);
	if ((old = json_object_get(s->kv, full)) != NULL)
		was = json_string_length(old);
	if ((old == NULL && p->keys >= STORE_SCOPE_KEYS) ||
	    p->bytes - was + len > STORE_SCOPE_BYTES) {
		snprintf(why, sizeof why, "store full: a run's generation holds "
		    "at most %d keys and %u MiB", STORE_SCOPE_KEYS,
		    STORE_SCOPE_BYTES >> 20);
		store_error(s, link, req, why);
		return;
	}
	json_object_set(s->kv, full, value);
	p->keys += old == NULL;
	p->bytes = p->bytes - was + len;
	for (size_t i = 0; i < s->nw; i++) {
		if (strcmp(s->w[i].key, full) != 0)
			continue;
		store_value(s, s->w[i].link, s->w[i].req, value);
		store_remove_waiter(s, i--);
	}
}

/* The wait a get asked for, in bounds: a peer's number is not trusted. */
static double
store_timeout_ms(const json_t *req)
{
	json_t	*t = json_object_get(req, "timeout_ms");
	double	 ms = json_is_number(t) ? json_number_value(t) :
	    STORE_DEFAULT_TIMEOUT_MS;

	if (!isfinite(ms) || ms <= 0)
		return STORE_DEFAULT_TIMEOUT_MS;
	return ms > STORE_MAX_TIMEOUT_MS ? STORE_MAX_TIMEOUT_MS : ms;
}

void
store_handle(struct store *s, int link, const char *scope, const json_t *req,
    double now)
{
	const char	*op = json_string_value(json_object_get(req, "op"));
	const char	*key = json_string_value(json_object_get(req, "key"));
	json_t		*value;
	char		 full[STORE_SCOPE_NAME + STORE_MAX_KEY + 2], why[160];
	int		 sc;

	if (op == NULL || key == NULL || *key == '\0') {
		store_error(s, link, req, "store request needs op and key");
		return;
	}
	if (strlen(key) > STORE_MAX_KEY || strlen(scope) >= STORE_SCOPE_NAME) {
		snprintf(why, sizeof why, "store key over %d bytes",
		    STORE_MAX_KEY);
		store_error(s, link, req, why);
		return;
	}
	snprintf(full, sizeof full, "%s/%s", scope, key);
	sc = store_scope(s, scope, 1);
	if (strcmp(op, "set") == 0) {
		store_set(s, link, sc, full, req);
		return;
	}
	if (strcmp(op, "get") != 0) {
		store_error(s, link, req, "unknown store op");
		return;
	}
	if ((value = json_object_get(s->kv, full)) != NULL) {
		store_value(s, link, req, value);
		return;
	}
	if (s->sc[sc].parked >= STORE_SCOPE_PARKED) {
		snprintf(why, sizeof why, "store busy: a run's generation may "
		    "have %d gets waiting", STORE_SCOPE_PARKED);
		store_error(s, link, req, why);
		return;
	}
	if (s->nw == s->capw) {
		s->capw = s->capw ? 2 * s->capw : 16;
		s->w = xreallocarray(s->w, s->capw, sizeof *s->w);
	}
	s->w[s->nw++] = (struct waiter){ link, sc, xstrdup(full),
	    json_deep_copy(req), now + store_timeout_ms(req) / 1000.0 };
	s->sc[sc].parked++;
}

void
store_tick(struct store *s, double now)
{
	for (size_t i = 0; i < s->nw; i++) {
		if (s->w[i].deadline > now)
			continue;
		store_error(s, s->w[i].link, s->w[i].req,
		    "timed out waiting for the key");
		store_remove_waiter(s, i--);
	}
}

void
store_drop_link(struct store *s, int link)
{
	for (size_t i = 0; i < s->nw; i++) {
		if (s->w[i].link == link)
			store_remove_waiter(s, i--);
	}
}

void
store_drop_rank(struct store *s, const char *scope, int rank)
{
	int	 sc = store_scope(s, scope, 0);

	for (size_t i = 0; sc >= 0 && i < s->nw; i++) {
		json_t *r = json_object_get(s->w[i].req, "rank");

		if (s->w[i].scope == sc && json_is_integer(r) &&
		    json_integer_value(r) == rank)
			store_remove_waiter(s, i--);
	}
}

void
store_drop_scope(struct store *s, const char *scope)
{
	int		 sc = store_scope(s, scope, 0);
	size_t		 len = strlen(scope);
	const char	*k;
	json_t		*v;
	void		*tmp;

	(void)v;

	if (sc < 0)
		return;
	for (size_t i = 0; i < s->nw; i++) {
		if (s->w[i].scope == sc)
			store_remove_waiter(s, i--);
	}
	json_object_foreach_safe(s->kv, tmp, k, v) {
		if (strncmp(k, scope, len) == 0 && k[len] == '/')
			json_object_del(s->kv, k);
	}
	s->sc[sc].used = 0;
}

size_t
store_size(const struct store *s)
{
	return json_object_size(s->kv);
}

size_t
store_parked(const struct store *s)
{
	return s->nw;
}
