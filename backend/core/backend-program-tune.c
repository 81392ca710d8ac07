/*
 * backend-program-tune.c: autotune by trials for a program job
 * (program.batch.micro: auto).  Before the run, the whole group runs
 * short trials, each a generation of its own with HUNTER_MICRO_BATCH set
 * and HUNTER_TRIAL_STEPS=k: the program runs k steps and exits 0.  A
 * trial fails as out of memory when a rank's exit says so (its words on
 * stderr, the declared exit status, or the agent's kill for an RSS over
 * memory_per_rank; backend/agent/program.c).  The sizes tried are the
 * multiples of program.batch.min up to max, bisected, so at most
 * ceil(log2(max/min)) + 1 trials find the largest that fits; of those
 * that fit and were timed, the largest wins unless a smaller one was 3%
 * faster.  The result goes to the journal (an autotune record), so a
 * resume runs with it and does not tune again.
 */
#include <stdio.h>
#include <string.h>

#include "lib/clock.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

/* A smaller size must be this much faster to win over the largest. */
#define TUNE_FASTER	1.03

bool
program_tune_active(const struct job_state *j)
{
	return j->prog != NULL && j->prog->tune.active;
}

int
program_tune_size(const struct job_state *j)
{
	return j->prog->tune.k * j->spec.program.batch.min;
}

void
program_tune_begin(struct backend *b, struct job_state *j)
{
	struct program_state *ps = j->prog;
	int	 min = j->spec.program.batch.min, max = j->spec.program.batch.max;

	ps->tune.active = true;
	ps->tune.lo = 0;
	ps->tune.hi = max / min + 1;
	ps->tune.k = (ps->tune.lo + ps->tune.hi) / 2;
	ps->tune.started = clock_mono();
	backend_event(b, j->name, EV_AUTOTUNE, -1, NULL, "trials of %d steps "
	    "find the largest micro-batch among the multiples of %d up to %d "
	    "under memory_per_rank (%.0f MiB); first %d",
	    j->spec.program.batch.trial_steps, min, max,
	    j->spec.resources.memory_per_rank / 1048576.0,
	    program_tune_size(j));
}

int
program_tune_choose(const struct program_trial *t, int n)
{
	int	 best = -1;

	for (int i = 0; i < n; i++) {
		if (t[i].fit && (best < 0 || t[i].size > t[best].size))
			best = i;
	}
	if (best < 0)
		return 0;
	for (int i = 0, largest = best; i < n; i++) {
		if (t[i].fit && i != largest && t[i].samples_per_s >
		    TUNE_FASTER * t[largest].samples_per_s &&
		    t[i].samples_per_s > t[best].samples_per_s &&
		    t[largest].samples_per_s > 0)
			best = i;
	}
	return t[best].size;
}

/* The job ends here, failed, with why. */
static void
tune_fail(struct backend *b, struct job_state *j, const char *why)
{
	j->prog->tune.active = false;
	j->prog->giving_up = true;
	backend_event(b, j->name, EV_FAILED, -1, NULL, "autotune: %s; the job "
	    "fails", why);
	snprintf(j->reason, sizeof j->reason, "autotune: %s", why);
	job_end(b, j, JOB_FAILED, "%s", j->reason);
}

