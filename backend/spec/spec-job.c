/*
 * spec-job.c: the job file of hunter(1), JOB FILES.  The tables below are
 * the schema: one spec_field per key, nested as the YAML is, each with its
 * type, range and place in struct job_spec; spec_job_defaults is the other
 * half, the value of every key not written, and each model kind
 * (spec-model.c) adds defaults of its own; program: has its own file
 * (spec-program.c), and so have the elastic ranks and adaptive batch
 * (spec-elastic.c).  What a table cannot say (the
 * keys a model kind takes; the micro batch must fit the global one) is
 * checked after the walk.
 */
#include "config.h"

#include "backend/spec/spec-internal.h"

#define J(member)	offsetof(struct job_spec, member)
#define JS(member)	SPEC_FSIZE(struct job_spec, member)

_Static_assert(sizeof(enum spec_model) == sizeof(int),
    "enums are stored through int pointers");

static const char *const job_datasets[] = { "fashion-mnist", NULL };

static const struct spec_field job_resources[] = {
	{ .key = "ranks", .type = SF_CUSTOM, .custom = spec_elastic_ranks },
	{ .key = "device", .type = SF_ENUM, .off = J(resources.device),
	  .names = spec_device_names, .what = "device" },
	{ .key = "memory_per_rank", .type = SF_SIZE,
	  .off = J(resources.memory_per_rank), .range = SR_POS },
	{ .key = "placement", .type = SF_ENUM, .off = J(resources.placement),
	  .names = spec_placement_names, .what = "placement" },
	{ .key = "group_size", .type = SF_INT, .off = J(resources.group_size),
	  .range = SR_POS },
	{ .key = "strict", .type = SF_BOOL, .off = J(resources.strict) },
	{ NULL }
};

static const struct spec_field job_model[] = {
	{ .key = "type", .type = SF_ENUM, .off = J(model.type),
	  .name_of = spec_model_name_at, .what = "model" },
	{ .key = "hidden", .type = SF_INTS, .off = J(model.hidden),
	  .size = SPEC_MAX_HIDDEN, .count_off = J(model.n_hidden) },
	{ .key = "channels", .type = SF_INTS, .off = J(model.channels),
	  .size = SPEC_MAX_CHANNELS, .min_items = 1, .one_ok = true,
	  .count_off = J(model.n_channels) },
	{ .key = "layers", .type = SF_INT, .off = J(model.layers),
	  .range = SR_POS },
	{ .key = "heads", .type = SF_INT, .off = J(model.heads),
	  .range = SR_POS },
	{ .key = "context", .type = SF_INT, .off = J(model.context),
	  .range = SR_POS },
	{ .key = "vocab", .type = SF_INT, .off = J(model.vocab),
	  .range = SR_POS },
	{ NULL }
};

static const struct spec_field job_data[] = {
	{ .key = "format", .type = SF_ENUM, .off = J(data.format),
	  .names = spec_format_names, .what = "data format" },
	{ .key = "dataset", .type = SF_WORD, .off = J(data.dataset),
	  .size = JS(data.dataset), .names = job_datasets,
	  .what = "dataset" },
	{ .key = "path", .type = SF_SAFEPATH, .off = J(data.path),
	  .size = JS(data.path), .glob_ok = true },
	{ .key = "train", .type = SF_SAFEPATH, .off = J(data.train),
	  .size = JS(data.train), .glob_ok = true },
	{ .key = "val", .type = SF_SAFEPATH, .off = J(data.val),
	  .size = JS(data.val) },
	{ .key = "prefetch", .type = SF_INT, .off = J(data.prefetch),
	  .range = SR_NONNEG },
	{ NULL }
};

static const struct spec_field job_optimizer[] = {
	{ .key = "type", .type = SF_ENUM, .off = J(train.optimizer.type),
	  .names = spec_optim_names, .what = "optimizer" },
	{ .key = "momentum", .type = SF_REAL,
	  .off = J(train.optimizer.momentum), .range = SR_UNIT_CO },
	{ .key = "weight_decay", .type = SF_REAL,
	  .off = J(train.optimizer.weight_decay), .range = SR_NONNEG },
	{ .key = "beta1", .type = SF_REAL, .off = J(train.optimizer.beta1),
	  .range = SR_UNIT_CO },
	{ .key = "beta2", .type = SF_REAL, .off = J(train.optimizer.beta2),
	  .range = SR_UNIT_CO },
	{ .key = "eps", .type = SF_REAL, .off = J(train.optimizer.eps),
	  .range = SR_POS },
	{ NULL }
};

