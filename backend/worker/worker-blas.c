/*
 * worker-blas.c: the BLAS kernel a rank runs, said where the operator
 * sees it.  Before it trains, the rank checks the kernel against the
 * reference GEMM (lib/blas.h) and refuses one that computes wrong; its
 * "started" event names the library, the kernel, who chose it, the
 * threads and the check's error (hunter run's start line, the console's
 * events); its metrics carry the cached sgemm peak of that same kernel
 * and thread count (lib/peak.h) and the MFU against it, so a peak that
 * another kernel measured is never read.
 */
#include <stdio.h>
#include <string.h>

#include "lib/peak.h"
#include "backend/worker/worker-internal.h"

int
worker_blas(struct worker *w, char *err, size_t errlen)
{
	struct peak_key	 k;

	blas_info(&w->blas);
	w->blas_err = blas_check();
	if (!(w->blas_err <= BLAS_CHECK_TOLERANCE)) {
		snprintf(err, errlen, "the BLAS kernel %s (%s, %s) disagrees "
		    "with the reference GEMM by %.2g, over %.0e: set "
		    "OPENBLAS_CORETYPE to another kernel for this node",
		    w->blas.kernel, w->blas.library, blas_by_words(w->blas.by),
		    w->blas_err, BLAS_CHECK_TOLERANCE);
		return -1;
	}
	k = (struct peak_key){ w->blas.cpu, w->blas.library, w->blas.kernel,
	    w->blas.threads };
	if (peak_read(NULL, &k, &w->peak_gflops) != 0)
		w->peak_gflops = 0;
	return 0;
}

/* The "started" event's BLAS fields, and its reason with them. */
json_t *
worker_blas_started(struct worker *w, json_t *ev, const char *reason)
{
	static const char *const by[] = { [BLAS_BY_LIBRARY] = "library",
	    [BLAS_BY_HUNTER] = "hunter", [BLAS_BY_OPERATOR] = "operator" };
	char	 text[1024];

	if (ev == NULL)
		return NULL;
	snprintf(text, sizeof text, "%s; %s kernel %s (%s), %d BLAS "
	    "thread%s, within %.1e of the reference GEMM", reason,
	    w->blas.library, w->blas.kernel, blas_by_words(w->blas.by),
	    w->blas.threads, w->blas.threads == 1 ? "" : "s", w->blas_err);
	json_object_set_new(ev, "reason", json_string(text));
	json_object_set_new(ev, "blas", json_string(w->blas.library));
	json_object_set_new(ev, "kernel", json_string(w->blas.kernel));
	json_object_set_new(ev, "kernel_by", json_string(by[w->blas.by]));
	json_object_set_new(ev, "blas_threads", json_integer(w->blas.threads));
	json_object_set_new(ev, "blas_check", json_real(w->blas_err));
	json_object_set_new(ev, "cpu", json_string(w->blas.cpu));
	return ev;
}

/*
 * The peak and the MFU of a report: the job's model FLOPs a second over
 * world times this rank's peak.  Unknown without a peak of this kernel,
 * for a model that does not count its FLOPs, and above 1, where the
 * cached figure cannot have been the peak (measured under load): a
 * warning then says to measure it again.
 */
void
worker_blas_report(struct worker *w, struct rank_report *rr)
{
	const struct spec_model_kind *k = spec_model_kind(w->job.model.type);
	double	 mfu;

	rr->valid &= ~(RM_BIT(PEAK_GFLOPS) | RM_BIT(MFU));
	if (w->peak_gflops <= 0)
		return;
	rr->peak_gflops = w->peak_gflops;
	rr->valid |= RM_BIT(PEAK_GFLOPS);
	if (k == NULL || k->flops_per_sample == NULL ||
	    !(rr->valid & RM_BIT(SAMPLES_PER_S)))
		return;
	mfu = rr->samples_per_s * k->flops_per_sample(&w->job) /
	    (w->world * w->peak_gflops * 1e9);
	if (mfu <= 1) {
		rr->mfu = mfu;
		rr->valid |= RM_BIT(MFU);
	} else if (!w->mfu_warned) {
		char	 why[256];

		w->mfu_warned = true;
		snprintf(why, sizeof why, "the cached sgemm peak of kernel %s "
		    "on %d thread%s, %.3g GFLOP/s, is below what the job "
		    "reaches (MFU %.0f%%): MFU is unknown until hunter bench "
		    "sgemm measures it again", w->blas.kernel, w->blas.threads,
		    w->blas.threads == 1 ? "" : "s", w->peak_gflops, 100 * mfu);
		if (w->rank == 0)
			worker_on_event(w, EV_WARNING, why);
	}
}
