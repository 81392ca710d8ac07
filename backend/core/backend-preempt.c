/*
 * backend-preempt.c: the end of an allocation, announced.  Slurm signals
 * a job before it kills it (preemption, the time limit, scancel
 * --signal); the front ends turn SIGTERM and SIGUSR1 into
 * backend_preempt().  Every running job then checkpoints and stops at
 * one step, as a stop command makes it; nothing is launched, relaunched
 * or failed over any more, since the nodes are going away; and the
 * journal says what was asked and where each job stopped, so that the
 * next start in the same state directory (a requeued job:
 * SLURM_RESTART_COUNT > 0, or --resume) resumes from there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

static void
preempt_journal(struct backend *b, const struct job_state *j,
    const char *reason)
{
	char	 err[256];
	json_t	*rec = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:s, s:i}",
	    "t", MSG_DECISION, "job", j->name, "kind", "preempted", "reason",
	    reason, "generation", j->generation);

	if (rec == NULL || journal_append(b->journal, rec) != 0)
		backend_event(b, j->name, EV_REFUSED, -1, NULL, "the journal did "
		    "not take the preemption: %s", rec == NULL ? err :
		    strerror(errno));
	json_decref(rec);
}

int
backend_preempt(struct backend *b, const char *why)
{
	bool	 first = !b->preempting;
	int	 left = 0;
	char	 reason[512];

	b->preempting = true;
	for (int i = 0; i < b->njobs; i++) {
		struct job_state *j = &b->jobs[i];

		if (job_done(j))
			continue;
		if (j->phase == JOB_QUEUED) {
			/* Never launched: its next start submits it again. */
			backend_event(b, j->name, EV_PREEMPTED, -1, NULL, "%s: "
			    "%s was still queued%s%s; it is not started", why,
			    j->name, j->reason[0] != '\0' ? ": " : "", j->reason);
			job_end(b, j, JOB_STOPPED, "%s, in the queue", why);
			continue;
		}
		/* No rank runs to stop at a step (a re-formation between
		 * generations, or all failed): it ends now. */
		if (job_ranks_running(j) == 0) {
			job_stop(b, j, why);
			continue;
		}
		left++;
		if (!first)
			continue;
		snprintf(reason, sizeof reason, "%s: every rank checkpoints and "
		    "stops at one step", why);
		preempt_journal(b, j, reason);
		/* A re-formation under way has sent its stop already. */
		job_stop(b, j, reason);
		backend_event(b, j->name, EV_PREEMPTED, -1, NULL, "%s", reason);
	}
	return left;
}

void
backend_preempt_done(struct backend *b, struct job_state *j)
{
	const struct job_summary *s = &j->sum;
	const char	*ck = SUMMARY_HAS(s, checkpoint) ? s->checkpoint : "";
	char		 reason[1200];

	snprintf(reason, sizeof reason, "%s %s at step %lld%s%s; a requeued "
	    "start (SLURM_RESTART_COUNT > 0) or --resume continues from there",
	    j->name, job_phase_name(j->phase), s->steps, ck[0] != '\0' ?
	    " with its checkpoint " : "", ck);
	preempt_journal(b, j, reason);
	backend_event(b, j->name, EV_PREEMPTED, -1, NULL, "%s", reason);
}