static const struct spec_field job_lr[] = {
	{ .key = "base", .type = SF_REAL, .off = J(train.lr.base),
	  .range = SR_POS },
	{ .key = "schedule", .type = SF_ENUM, .off = J(train.lr.schedule),
	  .names = spec_schedule_names, .what = "schedule" },
	{ .key = "warmup_steps", .type = SF_INT, .off = J(train.lr.warmup_steps),
	  .range = SR_NONNEG },
	{ NULL }
};

static const struct spec_field job_batch[] = {
	{ .key = "global", .type = SF_CUSTOM, .custom = spec_elastic_global },
	{ .key = "micro", .type = SF_MICRO, .off = J(train.batch.micro),
	  .range = SR_POS },
	{ .key = "steps_per_trial", .type = SF_INT,
	  .off = J(train.batch.steps_per_trial), .range = SR_POS },
	{ NULL }
};

static const struct spec_field job_train[] = {
	{ .key = "epochs", .type = SF_INT, .off = J(train.epochs),
	  .range = SR_POS },
	{ .key = "seed", .type = SF_U64, .off = J(train.seed) },
	{ .key = "eval_every", .type = SF_INT, .off = J(train.eval_every),
	  .range = SR_NONNEG },
	{ .key = "grad_clip", .type = SF_REAL, .off = J(train.grad_clip),
	  .range = SR_NONNEG },
	{ .key = "zero", .type = SF_INT, .off = J(train.zero),
	  .range = SR_NONNEG },
	{ .key = "overlap", .type = SF_BOOL, .off = J(train.overlap) },
	{ .key = "bucket_size", .type = SF_SIZE, .off = J(train.bucket_size),
	  .range = SR_POS },
	{ .key = "optimizer", .type = SF_MAP, .sub = job_optimizer },
	{ .key = "lr", .type = SF_MAP, .sub = job_lr },
	{ .key = "batch", .type = SF_MAP, .sub = job_batch },
	{ NULL }
};

static const struct spec_field job_compression[] = {
	{ .key = "method", .type = SF_ENUM, .off = J(compression.method),
	  .names = spec_compress_names, .what = "compression method" },
	{ .key = "density", .type = SF_REAL, .off = J(compression.density),
	  .range = SR_UNIT_OC },
	{ .key = "error_feedback", .type = SF_BOOL,
	  .off = J(compression.error_feedback) },
	{ .key = "momentum_correction", .type = SF_BOOL,
	  .off = J(compression.momentum_correction) },
	{ .key = "warmup_epochs", .type = SF_INT,
	  .off = J(compression.warmup_epochs), .range = SR_NONNEG },
	{ .key = "warmup_steps", .type = SF_INT,
	  .off = J(compression.warmup_steps), .range = SR_NONNEG },
	{ .key = "warmup_density", .type = SF_REAL,
	  .off = J(compression.warmup_density), .range = SR_UNIT_OC },
	{ NULL }
};

static const struct spec_field job_checkpoint[] = {
	{ .key = "every_steps", .type = SF_INT, .off = J(checkpoint.every_steps),
	  .range = SR_NONNEG },
	{ .key = "keep", .type = SF_INT, .off = J(checkpoint.keep),
	  .range = SR_GE1 },
	{ .key = "dir", .type = SF_SAFEPATH, .off = J(checkpoint.dir),
	  .size = JS(checkpoint.dir) },
	{ .key = "background", .type = SF_BOOL,
	  .off = J(checkpoint.background) },
	{ NULL }
};

static const struct spec_field job_failover[] = {
	{ .key = "low_util", .type = SF_PERCENT, .off = J(policy.low_util) },
	{ .key = "for", .type = SF_DURATION, .off = J(policy.low_util_for_s),
	  .range = SR_NONNEG },
	{ .key = "heartbeat_timeout", .type = SF_DURATION,
	  .off = J(policy.heartbeat_timeout_s), .range = SR_POS },
	{ .key = "max_restarts", .type = SF_INT, .off = J(policy.max_restarts),
	  .range = SR_NONNEG },
	{ NULL }
};

static const struct spec_field job_leak[] = {
	{ .key = "check_every", .type = SF_INT, .off = J(policy.leak_check_every),
	  .range = SR_POS },
	{ .key = "growth_limit", .type = SF_SIZE,
	  .off = J(policy.leak_growth_limit), .range = SR_POS },
	{ NULL }
};

static const struct spec_field job_policy[] = {
	{ .key = "failover", .type = SF_MAP, .sub = job_failover },
	{ .key = "leak", .type = SF_MAP, .sub = job_leak },
	{ NULL }
};

