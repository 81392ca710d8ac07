/*
 * spec.h: job and cluster specs (hunter(1), JOB FILES), read from YAML with
 * libyaml into validated structs.  Every optional key has a default; every
 * error a user can cause comes back in a spec_errors list as
 * "file:line:col: message", never as a crash.
 */
#ifndef HUNTER_SPEC_H
#define HUNTER_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/cmd-entry.h"

#define SPEC_NAME_MAX   64
#define SPEC_PATH_MAX   1024
/* Nodes in a cluster file.  Far beyond any lab; it bounds the quadratic
 * duplicate-name check, and the backend polls, commands and places on
 * every one of them (it raises its open-file limit to match). */
#define SPEC_MAX_NODES	4096
#define SPEC_MAX_HIDDEN 8
#define SPEC_MAX_CHANNELS 4
/* Where the text of a gpt job comes from when data.path is not given:
 * Debian's fortunes package. */
#define SPEC_TEXT_DEFAULT "/usr/share/games/fortunes"

enum spec_priority  { PRIORITY_LOW, PRIORITY_NORMAL, PRIORITY_HIGH };
enum spec_device    { DEVICE_CPU, DEVICE_CUDA };
enum spec_placement { PLACEMENT_PACK, PLACEMENT_SPREAD, PLACEMENT_RACK };
enum spec_model     { MODEL_MLP, MODEL_CNN, MODEL_GPT };
enum spec_format    { FORMAT_IMAGES, FORMAT_TOKENS, FORMAT_TEXT };
enum spec_optim     { OPTIM_SGD, OPTIM_ADAMW };
enum spec_schedule  { SCHEDULE_CONSTANT, SCHEDULE_COSINE, SCHEDULE_ADAPTIVE };
enum spec_compress  { COMPRESS_NONE, COMPRESS_FP16, COMPRESS_TOPK, COMPRESS_THRESHOLD };
/* What a job runs: the built-in trainer (model:, data:, train:) or the
 * operator's own program (program:, spec-program.c). */
enum spec_kind      { JOB_MODEL, JOB_PROGRAM };

/* A program's argv and env, each packed as NUL-ended strings. */
#define SPEC_PROGRAM_TEXT	4096
/* The argv items whose place in the file is kept for messages: the
 * program, its interpreter's options and the script they run. */
#define SPEC_ARGV_AT		8

struct job_spec {
	char	file[SPEC_PATH_MAX];	/* where it was read from ("" if built) */
	char	name[SPEC_NAME_MAX];	/* required */
	enum spec_priority priority;	/* normal */

	struct {
		/* A number (fixed) or {min: A, max: B} (elastic: the
		 * scheduler picks the count within, backend/sched/policy.h).
		 * ranks is what code that launches or places a job reads:
		 * the fixed count, or for an elastic job its min, the count
		 * it starts with until the scheduler says otherwise. */
		int		 ranks;		/* 4; > 0 */
		int		 min_ranks;	/* == ranks when fixed */
		int		 max_ranks;	/* == ranks when fixed */
		bool		 elastic;	/* written as {min, max} */
		enum spec_device device;	/* cpu */
		uint64_t	 memory_per_rank; /* bytes; 2GiB */
		enum spec_placement placement;	/* rack */
		int		 group_size;	/* 0 = ranks / racks, rounded up */
		bool		 strict;	/* rack: refuse rather than split */
	} resources;

	struct {
		enum spec_model	type;		/* mlp */
		int	hidden[SPEC_MAX_HIDDEN]; /* mlp: [256, 256]; cnn: [] */
		int	n_hidden;
		int	channels[SPEC_MAX_CHANNELS]; /* cnn conv channels: [16, 32];
					  * gpt: one, the width C (256) */
		int	n_channels;
		int	layers;			/* gpt: blocks (4) */
		int	heads;			/* gpt: attention heads (4) */
		int	context;		/* gpt: tokens a window (128) */
		int	vocab;			/* gpt: 0 = the data's */
	} model;

	struct {
		enum spec_format format;	/* images; gpt: text */
		char	dataset[SPEC_NAME_MAX];	/* fashion-mnist */
		char	path[SPEC_PATH_MAX];	/* images: their folder, text: a
						 * file, folder or glob; "" =
						 * found automatically */
		char	train[SPEC_PATH_MAX];	/* tokens: the shards, a glob */
		char	val[SPEC_PATH_MAX];	/* tokens: the validation shard */
		int	prefetch;		/* 8; >= 1 */
	} data;

