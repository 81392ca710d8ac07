/*
 * test-job.c: a job's life (backend/core/job.c).  Every pair of job
 * phases and of rank phases is tried: the moves this test lists are
 * taken, journalled as a "phase" event naming from, to and the reason,
 * and every other one is refused with the phase left as it was (and
 * aborts the process under HUNTER_STRICT_PHASES).  Then the verdict at
 * the end of a job is the backend's from what its ranks did, never a
 * rank's word: a rank that exits well without saying it finished makes
 * the job stopped, even when rank 0's summary says finished.  And a
 * migrate of a job whose ranks are on no node yet (queued) is refused:
 * it was taken, claimed a move, and made the job restart as generation 1
 * once placed (issue 27, item 8).  And a journal that rotates while a
 * job re-forms starts its new file with the job's launch record and then
 * the decision under way, which a backend that re-attaches from that
 * file alone needs to carry it out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/core/journal.h"
#include "backend/proto/event.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-sim.h"

/* The moves a job may make, written out here apart from job.c's table. */
static const char *const job_legal[] = {
	"queued placing", "queued stopped", "queued failed",
	"placing running", "placing paused", "placing reforming",
	"placing resizing", "placing stopping", "placing finished",
	"placing stopped", "placing failed",
	"running paused", "running reforming", "running resizing",
	"running stopping", "running finished", "running stopped",
	"running failed",
	"paused running", "paused reforming", "paused resizing",
	"paused stopping", "paused finished", "paused stopped",
	"paused failed",
	"reforming placing", "reforming stopping", "reforming stopped",
	"reforming failed",
	"resizing placing", "resizing stopping", "resizing stopped",
	"resizing failed",
	"stopping finished", "stopping stopped", "stopping failed",
	NULL
};

static const char *const rank_legal[] = {
	"pending running", "pending failed",
	"running exited", "running failed", "running left",
	"exited running", "exited failed",
	"failed running",
	"left running", "left failed",
	NULL
};

static bool
listed(const char *const *list, const char *from, const char *to)
{
	char	 pair[64];

	snprintf(pair, sizeof pair, "%s %s", from, to);
	for (int i = 0; list[i] != NULL; i++) {
		if (strcmp(list[i], pair) == 0)
			return true;
	}
	return false;
}

/* What the backend raised: the last phase and refused events. */
struct seen {
	int	 phase, refused;
	char	 from[32], to[32], reason[128], refusal[128];
	int	 rank;
};

static void
on_frame(void *ctx, const json_t *m)
{
	struct seen	*s = ctx;
	enum event_kind	 k = event_kind_of(m);

	if (k == EV_PHASE) {
		s->phase++;
		snprintf(s->from, sizeof s->from, "%s",
		    json_string_value(json_object_get(m, "from")));
		snprintf(s->to, sizeof s->to, "%s",
		    json_string_value(json_object_get(m, "to")));
		snprintf(s->reason, sizeof s->reason, "%s",
		    json_string_value(json_object_get(m, "reason")));
		s->rank = (int)json_integer_value(json_object_get(m, "rank"));
	} else if (k == EV_REFUSED) {
		s->refused++;
		snprintf(s->refusal, sizeof s->refusal, "%s",
		    json_string_value(json_object_get(m, "reason")));
	}
}

static struct backend *
open_backend(struct seen *seen)
{
	struct backend	*b = backend_open_sim(4, 2, 1);

	assert_non_null(b);
	memset(seen, 0, sizeof *seen);
	b->obs = (struct backend_observer){ seen, on_frame };
	return b;
}

static struct job_state *
new_job(struct backend *b, int world)
{
	struct job_state *j = backend_new_job(b, "lifejob", JOB_QUEUED);

	spec_job_defaults(&j->spec);
	j->world = world;
	j->ranks = xcalloc((size_t)world, sizeof *j->ranks);
	return j;
}

static void
t_job_moves(void **state)
{
	struct seen	 seen;
	struct backend	*b;
	struct job_state *j;
	int		 legal = 0, refused = 0;

	(void)state;
	unsetenv("HUNTER_STRICT_PHASES");
	b = open_backend(&seen);
	j = new_job(b, 1);
	for (int f = 0; f < JOB_PHASE_COUNT; f++) {
		for (int t = 0; t < JOB_PHASE_COUNT; t++) {
			bool	 want = listed(job_legal, job_phase_name(f),
			    job_phase_name(t));
			int	 ph = seen.phase, rf = seen.refused, rc;

			if (f == t)
				continue;
			job_restore_phase(j, f);
			assert_int_equal(job_phase_legal(f, t), want);
			rc = job_set_phase(b, j, t, "step %d to %d", f, t);
			if (want) {
				assert_int_equal(rc, 0);
				assert_int_equal(j->phase, t);
				assert_int_equal(seen.phase, ph + 1);
				assert_string_equal(seen.from, job_phase_name(f));
				assert_string_equal(seen.to, job_phase_name(t));
				assert_int_equal(seen.rank, -1);
				assert_non_null(strstr(seen.reason, "step"));
				legal++;
			} else {
				assert_int_equal(rc, -1);
				assert_int_equal(j->phase, f);
				assert_int_equal(seen.phase, ph);
				assert_int_equal(seen.refused, rf + 1);
				refused++;
			}
		}
	}
	/* Nothing leaves a final phase. */
	for (int t = 0; t < JOB_PHASE_COUNT; t++) {
		assert_false(job_phase_legal(JOB_FINISHED, t));
		assert_false(job_phase_legal(JOB_FAILED, t));
		assert_false(job_phase_legal(JOB_STOPPED, t));
	}
	print_message("    job phases: %d moves taken, %d refused\n", legal,
	    refused);
	assert_int_equal(legal, (int)(sizeof job_legal / sizeof *job_legal) - 1);
	backend_close(b);
}