static const struct spec_field job_fields[] = {
	{ .key = "name", .type = SF_NAME, .off = J(name), .size = JS(name),
	  .what = "job name", .required = 1 },
	{ .key = "priority", .type = SF_ENUM, .off = J(priority),
	  .names = spec_priority_names, .what = "priority" },
	{ .key = "resources", .type = SF_MAP, .sub = job_resources },
	{ .key = "model", .type = SF_MAP, .sub = job_model },
	{ .key = "data", .type = SF_MAP, .sub = job_data },
	{ .key = "train", .type = SF_MAP, .sub = job_train },
	{ .key = "compression", .type = SF_MAP, .sub = job_compression },
	{ .key = "checkpoint", .type = SF_MAP, .sub = job_checkpoint },
	{ .key = "policy", .type = SF_MAP, .sub = job_policy },
	{ .key = "program", .type = SF_MAP, .sub = spec_program_fields },
	{ NULL }
};

void
spec_job_defaults(struct job_spec *j)
{
	memset(j, 0, sizeof *j);
	j->priority = PRIORITY_NORMAL;
	j->resources.ranks = 4;
	j->resources.device = DEVICE_CPU;
	j->resources.memory_per_rank = 2ULL << 30;
	j->resources.placement = PLACEMENT_RACK;
	j->resources.group_size = 0;	/* follows the job: place-rack.c */
	j->model.type = MODEL_MLP;
	j->model.hidden[0] = j->model.hidden[1] = 256;
	j->model.n_hidden = 2;
	j->model.channels[0] = 16;
	j->model.channels[1] = 32;
	j->model.n_channels = 2;
	j->model.layers = 4;
	j->model.heads = 4;
	j->model.context = 128;
	strcpy(j->data.dataset, "fashion-mnist");
	j->data.prefetch = 8;
	j->train.epochs = 5;
	j->train.seed = 42;
	j->train.optimizer.type = OPTIM_SGD;
	j->train.optimizer.momentum = 0.9;
	j->train.optimizer.weight_decay = 5e-4;
	j->train.optimizer.beta1 = 0.9;
	j->train.optimizer.beta2 = 0.999;
	j->train.optimizer.eps = 1e-8;
	j->train.lr.base = 0.05;
	j->train.lr.schedule = SCHEDULE_COSINE;
	j->train.lr.warmup_steps = 100;
	j->train.batch.global = 256;
	j->train.batch.micro = 0;
	j->train.batch.steps_per_trial = 3;
	j->train.bucket_size = 1 << 20;
	/* Dense unless the file asks: what a user expects, and top-k at
	 * 0.001 costs a small job accuracy it never gains back in bytes
	 * (hunter(1), JOB FILES). */
	j->compression.method = COMPRESS_NONE;
	j->compression.density = 0.001;
	j->compression.error_feedback = true;
	j->compression.momentum_correction = true;
	j->compression.warmup_epochs = 1;
	j->compression.warmup_density = 0.25;
	j->checkpoint.every_steps = 200;
	j->checkpoint.keep = 3;
	j->checkpoint.background = true;
	j->policy.low_util = 0.5;
	j->policy.low_util_for_s = 60;
	j->policy.heartbeat_timeout_s = 10;
	j->policy.max_restarts = 10;
	j->policy.leak_check_every = 100;
	j->policy.leak_growth_limit = 64ULL << 20;
	spec_program_defaults(j);
	spec_elastic_defaults(j);
}

/* strict: true is rack placement's alone, and only when the file asks
 * for rack placement itself: a job that says nothing is never refused
 * for want of a rack (place-rack.c). */
static void
job_check_strict(struct spec_walk *w, const struct ydoc_node *root,
    const struct job_spec *j)
{
	const struct ydoc_node	*res = ydoc_get(root, "resources", NULL);
	const struct ydoc_node	*key = NULL, *pkey = NULL;

	if (!j->resources.strict)
		return;
	ydoc_get(res, "strict", &key);
	ydoc_get(res, "placement", &pkey);
	if (pkey == NULL)
		spec_walk_error(w, key, "resources.strict: true applies to rack "
		    "placement only; write placement: rack beside it");
	else if (j->resources.placement != PLACEMENT_RACK)
		spec_walk_error(w, key, "resources.strict: true applies to rack "
		    "placement only, and this job has placement: %s",
		    spec_placement_name(j->resources.placement));
}

/* A compression: block that tunes a sparse method but names none would
 * once have meant top-k; now that the default is dense, it says so
 * rather than be ignored. */
