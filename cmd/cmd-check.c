/*
 * cmd-check.c: `hunter check`, the preflight over a cluster.  It connects
 * to every node the way the console does (starting agents where needed),
 * waits for each agent's hello, and prints one row per node: whether the
 * host answered, whether the login worked, the agent's hunter version and
 * build, Gloo, NCCL, CUDA and driver versions, the free slots, and its
 * BLAS: library, kernel and sgemm GFLOP/s, measured now (check-blas.c),
 * with a warning for a node below half of the best of its CPU model.  It
 * exits 1 when a node cannot be reached, when the versions differ
 * between nodes or from this console's build (fleet_check_versions), or
 * when a node's kernel disagrees with the reference GEMM.
 *
 * It warns of a node whose addr, where the collective mesh binds, is a
 * public address, and fails one whose addr is every interface.
 *
 * It says hello as a backend, which would take the agents over from a
 * running console, so it takes the state directory's backend lock first
 * and refuses while a console holds it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/clock.h"
#include "lib/ipscope.h"
#include "lib/lock.h"
#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/spec/spec.h"
#include "backend/fleet/fleet.h"
#include "tui/sanitize.h"
#include "cmd/check.h"
#include "cmd/cmd.h"

/* Seconds to wait for every hello, after the connects. */
#define CHECK_HELLO_TIMEOUT_S	20

enum { COL_NODE, COL_HOST, COL_REACH, COL_AUTH, COL_HUNTER, COL_BUILD,
    COL_GLOO, COL_NCCL, COL_CUDA, COL_DRIVER, COL_CPU, COL_GPU, COL_BLAS,
    COL_KERNEL, COL_GFLOPS, NCOLS };

static const char *const check_heads[NCOLS] = { "NODE", "HOST", "REACH",
    "AUTH", "HUNTER", "BUILD", "GLOO", "NCCL", "CUDA", "DRIVER", "FREE-CPU",
    "FREE-CUDA", "BLAS", "KERNEL", "GFLOP/S" };

struct check_ctx {
	struct fleet	*f;
	char		**errs;		/* per node, NULL when fine */
};

/* A node's first error, sanitized: it may quote what the remote side
 * said (its stderr, an error frame's reason). */
static void
check_set_err(struct check_ctx *c, int i, const char *err)
{
	char	clean[1024];

	if (c->errs[i] == NULL) {
		sanitize(clean, sizeof clean, err);
		c->errs[i] = xstrdup(clean);
	}
}

static void
check_report(void *arg, const char *node, const char *err)
{
	struct check_ctx	*c = arg;
	struct fleet_node	*fn = fleet_find(c->f, node);

	if (fn != NULL)
		check_set_err(c, (int)(fn - c->f->nodes), err);
}

/* Read frames from every linked node until its hello, an error, or the
 * deadline. */
static void
check_collect(struct check_ctx *c, double deadline)
{
	struct fleet	*f = c->f;
	struct pollfd	*pfd = xcalloc((size_t)f->n, sizeof *pfd);

	for (;;) {
		int n = 0, left = (int)((deadline - clock_mono()) * 1000);

		for (int i = 0; i < f->n; i++) {
			struct fleet_node *fn = &f->nodes[i];

			pfd[i] = (struct pollfd){ .fd = -1 };
			if (fn->fd >= 0 && !fn->up) {
				pfd[i] = (struct pollfd){ .fd = fn->fd,
				    .events = POLLIN };
				n++;
			}
		}
		if (n == 0 || left <= 0)
			break;
		if (poll(pfd, (nfds_t)f->n, left) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < f->n; i++) {
			struct fleet_node *fn = &f->nodes[i];
			json_t	*msg;
			ssize_t	 got;
			int	 rc;
			char	 why[300];

			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			got = proto_reader_fill(&fn->rd, fn->fd);
			while (!fn->up && (rc = proto_reader_next(&fn->rd,
			    &msg)) == 1) {
				switch (proto_kind(msg, why, sizeof why)) {
				case PK_HELLO:
					fn->hello = json_incref(msg);
					fn->up = true;
					break;
				case PK_ERROR:
					check_set_err(c, i, json_string_value(
					    json_object_get(msg, "reason")));
					break;
				case PK_INVALID:
					check_set_err(c, i, why);
					break;
				default:
					break;
				}
				json_decref(msg);
			}
			if (!fn->up && (got == 0 || (got < 0 && errno != EAGAIN &&
			    errno != EINTR))) {
				check_set_err(c, i, "the link closed before the "
				    "agent's hello");
				fleet_close_node(fn);
			}
		}
	}
	for (int i = 0; i < f->n; i++) {
		if (f->nodes[i].fd >= 0 && !f->nodes[i].up)
			check_set_err(c, i, "no hello from the agent in time");
	}
	free(pfd);
}