static void
t_rank_moves(void **state)
{
	struct seen	 seen;
	struct backend	*b;
	struct job_state *j;
	int		 legal = 0;

	(void)state;
	unsetenv("HUNTER_STRICT_PHASES");
	b = open_backend(&seen);
	j = new_job(b, 2);
	for (int f = 0; f < RANK_PHASE_COUNT; f++) {
		for (int t = 0; t < RANK_PHASE_COUNT; t++) {
			bool	 want = listed(rank_legal, rank_phase_name(f),
			    rank_phase_name(t));
			int	 ph = seen.phase, rc;

			if (f == t)
				continue;
			rank_restore_phase(j, 1, f);
			assert_int_equal(rank_phase_legal(f, t), want);
			rc = rank_set_phase(b, j, 1, t, "rank move");
			assert_int_equal(rc, want ? 0 : -1);
			assert_int_equal(j->ranks[1].phase, want ? t : f);
			assert_int_equal(seen.phase, ph + want);
			if (want) {
				assert_int_equal(seen.rank, 1);
				assert_string_equal(seen.to, rank_phase_name(t));
				legal++;
			}
		}
	}
	assert_int_equal(legal, (int)(sizeof rank_legal / sizeof *rank_legal) - 1);
	backend_close(b);
}

/* Under HUNTER_STRICT_PHASES an illegal move is a crash, so the test
 * suite cannot miss one. */
