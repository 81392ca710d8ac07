/*
 * fleet.h: the backend's links to the node agents.  A launcher (a const
 * table entry per kind: local now, ssh later) makes sure a node's agent
 * runs and returns a connected fd; the fleet then speaks frames on it.
 */
#ifndef HUNTER_FLEET_H
#define HUNTER_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "backend/proto/proto.h"
#include "backend/spec/spec.h"

struct fleet_node {
	const struct node_spec *spec;
	char		 dir[4096];	/* the agent's state directory */
	char		 addr[256];	/* where its workers bind Gloo */
	int		 fd;		/* -1 when not connected */
	struct proto_reader rd;
	bool		 up;		/* hello received */
	json_t		*hello;		/* the agent's hello */
	double		 last_seen;	/* CLOCK_MONOTONIC */
};

struct launcher {
	const char	*name;
	/* Whether this launcher serves the node. */
	bool		(*match)(const struct node_spec *);
	/* Start the node's agent if needed and connect.  fd or -1 + err. */
	int		(*connect)(struct fleet_node *, const char *exe,
			    char *err, size_t errlen);
};

struct fleet {
	struct fleet_node *nodes;
	int		 n;
	char		 exe[4096];	/* this binary, for starting agents */
	int		 agent_idle_exit;
};

extern int fleet_agent_idle_exit;

/* Set up a fleet over a cluster; agent dirs default to STATE/nodes/NAME. */
void	fleet_init(struct fleet *, const struct cluster_spec *,
	    const char *state_dir);
void	fleet_free(struct fleet *);
/* Connect every node (starting agents as needed) and say hello.  Returns
 * the number connected; errors for each node that failed go to report. */
int	fleet_connect(struct fleet *, void (*report)(void *, const char *node,
	    const char *err), void *ctx);
struct fleet_node *fleet_find(struct fleet *, const char *name);
/* Send msg to a node; on failure the link is closed.  0 or -1. */
int	fleet_send(struct fleet_node *, const json_t *msg);
void	fleet_close_node(struct fleet_node *);

#endif
