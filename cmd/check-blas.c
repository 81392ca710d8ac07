/*
 * check-blas.c: `hunter check`'s BLAS: each node's library, kernel (and
 * who chose it: the library, hunter from cpuid, or OPENBLAS_CORETYPE)
 * and sgemm GFLOP/s on one thread.  After the hellos each node in turn
 * measures (the agent's "bench-sgemm" command, in the kernel its ranks
 * inherit), so that nodes sharing a machine never measure at once.  A
 * node below half the best node of the same CPU model is measured again
 * (twice at most) and, if it stays there, named: it is a straggler that
 * nothing else would explain, most often a kernel the library chose
 * wrong or an operator's OPENBLAS_CORETYPE.  A node whose operator's
 * OPENBLAS_CORETYPE runs under 90% of the kernel cpuid allows there
 * (the agent measures that one too, "best_gflops") is named as well,
 * even when every node is alike: an old export in a profile halves a
 * new CPU (0.3.21's Haswell on a Zen 5 runs half its Cooperlake).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "tui/sanitize.h"
#include "cmd/check.h"

/* How long one node may take to measure (it runs 0.3 s of sgemm). */
#define CHECK_BLAS_TIMEOUT_S	20
/* Below this share of the best node of its CPU, a node is named. */
#define CHECK_BLAS_SLOW		0.5
/* How many more times a node below that is measured before it is named. */
#define CHECK_BLAS_AGAIN	2
/* Below this share of the kernel cpuid allows on its own node, an
 * operator's OPENBLAS_CORETYPE is named (the bench's target is 90%). */
#define CHECK_BLAS_OWN		0.9

static const json_t *
check_blas(const struct fleet_node *fn)
{
	return json_object_get(fn->hello, "blas");
}

static double
check_num(const struct fleet_node *fn, const char *key)
{
	return json_number_value(json_object_get(check_blas(fn), key));
}

static double
check_gflops(const struct fleet_node *fn)
{
	return check_num(fn, "gflops");
}

static const char *
check_str(const struct fleet_node *fn, const char *key)
{
	const char *v = json_string_value(json_object_get(check_blas(fn), key));

	return v != NULL ? v : "unknown";
}

/* Wait for node fn's answer to bench-sgemm; NULL with why in err. */
static json_t *
check_blas_answer(struct fleet_node *fn, char *err, size_t errlen)
{
	double	 deadline = clock_mono() + CHECK_BLAS_TIMEOUT_S;
	json_t	*msg;

	for (;;) {
		struct pollfd	 pfd = { .fd = fn->fd, .events = POLLIN };
		int		 left = (int)((deadline - clock_mono()) * 1000);
		ssize_t		 got;
		int		 rc;

		if (fleet_flush(fn) != 0 || fn->fd < 0) {
			snprintf(err, errlen, "the link closed while it measured");
			return NULL;
		}
		if (proto_queue_waiting(&fn->q) > 0)
			pfd.events |= POLLOUT;
		if (left <= 0) {
			snprintf(err, errlen, "no sgemm figure in %d s",
			    CHECK_BLAS_TIMEOUT_S);
			return NULL;
		}
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			continue;
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		got = proto_reader_fill(&fn->rd, fn->fd);
		while ((rc = proto_reader_next(&fn->rd, &msg)) == 1) {
			enum proto_kind k = proto_kind(msg, NULL, 0);
			const char *cmd = json_string_value(json_object_get(msg,
			    "cmd"));

			if (k == PK_OK && cmd != NULL &&
			    strcmp(cmd, "bench-sgemm") == 0)
				return msg;
			if (k == PK_ERROR) {
				snprintf(err, errlen, "%s", json_string_value(
				    json_object_get(msg, "reason")));
				json_decref(msg);
				return NULL;
			}
			json_decref(msg);
		}
		if (rc < 0 || got == 0 || (got < 0 && errno != EAGAIN &&
		    errno != EINTR)) {
			snprintf(err, errlen, "the link closed while it measured");
			return NULL;
		}
	}
}

/*
 * Ask node i to measure; its answer replaces the "blas" of its hello.
 * Measured again, it keeps the higher of this figure and the last (a
 * neighbour that loads the machine only ever slows a measurement down);
 * the first time, a figure of an earlier check that its hello carried
 * does not count.
 */
static void
check_blas_measure_one(struct fleet *f, int i, const json_t *ask,
    bool again, char **errs)
{
	struct fleet_node *fn = &f->nodes[i];
	char	 err[512] = "the link closed before it measured sgemm";
	char	 clean[512];
	double	 before = again ? check_gflops(fn) : 0, now;
	json_t	*ans, *blas;

	/* An agent of a release before this one has no "blas" and would
	 * not answer. */
	if (!fn->up || fn->fd < 0 || check_blas(fn) == NULL)
		return;
	ans = fleet_send(fn, ask) == 0 ? check_blas_answer(fn, err,
	    sizeof err) : NULL;
	if (ans != NULL && json_is_object(blas = json_object_get(ans,
	    "blas"))) {
		now = json_number_value(json_object_get(blas, "gflops"));
		if (now > 0 && before > now)
			json_object_set_new(blas, "gflops", json_real(before));
		json_object_set(fn->hello, "blas", blas);
	}
	if (ans != NULL && json_is_string(json_object_get(ans, "reason")))
		snprintf(err, sizeof err, "the BLAS kernel %s %s",
		    check_str(fn, "kernel"), json_string_value(
		    json_object_get(ans, "reason")));
	else if (ans != NULL)
		err[0] = '\0';
	if (err[0] != '\0' && errs[i] == NULL) {
		sanitize(clean, sizeof clean, err);
		errs[i] = xstrdup(clean);
	}
	json_decref(ans);
}

