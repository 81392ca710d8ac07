/*
 * kind.c: the table of message types.  Each row names a type, the fields
 * every frame of it must carry with their JSON types, and, where that is
 * not all, a check of the rest (a store answer's value, a launch order's
 * fields, the other commands' from the table of commands, a summary's, a
 * metrics frame's figures).
 * Receivers call proto_kind() once and switch on what it returns, so a
 * malformed frame is refused in one place, with a message, before any
 * receiver reads a field of it; a rank is an integer that fits an int.
 *
 * A row also says whether a slow reader may lose frames of its type: a
 * link's queue (frame-queue.c) drops metrics, log lines and traced steps
 * when the reader falls behind, and never anything else.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "backend/proto/event.h"
#include "backend/proto/launch.h"
#include "backend/proto/metrics.h"
#include "backend/proto/proto.h"
#include "backend/proto/summary.h"

/* F_RANK: an integer that is a rank, 0..INT_MAX (receivers keep ranks
 * in an int: 2^32 + 5 must not become rank 5). */
enum field_type { F_END, F_STR, F_INT, F_NUM, F_ARR, F_RANK };

struct kind_field {
	const char	*name;
	enum field_type	 type;
};

/* The most required fields a type has, and the check of the rest. */
#define KIND_FIELDS	4
typedef int	 kind_check(const json_t *, char *, size_t);

static kind_check kind_metrics, kind_store, kind_cmd, kind_summary;

/* A frame that the next of its kind makes stale, or a line of output:
 * what a queue may drop. */
#define DROPPABLE	true

static const struct kind_row {
	const char	*name;
	struct kind_field need[KIND_FIELDS];
	kind_check	*check;
	bool		 droppable;
} kind_table[PK_COUNT] = {
	[PK_HELLO] = { MSG_HELLO, { { "proto", F_INT }, { "role", F_STR } } },
	[PK_METRICS] = { MSG_METRICS, { { "scope", F_STR } }, kind_metrics,
	    DROPPABLE },
	[PK_LOG] = { MSG_LOG, { { "line", F_STR } }, NULL, DROPPABLE },
	[PK_EVENT] = { MSG_EVENT, { { "kind", F_STR } }, event_check },
	[PK_EPOCH] = { MSG_EPOCH, { { "job", F_STR }, { "epoch", F_INT } } },
	[PK_SUMMARY] = { MSG_SUMMARY, { { "job", F_STR } }, kind_summary },
	[PK_STORE] = { MSG_STORE, { { "op", F_STR } }, kind_store },
	[PK_CMD] = { MSG_CMD, { { "cmd", F_STR } }, kind_cmd },
	[PK_EXIT] = { MSG_EXIT, { { "job", F_STR }, { "rank", F_RANK } } },
	[PK_ERROR] = { MSG_ERROR, { { "reason", F_STR } } },
	[PK_STEP] = { MSG_STEP, { { "job", F_STR }, { "step", F_INT },
	    { "loss", F_NUM } }, NULL, DROPPABLE },
	[PK_AUTOTUNE] = { MSG_AUTOTUNE, { { "job", F_STR },
	    { "micro_batch", F_INT }, { "accum", F_INT }, { "trials", F_ARR } } },
	[PK_OK] = { MSG_OK },
	[PK_JOB] = { MSG_JOB, { { "job", F_STR } } },
	[PK_JOB_END] = { MSG_JOB_END, { { "job", F_STR } } },
	[PK_DECISION] = { MSG_DECISION, { { "job", F_STR }, { "kind", F_STR } } },
	[PK_EVAL] = { MSG_EVAL, { { "job", F_STR }, { "step", F_INT } } },
};

static const char *const field_words[] = {
	[F_STR] = "a string", [F_INT] = "an integer", [F_NUM] = "a number",
	[F_ARR] = "an array", [F_RANK] = "a rank (an integer 0..2147483647)",
};

/* The commands but launch (launch.h has its fields), and the fields each
 * needs beyond "cmd".  One that is not here passes: its receiver says it
 * does not know it. */
