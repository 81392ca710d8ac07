/*
 * agent-blas.c: the node's BLAS, as `hunter check` and the console see
 * it.  The agent's own process runs the kernel its ranks inherit
 * (lib/blas.h: blas_reexec() ran in main), so what it reports of itself
 * holds for them: the library, the kernel, who chose it, what cpuid
 * allows, the OPENBLAS_CORETYPE they inherit, the CPU and its cores.  Its GFLOP/s are measured when a
 * backend asks (the "bench-sgemm" command: hunter check asks each node
 * in turn, so that the nodes of one machine do not share its cores while
 * they measure), on one thread, after the reference check, and from then
 * on also in the node's metrics.  Timed by CPU time: the nodes of one
 * machine, or a machine others load, measure their kernel, not the load.
 * Where the operator's OPENBLAS_CORETYPE names another kernel than the
 * one cpuid allows, that one is measured too, in a child process
 * (blas_gflops_core), so that hunter check can say what the operator's
 * choice costs.  The agent answers nothing else meanwhile (about a
 * second); a check is the only thing that asks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "lib/blas.h"
#include "lib/cpuid.h"
#include "backend/agent/agent.h"

/* Seconds of sgemm a measurement takes, at 1024 x 1024. */
#define AGENT_BLAS_SECS	0.3

json_t *
agent_blas_json(const struct agent *a)
{
	static const char *const by[] = { [BLAS_BY_LIBRARY] = "library",
	    [BLAS_BY_HUNTER] = "hunter", [BLAS_BY_OPERATOR] = "operator" };
	struct blas_info bi;
	const char	*ct;
	json_t		*o;

	blas_info(&bi);
	o = json_pack("{s:s, s:s, s:s, s:s, s:i}", "library", bi.library,
	    "kernel", bi.kernel, "by", by[bi.by], "cpu", bi.cpu, "cores",
	    cpu_cores());
	if (o == NULL)
		return json_object();
	if (bi.best[0] != '\0')
		json_object_set_new(o, "best", json_string(bi.best));
	/* The OPENBLAS_CORETYPE the ranks inherit, whoever set it. */
	if ((ct = getenv("OPENBLAS_CORETYPE")) != NULL && *ct != '\0')
		json_object_set_new(o, "coretype", json_string(ct));
	if (a->blas_gflops > 0) {
		json_object_set_new(o, "gflops", json_real(a->blas_gflops));
		json_object_set_new(o, "check", json_real(a->blas_err));
	}
	if (a->blas_best_gflops > 0) {
		json_object_set_new(o, "best_gflops",
		    json_real(a->blas_best_gflops));
		json_object_set_new(o, "best_runs",
		    json_string(a->blas_best_ran));
	}
	return o;
}

void
agent_bench_sgemm(struct agent *a, struct agent_peer *p)
{
	struct blas_info bi;
	json_t		*ok;

	openblas_set_num_threads(1);
	a->blas_err = blas_check();
	a->blas_gflops = (a->blas_err <= BLAS_CHECK_TOLERANCE) ?
	    blas_gflops(1024, AGENT_BLAS_SECS, true) : 0;
	agent_log(a, "sgemm on one thread: %.1f GFLOP/s (reference error "
	    "%.1e)", a->blas_gflops, a->blas_err);
	blas_info(&bi);
	a->blas_best_gflops = 0;
	if (bi.by == BLAS_BY_OPERATOR && bi.best[0] != '\0' &&
	    strcmp(bi.best, bi.kernel) != 0) {
		a->blas_best_gflops = blas_gflops_core(bi.best, 1024,
		    AGENT_BLAS_SECS, a->blas_best_ran, sizeof a->blas_best_ran);
		agent_log(a, "kernel %s, which cpuid allows (OPENBLAS_CORETYPE "
		    "asks for %s), in a child process: %.1f GFLOP/s",
		    bi.best, bi.kernel, a->blas_best_gflops);
	}
	ok = json_pack("{s:s, s:s, s:s, s:o}", "t", MSG_OK, "cmd",
	    "bench-sgemm", "node", a->node, "blas", agent_blas_json(a));
	if (!(a->blas_err <= BLAS_CHECK_TOLERANCE))
		json_object_set_new(ok, "reason", json_string("the kernel "
		    "disagrees with the reference GEMM"));
	proto_queue_send_new(&p->q, ok);
}
