/*
 * fleet.h: the backend's links to the node agents.  A launcher (a const
 * table entry per kind: local, ssh, srun) makes sure a node's agent runs and
 * returns a connected fd; the fleet then speaks frames on it.  A node
 * whose connect fails, or whose link dies before its hello, is retried
 * after a backoff of 1, 2, 4 ... 30 s.
 */
#ifndef HUNTER_FLEET_H
#define HUNTER_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "backend/spec/spec.h"
#include "backend/proto/proto.h"

/* How far the last connect got, for hunter check. */
enum fleet_stage {
	FLEET_DOWN,		/* not reached */
	FLEET_REACHED,		/* the host answered (ssh: handshake done) */
	FLEET_TRUSTED,		/* its host key is known */
	FLEET_AUTHED,		/* logged in */
	FLEET_LINKED,		/* the agent's link is open */
};

struct fleet_node {
	const struct node_spec *spec;
	const struct cluster_spec *cluster;	/* its ssh options */
	char		 dir[4096];	/* the agent's state directory */
	char		 addr[256];	/* where its workers bind Gloo */
	int		 fd;		/* -1 when not connected */
	struct proto_reader rd;
	struct proto_queue q;		/* what goes to the agent */
	bool		 up;		/* hello received */
	json_t		*hello;		/* the agent's hello */
	double		 last_seen;	/* CLOCK_MONOTONIC */
	double		 ping_sent;	/* the last ping's (CLOCK_MONOTONIC) */
	double		 answered;	/* the newest ping answered was sent
					 * then: the link works both ways */
	enum fleet_stage stage;
	int		 backoff_s;	/* 0 until a connect fails */
	double		 retry_at;	/* no connect before this (CLOCK_MONOTONIC) */
	struct fleet_conn *conn;	/* a connect in flight (fleet.c) */
	bool		 bound;		/* its agent lives only as long as the
					 * link (srun: the step's) */
	bool		 hello_sent;	/* the launcher said our hello */
	/* Why it is down: the last connect's error, or what its agent (or
	 * the SSH pump) said before the link closed; "" once it is up. */
	char		 why[1024];
};

struct launcher {
	const char	*name;
	/* Whether this launcher serves the node. */
	bool		(*match)(const struct node_spec *);
	/* Start the node's agent if needed and connect.  fd or -1 + err. */
	int		(*connect)(struct fleet_node *, const char *exe,
			    char *err, size_t errlen);
	/* Optional: wait for work left behind by closed links (fleet_free). */
	void		(*quiesce)(void);
	/* Optional: why the node's link ended, into buf (srun: how the step
	 * ended and srun's last words), once the link is closed. */
	void		(*why)(const struct fleet_node *, char *buf, size_t len);
	/* The agent lives and dies with the link (an srun step): a lost link
	 * is a lost node, whose ranks are gone with it. */
	bool		 bound;
};

struct fleet {
	struct fleet_node *nodes;
	int		 n;
	char		 exe[4096];	/* this binary, for starting agents */
	int		 agent_idle_exit;
};

extern int fleet_agent_idle_exit;
/* Set by commands: add unknown SSH host keys to known_hosts (a changed
 * key is refused regardless). */
extern bool fleet_accept_new_hostkeys;
/* Set by commands: copy this binary to SSH nodes whose hunter is missing
 * or another build (~/.local/lib/hunter/BUILD-ID/hunter). */
extern bool fleet_push;

/* Set up a fleet over a cluster (kept by pointer: it must outlive the
 * fleet); agent dirs default to STATE/nodes/NAME, and on SSH nodes to
 * ~/.local/state/hunter/nodes/NAME (the remote agent expands the ~). */
void	fleet_init(struct fleet *, const struct cluster_spec *,
	    const char *state_dir);
void	fleet_free(struct fleet *);
/* Connect every node that is down and due (starting agents as needed),
 * all at once, wait for them, and say hello.  Returns the number
 * connected; errors for each node that failed go to report. */
int	fleet_connect(struct fleet *, void (*report)(void *, const char *node,
	    const char *err), void *ctx);
/* The same without waiting, for a loop: take the connects that are over
 * and start the ones that are due.  Returns the number connected. */
int	fleet_connect_async(struct fleet *, void (*report)(void *,
	    const char *node, const char *err), void *ctx);
/* Compare the versions in the nodes' hellos with each other and, when
 * own_hello is given, the build with ours.  0, or -1 with a message
 * naming the nodes and the versions that differ (check.c). */
int	fleet_check_versions(const struct fleet *, const json_t *own_hello,
	    char *err, size_t errlen);
struct fleet_node *fleet_find(struct fleet *, const char *name);
/* Why fn's link ended, from its launcher, into buf ("" when it cannot
 * tell); call after the link is closed. */
void	fleet_link_why(const struct fleet_node *, char *buf, size_t len);
/* Send msg to a node through its queue, never waiting for it; when the
 * link fails the node is closed.  0 (sent or waiting), or -1 (errno;
 * EINVAL: msg cannot be encoded, the link stays; EPIPE, ECONNRESET: the
 * agent closed its end, and the link stays for the poll to read its
 * EOF). */
int	fleet_send(struct fleet_node *, const json_t *msg);
/* Write what waits for the node, when poll() said its fd can take more
 * (ask for proto_queue_events(&fn->q)).  0, or -1 with the node closed
 * and errno saying why. */
int	fleet_flush(struct fleet_node *);
void	fleet_close_node(struct fleet_node *);
/* Say why fn is down (fn->why), for messages until it is up again. */
void	fleet_set_why(struct fleet_node *, const char *why);

#endif
