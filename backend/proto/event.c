/*
 * event.c: the table of event kinds (event.h), and the fields each kind
 * must carry: a phase event names the transition, a resize the world
 * sizes, batch and learning rate it moved between, an XID error its GPU
 * and code.
 */
#include <stdio.h>
#include <string.h>

#include "backend/proto/event.h"

/* A field an event of a kind must carry, and its JSON type (JSON_REAL
 * stands for any number). */
struct event_need {
	const char	*name;
	json_type	 type;
};

#define EVENT_NEEDS	4

static const struct event_row {
	const char		*name;
	enum event_severity	 severity;
	bool			 marked;
	const char		*help;
} event_table[EV_COUNT] = {
#define EVENT_ROW(id, name, sev, marked, help) \
	[EV_##id] = { name, EV_##sev, marked, help },
	EVENT_KINDS(EVENT_ROW)
#undef EVENT_ROW
};

static const struct event_need event_needs[EV_COUNT][EVENT_NEEDS] = {
	[EV_PHASE] = { { "from", JSON_STRING }, { "to", JSON_STRING } },
	[EV_RESIZED] = { { "from", JSON_INTEGER }, { "to", JSON_INTEGER },
	    { "global_batch", JSON_INTEGER }, { "lr", JSON_REAL } },
	[EV_XID] = { { "gpu", JSON_INTEGER }, { "xid", JSON_INTEGER } },
};

const char *
event_kind_name(enum event_kind k)
{
	return k > EV_UNKNOWN && k < EV_COUNT ? event_table[k].name : "?";
}

enum event_kind
event_kind_named(const char *name)
{
	for (int k = EV_UNKNOWN + 1; name != NULL && k < EV_COUNT; k++) {
		if (strcmp(name, event_table[k].name) == 0)
			return (enum event_kind)k;
	}
	return EV_UNKNOWN;
}

enum event_kind
event_kind_of(const json_t *ev)
{
	return event_kind_named(json_string_value(json_object_get(ev, "kind")));
}

enum event_severity
event_kind_severity(enum event_kind k)
{
	return k > EV_UNKNOWN && k < EV_COUNT ? event_table[k].severity :
	    EV_INFO;
}

bool
event_kind_marked(enum event_kind k)
{
	return k > EV_UNKNOWN && k < EV_COUNT && event_table[k].marked;
}

const char *
event_kind_help(enum event_kind k)
{
	return k > EV_UNKNOWN && k < EV_COUNT ? event_table[k].help : "";
}

int
event_check(const json_t *ev, char *err, size_t errlen)
{
	enum event_kind	 k = event_kind_of(ev);

	for (int i = 0; k != EV_UNKNOWN && i < EVENT_NEEDS; i++) {
		const struct event_need *n = &event_needs[k][i];
		json_t	*v;

		if (n->name == NULL)
			break;
		v = json_object_get(ev, n->name);
		if (v == NULL || (n->type == JSON_REAL ? !json_is_number(v) :
		    json_typeof(v) != n->type)) {
			snprintf(err, errlen, "a %s event needs \"%s\"",
			    event_table[k].name, n->name);
			return -1;
		}
	}
	return 0;
}