	struct {
		int		epochs;		/* 5; > 0 */
		uint64_t	seed;		/* 42 */
		int		eval_every;	/* steps; 0 = at epochs' ends */
		double		grad_clip;	/* global norm; 0 = none (gpt: 1) */
		int		zero;		/* 0; 1: optimizer state sharded */
		bool		overlap;	/* false: exchange after backward */
		uint64_t	bucket_size;	/* overlap's buckets: 1 MiB */
		struct {
			enum spec_optim type;	/* sgd */
			double	momentum;	/* 0.9; [0, 1) */
			double	weight_decay;	/* 5e-4; >= 0 */
			double	beta1, beta2;	/* adamw: 0.9, 0.999 */
			double	eps;		/* adamw: 1e-8 */
		} optimizer;
		struct {
			double	base;		/* 0.05; > 0 */
			enum spec_schedule schedule; /* cosine */
			int	warmup_steps;	/* 100; >= 0 */
		} lr;
		struct {
			/* A number (fixed) or {min: A, max: B} (adaptive:
			 * chosen with the allocation, the learning rate
			 * scaled by goodput_lr, backend/sched/goodput.h).
			 * global is the fixed batch, or an adaptive one's
			 * min: the batch lr.base is given for. */
			int	global;		/* 256; > 0 */
			int	global_min;	/* == global when fixed */
			int	global_max;	/* == global when fixed */
			bool	adaptive;	/* written as {min, max} */
			int	micro;		/* 0 = auto; else > 0 */
			int	steps_per_trial; /* 3; > 0 (micro: auto) */
		} batch;
	} train;

	struct {
		enum spec_compress method;	/* none */
		double	density;		/* 0.001; (0, 1] */
		bool	error_feedback;		/* true */
		bool	momentum_correction;	/* true */
		int	warmup_epochs;		/* 1; >= 0 */
		int	warmup_steps;		/* 0; >= 0; the sooner ends it */
		double	warmup_density;		/* 0.25; (0, 1]: where it starts */
	} compression;

	struct {
		int	every_steps;		/* 200; >= 0 (0 = only at end) */
		int	keep;			/* 3; >= 1 */
		char	dir[SPEC_PATH_MAX];	/* "" = under the state dir */
		bool	background;		/* true: every_steps' gather
						 * of the ranks' compressor
						 * states runs under the steps */
	} checkpoint;

	struct {
		double	low_util;		/* fraction, 0.5 for "50%" */
		double	low_util_for_s;		/* 60 */
		double	heartbeat_timeout_s;	/* 10 */
		int	max_restarts;		/* 10; re-formations before
						 * a failing job gives up */
		int	leak_check_every;	/* 100 steps */
		uint64_t leak_growth_limit;	/* bytes; 64MiB */
	} policy;

	enum spec_kind	kind;			/* model, unless program: */
	struct {
		char	argv[SPEC_PROGRAM_TEXT]; /* argc strings */
		int	argc;			/* >= 1 */
		int	argv_line[SPEC_ARGV_AT];	/* where argv[i] was */
		int	argv_col[SPEC_ARGV_AT];		/* written, the first few */
		char	env[SPEC_PROGRAM_TEXT];	/* nenv "KEY=VALUE" */
		int	nenv;
		char	dir[SPEC_PATH_MAX];	/* the job file's folder: the
						 * program's working folder */
		double	stop_grace_s;		/* 30 */
		bool	elastic;		/* false; true: it takes a new
						 * WORLD_SIZE after a resize, so
						 * resources.ranks may be
						 * {min, max} */
		double	startup_s;		/* 5m: after its hello, until
						 * its first metrics */
		int	oom_exit_code;		/* 0 = none declared */
		struct {
			int	micro;		/* -1 = the program's own;
						 * 0 = auto (trials); > 0 */
			int	min, max;	/* auto: 1, 1024 */
			int	trial_steps;	/* auto: 20 */
		} batch;
	} program;
};

struct node_spec {
	char	name[SPEC_NAME_MAX];		/* required */
	char	host[256];			/* required; "local" = this machine */
	char	user[SPEC_NAME_MAX];		/* "" = current user / ssh config */
	int	port;				/* 0 = default (22 or ssh config) */
	char	rack[SPEC_NAME_MAX];		/* "default" */
	int	cpu_slots;			/* devices.cpu; 0 allowed */
	int	cuda_slots;			/* devices.cuda */
	bool	spare;				/* false */
	char	state_dir[SPEC_PATH_MAX];	/* "" = default */
	char	addr[256];			/* Gloo binds here; "" = host,
						 * or 127.0.0.1 for local */
	char	slurm_job[32];			/* the Slurm allocation it is
						 * reached through (srun); "" */
	int	line;				/* where it was declared */
};

