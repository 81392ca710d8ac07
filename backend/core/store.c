/*
 * store.c: the rendezvous store.  Values live in one jansson object
 * (key -> base64 text, as they arrive); parked gets are a short list,
 * since a rendezvous has at most a few per rank at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/store.h"

/* The default wait when a get names no timeout. */
#define STORE_DEFAULT_TIMEOUT_MS 30000

struct waiter {
	int	 link;
	json_t	*req;		/* the get, kept for its routing fields */
	double	 deadline;
};

struct store {
	json_t		*kv;
	struct waiter	*w;
	size_t		 nw, capw;
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
	for (size_t i = 0; i < s->nw; i++)
		json_decref(s->w[i].req);
	free(s->w);
	json_decref(s->kv);
	free(s);
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
	json_decref(s->w[i].req);
	s->w[i] = s->w[--s->nw];
}

void
store_handle(struct store *s, int link, const json_t *req, double now)
{
	const char	*op = json_string_value(json_object_get(req, "op"));
	const char	*key = json_string_value(json_object_get(req, "key"));
	json_t		*value, *t;
	double		 timeout_ms;

	if (op == NULL || key == NULL || *key == '\0') {
		store_error(s, link, req, "store request needs op and key");
		return;
	}
	if (strcmp(op, "set") == 0) {
		value = json_object_get(req, "value");
		if (!json_is_string(value)) {
			store_error(s, link, req, "store set needs a string value");
			return;
		}
		json_object_set(s->kv, key, value);
		for (size_t i = 0; i < s->nw; i++) {
			const char *k = json_string_value(json_object_get(
			    s->w[i].req, "key"));
			if (strcmp(k, key) != 0)
				continue;
			store_value(s, s->w[i].link, s->w[i].req, value);
			store_remove_waiter(s, i--);
		}
		return;
	}
	if (strcmp(op, "get") != 0) {
		store_error(s, link, req, "unknown store op");
		return;
	}
	if ((value = json_object_get(s->kv, key)) != NULL) {
		store_value(s, link, req, value);
		return;
	}
	t = json_object_get(req, "timeout_ms");
	timeout_ms = json_is_number(t) ? json_number_value(t) :
	    STORE_DEFAULT_TIMEOUT_MS;
	if (s->nw == s->capw) {
		s->capw = s->capw ? 2 * s->capw : 16;
		s->w = xreallocarray(s->w, s->capw, sizeof *s->w);
	}
	s->w[s->nw++] = (struct waiter){ link, json_deep_copy(req),
	    now + timeout_ms / 1000.0 };
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

size_t
store_size(const struct store *s)
{
	return json_object_size(s->kv);
}