/* Every rank of the trial has exited: judge it, then the next. */
static void
tune_judge(struct backend *b, struct job_state *j)
{
	struct program_state *ps = j->prog;
	struct program_trial *t = &ps->tune.t[ps->tune.n++];
	double	 sps = 0;
	int	 nsps = 0, size;
	json_t	*trials, *rec;

	t->size = program_tune_size(j);
	t->fit = !ps->tune.oom && !ps->tune.bad;
	if (!ps->tune.oom && ps->tune.bad) {
		char	 why[600];

		snprintf(why, sizeof why, "the trial at micro-batch %d failed, "
		    "not for memory: %s", t->size, ps->tune.bad_why);
		tune_fail(b, j, why);
		return;
	}
	for (int r = 0; r < j->world; r++) {
		if (j->ranks[r].known & RM_BIT(SAMPLES_PER_S)) {
			sps += j->ranks[r].samples_per_s;
			nsps++;
		}
	}
	t->samples_per_s = nsps > 0 ? sps / nsps : 0;
	snprintf(t->why, sizeof t->why, "%s", ps->tune.oom ? ps->tune.why : "");
	backend_event(b, j->name, EV_AUTOTUNE, -1, NULL, "trial %d: micro-batch "
	    "%d %s%s%s", ps->tune.n, t->size, t->fit ? "fits" : "does not fit",
	    t->fit ? "" : ": ", t->fit ? "" : t->why);
	if (t->fit)
		ps->tune.lo = ps->tune.k;
	else
		ps->tune.hi = ps->tune.k;
	ps->tune.oom = ps->tune.bad = ps->tune.stopping = false;
	ps->tune.why[0] = ps->tune.bad_why[0] = '\0';
	if (ps->tune.hi - ps->tune.lo > 1 && ps->tune.n < PROGRAM_TRIALS_MAX) {
		ps->tune.k = (ps->tune.lo + ps->tune.hi) / 2;
		backend_launch_generation(b, j);
		return;
	}
	if ((size = program_tune_choose(ps->tune.t, ps->tune.n)) == 0) {
		char	 why[600];

		snprintf(why, sizeof why, "not even micro-batch %d fits in "
		    "memory_per_rank (%s)", j->spec.program.batch.min, t->why);
		tune_fail(b, j, why);
		return;
	}
	trials = json_array();
	for (int i = 0; i < ps->tune.n; i++)
		json_array_append_new(trials, json_pack("{s:i, s:b, s:f, s:s}",
		    "size", ps->tune.t[i].size, "fit", ps->tune.t[i].fit,
		    "samples_per_s", ps->tune.t[i].samples_per_s, "why",
		    ps->tune.t[i].why));
	rec = json_pack("{s:s, s:s, s:i, s:i, s:f, s:I, s:o, s:b}", "t",
	    MSG_AUTOTUNE, "job", j->name, "micro_batch", size, "accum", 1,
	    "seconds", clock_mono() - ps->tune.started, "budget",
	    (json_int_t)j->spec.resources.memory_per_rank, "trials", trials,
	    "program", 1);
	journal_append(b->journal, rec);
	backend_emit(b, rec);
	json_decref(rec);
	ps->micro = size;
	ps->tune.active = false;
	backend_event(b, j->name, EV_AUTOTUNE, -1, NULL, "micro-batch %d after "
	    "%d trials in %.1f s; the run uses it", size, ps->tune.n,
	    clock_mono() - ps->tune.started);
	/* The trials' figures are not the run's. */
	memset(&j->sum, 0, sizeof j->sum);	/* a trial's is not the run's */
	json_decref(j->epochs);
	j->epochs = NULL;
	backend_launch_generation(b, j);
}

void
program_tune_exit(struct backend *b, struct job_state *j, int r,
    const json_t *msg)
{
	struct program_state *ps = j->prog;
	struct rank_state *rs = &j->ranks[r];
	json_t		*sig = json_object_get(msg, "signal");
	json_int_t	 code = json_integer_value(json_object_get(msg, "code"));
	const char	*reason = json_string_value(json_object_get(msg, "reason"));
	char		 what[400];

	if (rs->phase != RANK_RUNNING)
		return;
	rank_set_phase(b, j, r, RANK_EXITED, "its trial ended");
	if (json_is_integer(sig))
		snprintf(what, sizeof what, "rank %d: killed by signal %d%s%s%s",
		    r, (int)json_integer_value(sig), reason ? " (" : "",
		    reason ? reason : "", reason ? ")" : "");
	else
		snprintf(what, sizeof what, "rank %d: exited with status %d%s%s%s",
		    r, (int)code, reason ? " (" : "", reason ? reason : "",
		    reason ? ")" : "");
	if (json_is_true(json_object_get(msg, "oom"))) {
		if (!ps->tune.oom)
			snprintf(ps->tune.why, sizeof ps->tune.why, "%s", what);
		ps->tune.oom = true;
	} else if (json_is_integer(sig) || code != 0) {
		if (!ps->tune.bad)
			snprintf(ps->tune.bad_why, sizeof ps->tune.bad_why, "%s",
			    what);
		ps->tune.bad = true;
	}
	if ((ps->tune.oom || ps->tune.bad) && !ps->tune.stopping) {
		ps->tune.stopping = true;
		backend_send_cmd(b, j, JOB_CMD_STOP);
	}
	for (int i = 0; i < j->world; i++) {
		if (j->ranks[i].phase == RANK_RUNNING)
			return;
	}
	tune_judge(b, j);
}