static void
job_check_compression(struct spec_walk *w, const struct ydoc_node *root)
{
	static const char *sparse[] = { "density", "error_feedback",
	    "momentum_correction", "warmup_epochs", "warmup_steps",
	    "warmup_density", NULL };
	const struct ydoc_node	*c = ydoc_get(root, "compression", NULL);
	const struct ydoc_node	*key = NULL;

	if (c == NULL || ydoc_get(c, "method", NULL) != NULL)
		return;
	for (int i = 0; sparse[i] != NULL; i++) {
		if (ydoc_get(c, sparse[i], &key) == NULL)
			continue;
		spec_walk_error(w, key, "compression.%s: applies to method topk "
		    "or threshold, and the method defaults to none (a dense "
		    "exchange): write method: topk beside it, or leave it out",
		    sparse[i]);
		return;
	}
}

/* train.zero and train.overlap against the rest of the job. */
static void
job_check_perf(struct spec_walk *w, const struct ydoc_node *root,
    const struct job_spec *j)
{
	const struct ydoc_node	*train = ydoc_get(root, "train", NULL);
	const struct ydoc_node	*key = NULL;
	enum spec_compress	 m = j->compression.method;

	ydoc_get(train, "zero", &key);
	if (j->train.zero > 1)
		spec_walk_error(w, key, "train.zero: 0 (off) or 1 (the "
		    "optimizer state sharded over the ranks), got %d",
		    j->train.zero);
	else if (j->train.zero == 1 && m != COMPRESS_NONE)
		spec_walk_error(w, key, "train.zero: 1 needs compression: "
		    "{method: none}, and this job has %s%s", spec_compress_name(m),
		    m == COMPRESS_FP16 ? ": ZeRO-1 reduce-scatters the fp32 "
		    "gradient, where fp16 gathers every rank's whole" :
		    ": ZeRO-1 allgathers the dense parameters every step, "
		    "which costs more on the wire than the sparse exchange "
		    "saves, and the residuals it keeps are each rank's, "
		    "whole, so nothing of them can be sharded");
	ydoc_get(train, "overlap", &key);
	if (!j->train.overlap)
		return;
	if (j->train.lr.schedule == SCHEDULE_ADAPTIVE)
		spec_walk_error(w, key, "train.overlap: lr.schedule adaptive "
		    "needs each rank's whole gradient before the sum, and "
		    "overlap sums it bucket by bucket during the backward");
	else if (j->resources.device == DEVICE_CUDA)
		spec_walk_error(w, key, "train.overlap: a cuda rank's gradient "
		    "comes off the device whole, after its backward");
}

/*
 * The checks that span keys.  They run only on a file that is otherwise
 * clean: after an error a default stands in for the bad value, and a
 * complaint about how it fits the others would only mislead.
 */
static void
job_check(struct spec_walk *w, const struct ydoc_node *root,
    struct job_spec *j)
{
	const struct ydoc_node	*key = NULL;
	long long		 micro = j->train.batch.micro;
	long long		 global = j->train.batch.global;
	long long		 ranks = j->resources.ranks;

	spec_program_check(w, root, j);
	spec_elastic_check(w, root, j);
	if (j->kind == JOB_PROGRAM)
		return;
	spec_model_check(w, root, j);
	job_check_compression(w, root);
	job_check_strict(w, root, j);
	job_check_perf(w, root, j);
	if (micro == 0)
		return;
	ydoc_get(ydoc_get(ydoc_get(root, "train", NULL), "batch", NULL),
	    "micro", &key);
	if (micro > global)
		spec_walk_error(w, key, "train.batch.micro: must be <= "
		    "train.batch.global (%lld), got %lld", global, micro);
	else if (global % (micro * ranks) != 0)
		spec_walk_error(w, key, "train.batch.micro: train.batch.global "
		    "(%lld) must be a multiple of micro x resources.ranks "
		    "(%lld x %lld = %lld)", global, micro, ranks,
		    micro * ranks);
}

static void
job_copy_name(char *dst, size_t size, const char *src)
{
	size_t	len = strlen(src);

	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

int
spec_parse_job(const char *name, const char *buf, size_t len,
    struct job_spec *j, struct spec_errors *errs)
{
	struct spec_walk	 w = { name, errs, 0 };
	struct ydoc_node	*root;
	bool			 ok;

	spec_job_defaults(j);
	job_copy_name(j->file, sizeof j->file, name);
	if ((root = ydoc_parse(name, buf, len, errs, &ok)) == NULL)
		return -1;
	spec_model_defaults(root, j);
	spec_elastic_defaults(j);	/* min and max follow the model's */
	spec_program_prepare(root, name, j);
	spec_walk_map(&w, root, "", job_fields, j);
	if (ok && w.nerr == 0)
		job_check(&w, root, j);
	ydoc_free(root);
	return ok && w.nerr == 0 ? 0 : -1;
}