static const struct cmd_row {
	const char	*cmd;
	struct kind_field need[KIND_FIELDS];
} cmd_table[] = {
	{ "kill", { { "job", F_STR } } },
	{ "stop", { { "job", F_STR } } },
	{ "pause", { { "job", F_STR } } },
	{ "resume", { { "job", F_STR } } },
	{ "checkpoint", { { "job", F_STR } } },
	{ "migrate", { { "job", F_STR }, { "rank", F_RANK },
	    { "node", F_STR } } },
	{ "submit", { { "file", F_STR } } },
	{ "detach", { { NULL, F_END } } },
	{ "jobs", { { NULL, F_END } } },
	{ "shutdown", { { NULL, F_END } } },
	/* The backend's probe of a link; the agent answers "ok" with it. */
	{ "ping", { { "seq", F_INT } } },
};

static bool
field_is(const json_t *v, enum field_type t)
{
	switch (t) {
	case F_STR:
		return json_is_string(v);
	case F_INT:
		return json_is_integer(v);
	case F_NUM:
		return json_is_number(v);
	case F_ARR:
		return json_is_array(v);
	case F_RANK:
		return json_is_integer(v) && json_integer_value(v) >= 0 &&
		    json_integer_value(v) <= INT_MAX;
	default:
		return false;
	}
}

/* 0 when every field of need is in msg with its type, else -1 and why. */
static int
kind_need(const json_t *msg, const struct kind_field *need, char *err,
    size_t errlen)
{
	for (int i = 0; i < KIND_FIELDS && need[i].type != F_END; i++) {
		json_t	*v = json_object_get(msg, need[i].name);

		if (v == NULL) {
			snprintf(err, errlen, "no \"%s\"", need[i].name);
			return -1;
		}
		if (!field_is(v, need[i].type)) {
			snprintf(err, errlen, "\"%s\" is not %s", need[i].name,
			    field_words[need[i].type]);
			return -1;
		}
	}
	return 0;
}

/* The ranks' process rows in a node's frame: each names its job and
 * rank, and its figures have the types of their rows. */
static int
kind_node_ranks(const json_t *a, char *err, size_t errlen)
{
	static const struct kind_field rank[] = { { "job", F_STR },
	    { "rank", F_INT }, { NULL, F_END } };
	struct rank_report	 rr;
	const json_t		*o;
	size_t			 i;

	if (a == NULL)
		return 0;
	if (!json_is_array(a)) {
		snprintf(err, errlen, "\"ranks\" is not an array");
		return -1;
	}
	json_array_foreach(a, i, o) {
		if (!json_is_object(o)) {
			snprintf(err, errlen, "\"ranks\" holds a non-object");
			return -1;
		}
		if (kind_need(o, rank, err, errlen) != 0 ||
		    rank_report_read(o, &rr, err, errlen) != 0)
			return -1;
	}
	return 0;
}

/* A node's sample, lists, GPUs and ranks' processes. */
static int
kind_node_metrics(const json_t *msg, char *err, size_t errlen)
{
	struct node_sample	 ns;
	struct node_lists	 nl;

	if (node_sample_read(msg, &ns, err, errlen) != 0 ||
	    node_lists_read(msg, &nl, err, errlen) != 0 ||
	    gpu_samples_check(json_object_get(msg, "gpus"), err, errlen) != 0)
		return -1;
	return kind_node_ranks(json_object_get(msg, "ranks"), err, errlen);
}

/* A node's figures, or a rank's: the rank is named, every figure has
 * the type of its row. */
static int
kind_metrics(const json_t *msg, char *err, size_t errlen)
{
	static const struct kind_field rank[] = { { "job", F_STR },
	    { "rank", F_RANK }, { NULL, F_END } };
	const char		*scope = json_string_value(json_object_get(msg,
	    "scope"));
	struct rank_report	 rr;

	if (strcmp(scope, "node") == 0)
		return kind_node_metrics(msg, err, errlen);
	if (strcmp(scope, "rank") != 0) {
		snprintf(err, errlen, "scope \"%.32s\" is neither node nor rank",
		    scope);
		return -1;
	}
	if (kind_need(msg, rank, err, errlen) != 0)
		return -1;
	return rank_report_read(msg, &rr, err, errlen);
}