/* A version from the node's hello, sanitized into cell. */
static void
check_version(const struct fleet_node *fn, const char *key, char *cell)
{
	const char *v = json_string_value(json_object_get(json_object_get(
	    fn->hello, "versions"), key));

	sanitize(cell, 256, !fn->up ? "-" : v != NULL ? v : "n/a");
}

/* One row of cells for a node. */
static void
check_row(const struct fleet_node *fn, char cells[NCOLS][256])
{
	const struct node_spec *n = fn->spec;
	bool	 local = strcmp(n->host, "local") == 0;
	int	 busy = 0, usable;
	size_t	 i;
	json_t	*w, *gpus;

	snprintf(cells[COL_NODE], 256, "%s", n->name);
	if (local || n->port == 0)
		snprintf(cells[COL_HOST], 256, "%s%s%s", n->user, n->user[0] ?
		    "@" : "", n->host);
	else
		snprintf(cells[COL_HOST], 256, "%s%s%s:%d", n->user, n->user[0] ?
		    "@" : "", n->host, n->port);
	snprintf(cells[COL_REACH], 256, "%s", fn->stage >= FLEET_REACHED ||
	    fn->up ? "yes" : "no");
	snprintf(cells[COL_AUTH], 256, "%s", local ? "-" : fn->stage >=
	    FLEET_AUTHED || fn->up ? "yes" : fn->stage >= FLEET_TRUSTED ?
	    "no" : "-");
	check_version(fn, "hunter", cells[COL_HUNTER]);
	check_version(fn, "build", cells[COL_BUILD]);
	check_version(fn, "gloo", cells[COL_GLOO]);
	check_version(fn, "nccl", cells[COL_NCCL]);
	check_version(fn, "cuda", cells[COL_CUDA]);
	check_version(fn, "driver", cells[COL_DRIVER]);
	/* The ranks running there hold slots (counted as CPU ones). */
	json_array_foreach(json_object_get(fn->hello, "workers"), i, w)
		busy += json_is_true(json_object_get(w, "running"));
	snprintf(cells[COL_CPU], 256, "%d/%d", n->cpu_slots - busy > 0 ?
	    n->cpu_slots - busy : 0, n->cpu_slots);
	/* Cuda slots count only as far as the agent sees GPUs (NVML), as
	 * placement counts them. */
	gpus = json_object_get(fn->hello, "gpus");
	usable = json_is_integer(gpus) && json_integer_value(gpus) <
	    n->cuda_slots ? (int)json_integer_value(gpus) : n->cuda_slots;
	snprintf(cells[COL_GPU], 256, "%d/%d", usable, n->cuda_slots);
	check_blas_cells(fn, cells[COL_BLAS], cells[COL_KERNEL],
	    cells[COL_GFLOPS], 256);
}

static void
check_table(const struct fleet *f)
{
	char	(*cells)[NCOLS][256] = xcalloc((size_t)f->n, sizeof *cells);
	int	 width[NCOLS];

	for (int c = 0; c < NCOLS; c++)
		width[c] = (int)strlen(check_heads[c]);
	for (int i = 0; i < f->n; i++) {
		check_row(&f->nodes[i], cells[i]);
		for (int c = 0; c < NCOLS; c++) {
			if ((int)strlen(cells[i][c]) > width[c])
				width[c] = (int)strlen(cells[i][c]);
		}
	}
	for (int c = 0; c < NCOLS; c++)
		printf("%-*s%s", width[c], check_heads[c], c + 1 < NCOLS ? "  " : "\n");
	for (int i = 0; i < f->n; i++) {
		for (int c = 0; c < NCOLS; c++)
			printf("%-*s%s", width[c], cells[i][c], c + 1 < NCOLS ?
			    "  " : "\n");
	}
	free(cells);
}

/* Where the cluster came from, when Slurm said it. */
static void
check_slurm(const struct cluster_spec *c)
{
	int	 spares = 0;

	for (int i = 0; i < c->n_nodes; i++)
		spares += c->nodes[i].spare;
	printf("cluster: from Slurm job %s, %d node%s (%d spare%s), reached "
	    "through srun\n", c->slurm_job, c->n_nodes, c->n_nodes == 1 ? "" :
	    "s", spares, spares == 1 ? "" : "s");
}

/*
 * The collective mesh (Gloo's TCP) has no authentication or encryption:
 * warn of a node whose addr is public, and fail one whose addr is every
 * interface (the ranks would refuse to bind it).  An addr that does not
 * resolve here may on the node: nothing is said of it.
 */
