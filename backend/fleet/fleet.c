/*
 * fleet.c: connecting to the agents of a cluster, through the launcher
 * that serves each node.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/core/clock.h"
#include "backend/core/xmalloc.h"
#include "backend/fleet/fleet.h"

extern const struct launcher launcher_local;

static const struct launcher *launchers[] = {
	&launcher_local,
};

int fleet_agent_idle_exit = 900;

void
fleet_init(struct fleet *f, const struct cluster_spec *c, const char *state_dir)
{
	ssize_t	 n;

	memset(f, 0, sizeof *f);
	f->n = c->n_nodes;
	f->nodes = xcalloc((size_t)f->n, sizeof *f->nodes);
	if ((n = readlink("/proc/self/exe", f->exe, sizeof f->exe - 1)) > 0)
		f->exe[n] = '\0';
	for (int i = 0; i < f->n; i++) {
		struct fleet_node *fn = &f->nodes[i];

		fn->spec = &c->nodes[i];
		fn->fd = -1;
		if (fn->spec->state_dir[0] != '\0')
			snprintf(fn->dir, sizeof fn->dir, "%s", fn->spec->state_dir);
		else
			snprintf(fn->dir, sizeof fn->dir, "%s/nodes/%s",
			    state_dir, fn->spec->name);
		snprintf(fn->addr, sizeof fn->addr, "%s",
		    strcmp(fn->spec->host, "local") == 0 ? "127.0.0.1" :
		    fn->spec->host);
		proto_reader_init(&fn->rd);
	}
}

void
fleet_close_node(struct fleet_node *fn)
{
	if (fn->fd >= 0)
		close(fn->fd);
	fn->fd = -1;
	fn->up = false;
	proto_reader_free(&fn->rd);
	proto_reader_init(&fn->rd);
}

void
fleet_free(struct fleet *f)
{
	for (int i = 0; i < f->n; i++) {
		fleet_close_node(&f->nodes[i]);
		proto_reader_free(&f->nodes[i].rd);
		json_decref(f->nodes[i].hello);
	}
	free(f->nodes);
	memset(f, 0, sizeof *f);
}

struct fleet_node *
fleet_find(struct fleet *f, const char *name)
{
	for (int i = 0; i < f->n; i++) {
		if (strcmp(f->nodes[i].spec->name, name) == 0)
			return &f->nodes[i];
	}
	return NULL;
}

int
fleet_send(struct fleet_node *fn, const json_t *msg)
{
	if (fn->fd < 0)
		return -1;
	if (proto_send(fn->fd, msg) != 0) {
		fleet_close_node(fn);
		return -1;
	}
	return 0;
}

int
fleet_connect(struct fleet *f, void (*report)(void *, const char *,
    const char *), void *ctx)
{
	char	 err[1024];
	int	 up = 0;

	for (int i = 0; i < f->n; i++) {
		struct fleet_node *fn = &f->nodes[i];
		const struct launcher *l = NULL;

		if (fn->fd >= 0) {
			up++;
			continue;
		}
		for (size_t j = 0; j < sizeof launchers / sizeof launchers[0]; j++) {
			if (launchers[j]->match(fn->spec)) {
				l = launchers[j];
				break;
			}
		}
		if (l == NULL) {
			snprintf(err, sizeof err, "no launcher for host '%s' "
			    "(remote nodes need the SSH launcher, not built yet)",
			    fn->spec->host);
			report(ctx, fn->spec->name, err);
			continue;
		}
		if ((fn->fd = l->connect(fn, f->exe, err, sizeof err)) < 0) {
			report(ctx, fn->spec->name, err);
			continue;
		}
		if (proto_send_new(fn->fd, proto_hello("backend", NULL)) != 0) {
			snprintf(err, sizeof err, "hello: %s", strerror(errno));
			fleet_close_node(fn);
			report(ctx, fn->spec->name, err);
			continue;
		}
		fn->last_seen = clock_mono();
		up++;
	}
	return up;
}