/* An answer's value is what the asker decodes. */
static int
kind_store(const json_t *msg, char *err, size_t errlen)
{
	static const struct kind_field value[] = { { "value", F_STR },
	    { NULL, F_END } };
	const char	*op = json_string_value(json_object_get(msg, "op"));

	if (strcmp(op, "value") == 0)
		return kind_need(msg, value, err, errlen);
	return 0;
}

/* A launch is the whole order (launch.h): every field its receivers
 * read, with its type.  Any other command has the fields of its row in
 * cmd_table. */
static int
kind_cmd(const json_t *msg, char *err, size_t errlen)
{
	const char		*cmd = json_string_value(json_object_get(msg, "cmd"));
	struct launch_order	 l;
	char			 why[160];
	int			 rc;

	if (strcmp(cmd, "launch") == 0) {
		rc = launch_unpack(msg, &l, err, errlen);
		launch_free(&l);
		return rc;
	}
	for (size_t i = 0; i < sizeof cmd_table / sizeof cmd_table[0]; i++) {
		if (strcmp(cmd, cmd_table[i].cmd) != 0)
			continue;
		if (kind_need(msg, cmd_table[i].need, why, sizeof why) != 0) {
			snprintf(err, errlen, "%s: %s", cmd, why);
			return -1;
		}
		return 0;
	}
	return 0;
}

int
proto_cmd_check(const json_t *cmd, char *err, size_t errlen)
{
	static const struct kind_field name[] = { { "cmd", F_STR },
	    { NULL, F_END } };
	char	 why[200];

	if (!json_is_object(cmd)) {
		snprintf(err, errlen, "a command is a JSON object");
		return -1;
	}
	if (kind_need(cmd, name, why, sizeof why) != 0 ||
	    kind_cmd(cmd, why, sizeof why) != 0) {
		snprintf(err, errlen, "'cmd' frame: %s", why);
		return -1;
	}
	return 0;
}

/* A summary has the types of its field list (summary.h). */
static int
kind_summary(const json_t *msg, char *err, size_t errlen)
{
	struct job_summary	 s;

	return summary_unpack(msg, &s, err, errlen);
}

enum proto_kind
proto_kind(const json_t *msg, char *err, size_t errlen)
{
	const char	*t = proto_type(msg);
	char		 why[200], dummy[1];

	if (err == NULL) {
		err = dummy;
		errlen = sizeof dummy;
	}
	for (int k = PK_HELLO; k < PK_COUNT; k++) {
		const struct kind_row *row = &kind_table[k];

		if (strcmp(t, row->name) != 0)
			continue;
		if (kind_need(msg, row->need, why, sizeof why) != 0 ||
		    (row->check != NULL && row->check(msg, why, sizeof why) != 0)) {
			snprintf(err, errlen, "'%s' frame: %s", row->name, why);
			return PK_INVALID;
		}
		return k;
	}
	return PK_UNKNOWN;
}

enum proto_kind
proto_kind_named(const char *t)
{
	for (int k = PK_HELLO; k < PK_COUNT; k++) {
		if (strcmp(t, kind_table[k].name) == 0)
			return k;
	}
	return PK_UNKNOWN;
}

bool
proto_kind_droppable(enum proto_kind k)
{
	return k > PK_INVALID && k < PK_COUNT && kind_table[k].droppable;
}

const char *
proto_kind_name(enum proto_kind k)
{
	return k > PK_INVALID && k < PK_COUNT ? kind_table[k].name : NULL;
}

const char *
proto_type(const json_t *msg)
{
	const char	*t = json_string_value(json_object_get(msg, "t"));

	return t != NULL ? t : "";
}