static int
check_addrs(const struct fleet *f)
{
	enum ip_scope	 scope;
	char		 err[512];
	int		 rc = 0;

	for (int i = 0; i < f->n; i++) {
		const struct fleet_node *fn = &f->nodes[i];

		if (ip_scope_of(fn->addr, &scope, err, sizeof err) != 0)
			continue;
		if (scope == IP_SCOPE_WILDCARD) {
			printf("node %s: addr %s is every interface; the "
			    "collective mesh is bound to one address only: set "
			    "addr to the node's address on the training "
			    "network\n", fn->spec->name, fn->addr);
			rc = 1;
		} else if (scope == IP_SCOPE_PUBLIC)
			printf("warning: node %s: addr %s is a public address; "
			    "the collective mesh (Gloo TCP) has no "
			    "authentication or encryption: keep the training "
			    "fabric on a private network or VLAN (hunter(1), "
			    "SECURITY)\n", fn->spec->name, fn->addr);
	}
	return rc;
}

/* The lock keeps a running console's agents from being taken over. */
static int
check_lock(char *dir, size_t len)
{
	pid_t	 holder;
	int	 fd;
	char	 err[1024];

	if (statedir_path(dir, len) != 0) {
		fprintf(stderr, "hunter check: no state directory: set "
		    "HUNTER_STATE_DIR\n");
		return -1;
	}
	if (statedir_make(dir, err, sizeof err) != 0) {
		fprintf(stderr, "hunter check: %s\n", err);
		return -1;
	}
	if ((fd = lock_take(dir, &holder)) < 0) {
		if (holder > 0)
			fprintf(stderr, "hunter check: a console (pid %ld) is "
			    "using %s; checking now would take its agents over. "
			    " Run hunter check before the console, or stop it\n",
			    (long)holder, dir);
		else
			fprintf(stderr, "hunter check: %s/backend.lock: %s\n",
			    dir, strerror(errno));
	}
	return fd;
}

static const struct cmd_option check_options[] = {
	SPEC_CLUSTER_OPTIONS,
	{ "accept-new-hostkeys", 'A', NULL, "add the SSH host keys of nodes "
	    "not yet in known_hosts (a changed key is never accepted)" },
	{ "push", 'p', NULL, "copy this binary over SFTP to the nodes that "
	    "lack it or run another build" },
	{ NULL }
};

static int
cmd_check(const struct cmd_args *a)
{
	struct cluster_spec	 cluster;
	struct fleet		 f;
	struct check_ctx	 ctx = { .f = &f };
	char			 dir[4096], err[4096], clean[4096];
	json_t			*own;
	int			 lock, rc = 0;

	fleet_accept_new_hostkeys = cmd_has(a, "accept-new-hostkeys");
	fleet_push = cmd_has(a, "push");
	if ((rc = spec_open_cluster_args(a, false, &cluster, stderr)) != 0)
		return rc == SPEC_CLUSTER_USAGE ? 2 : 1;
	if ((lock = check_lock(dir, sizeof dir)) < 0) {
		spec_cluster_free(&cluster);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	fleet_init(&f, &cluster, dir);
	ctx.errs = xcalloc((size_t)f.n, sizeof *ctx.errs);
	fleet_connect(&f, check_report, &ctx);
	check_collect(&ctx, clock_mono() + CHECK_HELLO_TIMEOUT_S);
	check_blas_measure(&f, ctx.errs);
	if (cluster.slurm_job[0] != '\0')
		check_slurm(&cluster);
	check_table(&f);
	check_blas_warn(&f);
	for (int i = 0; i < f.n; i++) {
		if (ctx.errs[i] != NULL || !f.nodes[i].up) {
			printf("node %s: %s\n", f.nodes[i].spec->name, ctx.errs[i] ?
			    ctx.errs[i] : "not connected");
			rc = 1;
		}
		free(ctx.errs[i]);
	}
	if (check_addrs(&f) != 0)
		rc = 1;
	own = proto_hello("backend", NULL);
	if (fleet_check_versions(&f, own, err, sizeof err) != 0) {
		sanitize(clean, sizeof clean, err);	/* quotes the hellos */
		printf("%s\n", clean);
		rc = 1;
	} else if (rc == 0)
		printf("ok: %d node%s run%s hunter %s (build %s), as this "
		    "console does\n", f.n, f.n == 1 ? "" : "s", f.n == 1 ? "s" :
		    "", json_string_value(json_object_get(
		    json_object_get(own, "versions"), "hunter")),
		    json_string_value(json_object_get(json_object_get(own,
		    "versions"), "build")));
	json_decref(own);
	free(ctx.errs);
	fleet_free(&f);
	spec_cluster_free(&cluster);
	close(lock);
	return rc;
}

const struct cmd_entry cmd_check_entry = {
	.name = "check",
	.usage = "",
	.summary = "preflight: reach every node, compare the versions its "
	    "agent reports, measure its BLAS kernel",
	.options = check_options,
	.args_min = 0,
	.args_max = 0,
	.exec = cmd_check,
};