static void
t_strict_aborts(void **state)
{
	pid_t	 pid;
	int	 status;

	(void)state;
	fflush(NULL);
	if ((pid = fork()) == 0) {
		struct seen	 seen;
		struct backend	*b;
		struct job_state *j;

		setenv("HUNTER_STRICT_PHASES", "1", 1);
		freopen("/dev/null", "w", stderr);
		b = open_backend(&seen);
		j = new_job(b, 1);
		job_set_phase(b, j, JOB_FINISHED, "from queued: not legal");
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

/* An exit frame of rank r: code, or a signal when sig > 0. */
static void
rank_exits(struct backend *b, struct job_state *j, int r, int code, int sig)
{
	json_t	*m = json_pack("{s:s, s:s, s:i}", "t", "exit", "job", j->name,
	    "rank", r);

	if (sig > 0)
		json_object_set_new(m, "signal", json_integer(sig));
	else
		json_object_set_new(m, "code", json_integer(code));
	job_rank_exit(b, j, r, m);
	json_decref(m);
}

/* An event of kind k from rank r. */
static void
rank_event(struct backend *b, struct job_state *j, int r, enum event_kind k)
{
	json_t	*m = json_pack("{s:s, s:s, s:s, s:i, s:s}", "t", "event",
	    "job", j->name, "kind", event_kind_name(k), "rank", r, "reason",
	    "its words");

	job_rank_event(b, j, r, m);
	json_decref(m);
}

/* A placed job of world ranks, running: as a launch leaves it. */
static struct job_state *
running_job(struct backend *b, int world)
{
	struct job_state *j = new_job(b, world);

	j->spec.policy.max_restarts = 0;	/* no failover to try */
	assert_int_equal(job_set_phase(b, j, JOB_PLACING, "placed"), 0);
	for (int r = 0; r < world; r++)
		assert_int_equal(rank_set_phase(b, j, r, RANK_RUNNING,
		    "launched"), 0);
	job_rank_seen(b, j, 0);
	assert_int_equal(j->phase, JOB_RUNNING);
	return j;
}

static void
t_verdict(void **state)
{
	struct seen	 seen;
	struct backend	*b;
	struct job_state *j;

	(void)state;
	unsetenv("HUNTER_STRICT_PHASES");
	b = open_backend(&seen);

	/* Every rank said it finished, then exited 0. */
	j = running_job(b, 2);
	rank_event(b, j, 0, EV_FINISHED);
	rank_event(b, j, 1, EV_FINISHED);
	rank_exits(b, j, 0, 0, 0);
	assert_int_equal(j->phase, JOB_RUNNING);	/* rank 1 still runs */
	rank_exits(b, j, 1, 0, 0);
	assert_int_equal(j->phase, JOB_FINISHED);
	assert_string_equal(seen.to, "finished");

	/* Rank 0's summary says finished, but rank 1 exited 0 without
	 * saying so: the job did not train to its end. */
	j = running_job(b, 2);
	snprintf(j->sum.state, sizeof j->sum.state, "finished");
	j->sum.have = (uint64_t)1 << SUMMARY_F_state;
	rank_event(b, j, 0, EV_FINISHED);
	rank_exits(b, j, 0, 0, 0);
	rank_exits(b, j, 1, 0, 0);
	assert_int_equal(j->phase, JOB_STOPPED);
	assert_non_null(strstr(seen.reason, "rank 1 exited before the end"));

	/* A stop was asked: stopped, whatever the ranks did. */
	j = running_job(b, 1);
	assert_int_equal(job_set_phase(b, j, JOB_STOPPING, "asked"), 0);
	rank_event(b, j, 0, EV_FINISHED);
	rank_exits(b, j, 0, 0, 0);
	assert_int_equal(j->phase, JOB_STOPPED);

	/* A rank killed, no re-formation left: failed, with its reason. */
	j = running_job(b, 2);
	rank_exits(b, j, 1, 0, 9);
	assert_int_equal(j->ranks[1].phase, RANK_FAILED);
	rank_exits(b, j, 0, 1, 0);
	assert_int_equal(j->phase, JOB_FAILED);
	assert_non_null(strstr(j->reason, "killed by signal 9"));

	/* A pause and its resume move the job, from its ranks' events. */
	j = running_job(b, 1);
	rank_event(b, j, 0, EV_PAUSED);
	assert_int_equal(j->phase, JOB_PAUSED);
	rank_event(b, j, 0, EV_RESUMED);
	assert_int_equal(j->phase, JOB_RUNNING);
	assert_int_equal(seen.refused, 0);
	backend_close(b);
}

static void
t_migrate_queued(void **state)
{
	struct seen	 seen;
	struct backend	*b;
	struct job_state *j;
	/* No node: the simulated backend has no links to find one in. */
	json_t		*cmd = json_pack("{s:s, s:s, s:s, s:i}", "t", "cmd",
	    "cmd", "migrate", "job", "lifejob", "rank", 0);

	(void)state;
	b = open_backend(&seen);
	j = new_job(b, 2);
	assert_int_equal(backend_migrate(b, j, cmd), -1);
	assert_int_equal(seen.refused, 1);
	assert_non_null(strstr(seen.refusal, "lifejob is queued, not running"));
	assert_int_equal(j->phase, JOB_QUEUED);
	assert_int_equal(j->generation, 0);
	assert_int_equal(seen.phase, 0);		/* nothing moved */
	json_decref(cmd);
	backend_close(b);
}

static void
t_rotate_reforming(void **state)
{
	struct seen	 seen;
	struct backend	*b;
	struct job_state *j;
	char		 dir[] = "/tmp/test-job.XXXXXX", path[64], err[128];
	char		*line = NULL;
	size_t		 cap = 0;
	int		 node_of[3] = { 1, 2, 3 }, at_job = -1, at_dec = -1, n = 0;
	FILE		*f;

	(void)state;
	unsetenv("HUNTER_STRICT_PHASES");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/journal.jsonl", dir);
	b = open_backend(&seen);
	assert_non_null(b->journal = journal_open(path, err, sizeof err));
	j = running_job(b, 2);
	j->yaml = xstrdup("name: lifejob\n");
	assert_int_equal(job_resize(b, j, node_of, 3, "grown by the test"), 0);
	assert_int_equal(j->phase, JOB_RESIZING);
	journal_set_limit(b->journal, 1);
	backend_journal_tick(b, clock_mono());	/* rotates */
	assert_non_null(f = fopen(path, "r"));
	for (; getline(&line, &cap, f) > 0; n++) {
		json_t		*o = json_loads(line, 0, NULL);
		const char	*t = json_string_value(json_object_get(o, "t"));

		assert_non_null(t);
		if (strcmp(t, "job") == 0 && at_job < 0)
			at_job = n;
		if (strcmp(t, "decision") == 0) {
			at_dec = n;
			assert_string_equal(json_string_value(json_object_get(o,
			    "kind")), "resized");
			assert_int_equal(json_integer_value(json_object_get(o,
			    "world")), 3);
			assert_int_equal(json_array_size(json_object_get(o,
			    "placement")), 3);
			assert_non_null(strstr(json_string_value(json_object_get(o,
			    "reason")), "grown by the test"));
		}
		json_decref(o);
	}
	fclose(f);
	free(line);
	assert_int_equal(at_job, 0);		/* the new file's first */
	assert_true(at_dec > at_job);		/* and the decision after it */
	backend_close(b);
	snprintf(path, sizeof path, "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_job_moves),
		cmocka_unit_test(t_rank_moves),
		cmocka_unit_test(t_strict_aborts),
		cmocka_unit_test(t_verdict),
		cmocka_unit_test(t_migrate_queued),
		cmocka_unit_test(t_rotate_reforming),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