/* The node that runs sgemm fastest on fn's CPU model, or NULL. */
static const struct fleet_node *
check_blas_best(const struct fleet *f, const struct fleet_node *fn)
{
	const struct fleet_node *best = NULL;

	for (int j = 0; j < f->n; j++) {
		const struct fleet_node *o = &f->nodes[j];

		if (o->up && check_gflops(o) > 0 && strcmp(check_str(o, "cpu"),
		    check_str(fn, "cpu")) == 0 && (best == NULL ||
		    check_gflops(o) > check_gflops(best)))
			best = o;
	}
	return best;
}

static bool
check_blas_slow(const struct fleet *f, const struct fleet_node *fn)
{
	const struct fleet_node *best = check_blas_best(f, fn);
	double	 g = check_gflops(fn);

	return fn->up && g > 0 && best != NULL &&
	    g < CHECK_BLAS_SLOW * check_gflops(best);
}

void
check_blas_measure(struct fleet *f, char **errs)
{
	json_t	*ask = json_pack("{s:s, s:s}", "t", MSG_CMD, "cmd",
	    "bench-sgemm");

	for (int i = 0; i < f->n; i++)
		check_blas_measure_one(f, i, ask, false, errs);
	/*
	 * A node below half the best is measured again, up to
	 * CHECK_BLAS_AGAIN times, before it is named: a test or a job that
	 * shared its cores for a moment (or the other hyperthread of its
	 * core, which CPU time does not see) halves one figure, but not
	 * three; a wrong kernel stays slow.
	 */
	for (int i = 0; i < f->n; i++)
		for (int k = 0; k < CHECK_BLAS_AGAIN &&
		    check_blas_slow(f, &f->nodes[i]); k++)
			check_blas_measure_one(f, i, ask, true, errs);
	json_decref(ask);
}

void
check_blas_cells(const struct fleet_node *fn, char *lib, char *kernel,
    char *gflops, size_t len)
{
	double	 g = check_gflops(fn);
	char	 raw[256];

	if (!fn->up || check_blas(fn) == NULL) {
		snprintf(lib, len, "-");
		snprintf(kernel, len, "-");
		snprintf(gflops, len, "-");
		return;
	}
	sanitize(lib, len, check_str(fn, "library"));
	snprintf(raw, sizeof raw, "%s (%s)", check_str(fn, "kernel"),
	    check_str(fn, "by"));
	sanitize(kernel, len, raw);
	if (g > 0)
		snprintf(gflops, len, "%.1f", g);
	else
		snprintf(gflops, len, "-");
}

/* Whether node fn's operator chose a kernel well under what cpuid
 * allows there. */
static bool
check_blas_own(const struct fleet_node *fn)
{
	double	 g = check_gflops(fn), b = check_num(fn, "best_gflops");

	return fn->up && g > 0 && b > 0 && strcmp(check_str(fn, "by"),
	    "operator") == 0 && g < CHECK_BLAS_OWN * b;
}

static void
check_blas_warn_own(const struct fleet_node *fn)
{
	char	 kernel[64], best[64], runs[64], as[80] = "";
	double	 b = check_num(fn, "best_gflops");

	sanitize(kernel, sizeof kernel, check_str(fn, "kernel"));
	sanitize(best, sizeof best, check_str(fn, "best"));
	sanitize(runs, sizeof runs, check_str(fn, "best_runs"));
	if (strcmp(runs, best) != 0)
		snprintf(as, sizeof as, " (as %s)", runs);
	printf("warning: node %s runs kernel %s, which its OPENBLAS_CORETYPE "
	    "(the operator's) asks for, at %.1f GFLOP/s a thread; %s, which "
	    "cpuid allows there, runs %.1f%s (%.2fx): unset OPENBLAS_CORETYPE "
	    "where the agent starts and hunter chooses\n", fn->spec->name,
	    kernel, check_gflops(fn), best, b, as, b / check_gflops(fn));
}

void
check_blas_warn(const struct fleet *f)
{
	for (int i = 0; i < f->n; i++) {
		const struct fleet_node *fn = &f->nodes[i], *best;
		char	 cpu[256], kernel[64], by[64], bk[64];

		if (check_blas_own(fn))
			check_blas_warn_own(fn);
		if (!check_blas_slow(f, fn))
			continue;
		best = check_blas_best(f, fn);
		sanitize(cpu, sizeof cpu, check_str(fn, "cpu"));
		sanitize(kernel, sizeof kernel, check_str(fn, "kernel"));
		sanitize(by, sizeof by, check_str(fn, "by"));
		sanitize(bk, sizeof bk, check_str(best, "kernel"));
		printf("warning: node %s runs sgemm at %.1f GFLOP/s a thread, "
		    "under half of node %s's %.1f on the same CPU (%s): its "
		    "kernel is %s (%s), %s's %s; a straggler for any job placed "
		    "there\n", fn->spec->name, check_gflops(fn), best->spec->name,
		    check_gflops(best), cpu, kernel, by, best->spec->name, bk);
	}
}
