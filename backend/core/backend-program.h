/*
 * backend-program.h: what the backend keeps of a program job
 * (backend-program.c) and its autotune trials (backend-program-tune.c).
 * Core's own: front ends see a program job as any job.
 */
#ifndef HUNTER_BACKEND_PROGRAM_H
#define HUNTER_BACKEND_PROGRAM_H

#include <limits.h>
#include <stdbool.h>

#include <jansson.h>

struct backend;
struct job_state;

/* One trial of program.batch.micro: auto. */
struct program_trial {
	int	 size;		/* the micro-batch tried */
	bool	 fit;		/* every rank ran its steps and exited 0 */
	double	 samples_per_s;	/* the ranks' mean, when they said it */
	char	 why[200];	/* why it did not fit */
};

/* Enough for any min..max of ints: a bisection of 2^31 takes 31. */
#define PROGRAM_TRIALS_MAX	40

struct program_state {
	char	 ckpt[PATH_MAX];	/* the newest declared checkpoint */
	long	 ckpt_step;
	int	 port, port_gen;	/* MASTER_PORT, and its generation */
	int	 micro;			/* HUNTER_MICRO_BATCH; 0 = unset */
	bool	 giving_up;		/* the job fails; the rest are stopped */
	bool	 ending;		/* a rank ended well and the rest were
					 * asked to stop: their exits are not
					 * failures */
	double	 ended_t;		/* a rank ended well, its peers run */
	struct {
		bool	 active;
		bool	 stopping;	/* a rank failed: the rest were stopped */
		bool	 oom, bad;	/* the trial's outcome so far */
		char	 why[320];	/* the first out-of-memory */
		char	 bad_why[320];	/* the first other failure */
		int	 lo, hi;	/* multiples of min: lo fits, hi does not */
		int	 k;		/* the one being tried */
		int	 n;
		struct program_trial t[PROGRAM_TRIALS_MAX];
		double	 started;	/* CLOCK_MONOTONIC */
	} tune;
};

/* backend-program.c */
void	backend_program_new(struct backend *, struct job_state *);
void	backend_program_replay(struct backend *, const json_t *rec);
/* The launch order's "program" of rank r (launch.h): what to run, with
 * which environment. */
json_t	*backend_program_launch(struct backend *, struct job_state *, int r,
	    const char *ckdir);
void	backend_program_event(struct backend *, struct job_state *, int r,
	    const json_t *ev);
const char *backend_program_resume_text(const struct job_state *);
void	backend_program_give_up(struct backend *, struct job_state *);
/* Once a second, with the detectors. */
void	backend_program_tick(struct backend *, struct job_state *,
	    double now);

/* backend-program-tune.c */
void	program_tune_begin(struct backend *, struct job_state *);
bool	program_tune_active(const struct job_state *);
int	program_tune_size(const struct job_state *);
/* A rank of a trial exited (msg: its exit frame).  Once the whole group
 * has, the next trial starts, or the run with the size found. */
void	program_tune_exit(struct backend *, struct job_state *, int r,
	    const json_t *msg);
/* The size to run with, of n trials: the largest that fit unless a
 * smaller one that fit was 3% faster; 0 when none fit. */
int	program_tune_choose(const struct program_trial *, int n);

#endif
