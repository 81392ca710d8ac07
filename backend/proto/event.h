/*
 * event.h: the kinds of event ({"t": "event", "kind": ...};
 * docs/architecture.md, "Events"), one row each: the wire name, how
 * serious it is, whether the report marks it on its charts, and the
 * fields an event of the kind must carry besides job, rank, node and
 * reason.  Senders name a kind by its enum; a receiver looks the name up
 * once (event_kind_named) and reads the row: the console's colours, the
 * report's marks, the journal and the Prometheus counter all come from
 * here.  A new kind is one line.
 *	X(ID, name, severity, marked, help)
 */
#ifndef HUNTER_EVENT_H
#define HUNTER_EVENT_H

#include <stdbool.h>

#include <jansson.h>

enum event_severity { EV_INFO, EV_WARN, EV_ERROR };

#define EVENT_KINDS(X)							\
	X(QUEUED, "queued", INFO, false, "a job waits for slots")	\
	X(PLACED, "placed", INFO, false, "a job's ranks were given nodes") \
	X(STARTED, "started", INFO, false, "a rank began to train")	\
	X(PAUSED, "paused", WARN, true, "ranks hold at a step boundary") \
	X(RESUMED, "resumed", INFO, true, "paused ranks go on")		\
	X(CHECKPOINT, "checkpoint", INFO, false,			\
	    "a checkpoint was asked for, written, skipped or moved")	\
	X(MIGRATED, "migrated", WARN, true, "a rank moves to another node") \
	X(RESIZED, "resized", WARN, true, "a job's world size changes")	\
	X(FAILOVER, "failover", WARN, true,				\
	    "a rank or a node was lost, and what is done about it")	\
	X(RESTARTED, "restarted", WARN, true,				\
	    "a group starts again, or resumes, or a console re-attaches") \
	X(REFUSED, "refused", ERROR, false,				\
	    "a command, a job or a frame was refused")			\
	X(FINISHED, "finished", INFO, false, "a rank trained to the end") \
	X(STOPPED, "stopped", INFO, false, "a job or a rank was stopped") \
	X(FAILED, "failed", ERROR, true, "a rank or a job failed")	\
	X(PREEMPTED, "preempted", WARN, false,				\
	    "the allocation ends: every job checkpoints and stops")	\
	X(DOWN, "down", ERROR, false, "a node cannot be reached")	\
	X(UP, "up", INFO, false, "a node that was down is back")	\
	X(AUTOTUNE, "autotune", INFO, false, "the micro-batch search")	\
	X(METRICS, "metrics", INFO, false, "the Prometheus endpoint")	\
	X(DROPPED, "dropped", WARN, false,				\
	    "a slow link dropped frames (counted by type)")		\
	X(WARNING, "warning", WARN, false, "something to look at")	\
	X(SIGNAL, "signal", INFO, false, "a signal sent to a program")	\
	X(PHASE, "phase", INFO, false,					\
	    "a job or a rank moved from one phase to another")		\
	X(XID, "xid", ERROR, true, "a GPU reported an XID error (NVML)")

#define EVENT_KIND_ENUM(id, ...)	EV_##id,
enum event_kind { EV_UNKNOWN, EVENT_KINDS(EVENT_KIND_ENUM) EV_COUNT };
#undef EVENT_KIND_ENUM

/* The wire name of a kind ("failover"); "?" for EV_UNKNOWN. */
const char	*event_kind_name(enum event_kind);
/* The kind of a wire name, or EV_UNKNOWN (an event of a newer peer). */
enum event_kind	 event_kind_named(const char *);
/* The kind of an event frame's "kind". */
enum event_kind	 event_kind_of(const json_t *ev);
enum event_severity event_kind_severity(enum event_kind);
bool		 event_kind_marked(enum event_kind);
const char	*event_kind_help(enum event_kind);
/* The fields an event of its kind must carry, checked: 0, or -1 with
 * err naming the field (proto_kind() refuses the frame). */
int		 event_check(const json_t *ev, char *err, size_t errlen);

#endif