/* scheduler: {policy: NAME, interval: DURATION, restart: DURATION}: the
 * policy that sizes elastic jobs (backend/sched/policy.h), how often it
 * decides and what a resize costs a job.  A duration < 0 is unset. */
struct sched_config {
	char	policy[32];		/* "" unset; goodput */
	double	interval_s;		/* 60 */
	double	restart_s;		/* 30 */
};

struct cluster_spec {
	char	file[SPEC_PATH_MAX];
	char	name[SPEC_NAME_MAX];		/* key "cluster"; required unless simulate */
	struct node_spec *nodes;
	int	n_nodes;
	struct {
		char	config[SPEC_PATH_MAX];
		char	identity[SPEC_PATH_MAX];
		char	known_hosts[SPEC_PATH_MAX];
	} ssh;
	int	simulate;			/* 0 = real nodes; else N simulated */
	int	sim_racks;			/* racks for the simulator */
	char	slurm_job[32];			/* "" unless it is a Slurm
						 * allocation (spec-slurm.h) */
	struct sched_config sched;		/* key "scheduler" */
};

struct spec_error {
	char	*file;
	int	 line, col;			/* 1-based; 0 when unknown */
	char	*msg;
};

struct spec_errors {
	struct spec_error *v;
	size_t	n, cap;
};

/* Fill a job with every default (name left empty). */
void	spec_job_defaults(struct job_spec *);

/* Read and validate a job file.  Returns 0 when valid, -1 with errs filled. */
int	spec_load_job(const char *path, struct job_spec *, struct spec_errors *);

/* The same, from a buffer (for tests and fuzzing); name is used in errors. */
int	spec_parse_job(const char *name, const char *buf, size_t len,
	    struct job_spec *, struct spec_errors *);

/* Read and validate a cluster file.  Free with spec_cluster_free. */
int	spec_load_cluster(const char *path, struct cluster_spec *,
	    struct spec_errors *);
int	spec_parse_cluster(const char *name, const char *buf, size_t len,
	    struct cluster_spec *, struct spec_errors *);
void	spec_cluster_free(struct cluster_spec *);

/* The embedded default: this machine as 4 virtual nodes in 2 racks, each
 * with 2 CPU slots, the fourth a spare. */
void	spec_cluster_default(struct cluster_spec *);
/* spec_open_cluster's answer to a command line that cannot work (exit 2). */
#define SPEC_CLUSTER_USAGE	(-2)
/* The cluster of a command: file, or the Slurm allocation for "slurm" or
 * when file is NULL inside one (SLURM_JOB_ID set; spares: --spares N, -1
 * when not given), else the embedded default.  Errors are printed to
 * out.  0, -1, or SPEC_CLUSTER_USAGE (--cluster slurm outside an
 * allocation, --spares without one). */
int	spec_open_cluster(const char *file, int spares, struct cluster_spec *,
	    FILE *out);
/* The options of every command that opens the cluster (the console,
 * run, check), as rows of its option table, and the cluster they name:
 * spec_open_cluster of --cluster and --spares, whose N is checked here;
 * a simulated cluster (simulate: N) only where simulated_ok, else a
 * usage error. */
#define SPEC_CLUSTER_OPTIONS \
	{ "cluster", 'c', "FILE|slurm", "the cluster file (default: the " \
	    "embedded local cluster), or the Slurm allocation's nodes" }, \
	{ "spares", 0, "N", "in a Slurm allocation: keep the last N nodes " \
	    "free for failover" }
int	spec_open_cluster_args(const struct cmd_args *, bool simulated_ok,
	    struct cluster_spec *, FILE *out);

/* For a node's host that is this machine over SSH (localhost, 127.x,
 * ::1), the hint that only host: local runs a node here without SSH, to
 * follow a failed connection's message; "" for any other host. */
const char *spec_host_hint(const char *host);

/* Whether a file looks like a cluster file (a top-level "cluster" or
 * "nodes" key) rather than a job file; used by hunter validate. */
bool	spec_is_cluster_file(const char *path);

/* The user's config.yaml (hunter(1), FILES): what the front ends take
 * from it; "" where it says nothing. */
struct user_config {
	char	path[SPEC_PATH_MAX];		/* the file looked for */
	char	theme[SPEC_PATH_MAX];		/* theme: NAME */
	char	metrics_listen[128];		/* metrics: {listen: ADDR:PORT} */
	struct sched_config sched;		/* scheduler: {...}, a cluster's
						 * default */
};
/* Read it; a missing file is no error, problems go to errs. */
void	spec_load_config(struct user_config *, struct spec_errors *);
/* The Prometheus endpoint's address: opt when given, else the config's
 * metrics.listen (its problems printed to out), else NULL for none. */
const char *spec_config_metrics(const char *opt, struct user_config *,
	    FILE *out);
/* The i-th string of a program's packed argv or env (NULL past the
 * last). */
const char *spec_program_str(const char *packed, int n, int i);
/*
 * Whether argv[0] of a program job names an executable here: with a '/',
 * a file relative to program.dir; else one found on PATH.  0 with the
 * full path in found, or -1 with the reason in err.
 */
int	spec_program_find(const struct job_spec *, char *found, size_t flen,
	    char *err, size_t errlen);
/* spec_load_job, plus argv[0] looked up on this machine (hunter
 * validate: the node of the embedded cluster is this one). */
int	spec_check_job_here(const char *path, struct job_spec *,
	    struct spec_errors *);

/* Unit parsers, shared with themes and the config file.  Return 0 or -1. */
int	spec_parse_size(const char *s, uint64_t *bytes);	/* 2GiB, 64MiB, 512k, 1000 */
int	spec_parse_duration(const char *s, double *seconds);	/* 60s, 10m, 1h, 500ms */
int	spec_parse_percent(const char *s, double *fraction);	/* 50% -> 0.5 */

/*
 * A model kind (hunter(1), JOB FILES, model): its name in job files, the
 * keys of model: it takes, its defaults and its checks.  The table of
 * spec-model.c, indexed by enum spec_model, is the one list of them; the
 * worker's builders (backend/worker/model.c) are indexed the same way.
 */
struct spec_model_kind {
	const char	*name;
	const char *const *keys;	/* of model: besides type, NULL-ended */
	/* Defaults that differ from spec_job_defaults' (cnn: no hidden
	 * layers), set before the file's keys are read; may be NULL. */
	void		(*defaults)(struct job_spec *);
	/* The data formats it trains on: bit i is enum spec_format i. */
	unsigned	 formats;
	/* Whether the device model (kernels/cuda) runs it; if not, why. */
	bool		 cuda;
	const char	*no_cuda;
	/* A check of its own on a job that is otherwise valid: NULL, or the
	 * dotted key to blame ("model.hidden") with the reason in msg.  May
	 * be NULL. */
	const char	*(*check)(const struct job_spec *, char *msg, size_t len);
	/* Training FLOPs a sample (forward and backward), for MFU; NULL
	 * where nobody measures it. */
	double		(*flops_per_sample)(const struct job_spec *);
};

/* The vocabulary a gpt job trains on: model.vocab, else text's 256 or
 * GPT-2's 50257 for token shards. */
int	spec_vocab(const struct job_spec *);

/* The most a gpt may have of each dimension: enough for GPT-2's largest
 * (48 layers, 1600 channels, 1024 positions, 50257 tokens) many times
 * over, and small enough that every size the builders compute fits. */
#define GPT_MAX_LAYERS		1024
#define GPT_MAX_CHANNELS	65536
#define GPT_MAX_CONTEXT		65536
#define GPT_MAX_VOCAB		(1 << 24)
/* Whether a gpt of these dimensions can be built: each in 1..its bound,
 * heads dividing channels, and its parameter count (into *params, when
 * not NULL) computed in size_t without overflow.  NULL, or the job key
 * to blame ("model.channels") with the reason in msg. */
const char *spec_gpt_shape(long long layers, long long heads,
	    long long channels, long long context, long long vocab,
	    size_t *params, char *msg, size_t len);

/* The kind of a model enum; NULL for none. */
const struct spec_model_kind *spec_model_kind(enum spec_model);

/* Names of enum values, for output. */
const char *spec_model_name(enum spec_model);
const char *spec_optim_name(enum spec_optim);
const char *spec_schedule_name(enum spec_schedule);
const char *spec_compress_name(enum spec_compress);
const char *spec_placement_name(enum spec_placement);
const char *spec_priority_name(enum spec_priority);
const char *spec_device_name(enum spec_device);
const char *spec_format_name(enum spec_format);

void	spec_error_add(struct spec_errors *, const char *file, int line,
	    int col, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void	spec_errors_print(FILE *, const struct spec_errors *);
void	spec_errors_free(struct spec_errors *);

#endif
