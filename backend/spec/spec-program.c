/*
 * spec-program.c: the program: key of a job file (hunter(1), PROGRAMS):
 * the operator's own training code run as the job's ranks.  The table
 * below is its schema; argv and env are walked here (a list of strings,
 * a map of strings) into the packed buffers of struct job_spec.  What a
 * table cannot say is checked after the walk: a job is a model job or a
 * program job, not both (one with neither is a model job with the
 * defaults); env may not set what hunter
 * sets for each rank; argv[0] is looked up on the node, which for
 * hunter validate is this machine.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/errf.h"
#include "backend/spec/spec-internal.h"

#define J(member)	offsetof(struct job_spec, member)

/* Set by hunter for each rank (torch.distributed's env:// names), so a
 * job file may not. */
static const char *const program_reserved[] = { "RANK", "WORLD_SIZE",
	"LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
	"MASTER_PORT", NULL };

/* The keys of a model job, which a program job may not have. */
static const char *const program_model_keys[] = { "model", "data", "train",
	"compression", NULL };

/* Append s (len bytes) and its NUL to a packed buffer; -1 when full. */
static int
program_pack(char *buf, size_t *used, const char *s, size_t len)
{
	if (*used + len + 1 > SPEC_PROGRAM_TEXT)
		return -1;
	memcpy(buf + *used, s, len);
	buf[*used + len] = '\0';
	*used += len + 1;
	return 0;
}

/* A scalar that may go into an argv or environment string. */
static int
program_scalar(struct spec_walk *w, const struct ydoc_node *v,
    const char *path)
{
	char	 q[64];

	if (v->kind != YDOC_SCALAR) {
		spec_walk_expect(w, v, path, "a string");
		return -1;
	}
	if (strlen(v->str) != v->len) {
		spec_quote(q, sizeof q, v->str, v->len);
		spec_walk_error(w, v, "%s: '%s' holds a NUL byte", path, q);
		return -1;
	}
	return 0;
}

static void
program_argv(struct spec_walk *w, const struct ydoc_node *v, const char *path,
    void *base)
{
	struct job_spec	*j = base;
	size_t		 used = 0;
	char		 sub[SPEC_KEYPATH_MAX];

	j->program.argc = 0;
	if (v->kind != YDOC_SEQ) {
		spec_walk_expect(w, v, path, "a list of strings "
		    "([/usr/bin/python3, train.py, --epochs, \"5\"])");
		return;
	}
	if (v->n == 0) {
		spec_walk_error(w, v, "%s: must name the program to run, got "
		    "an empty list", path);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct ydoc_node *a = v->kids[i];

		snprintf(sub, sizeof sub, "%s[%zu]", path, i);
		if (program_scalar(w, a, sub) != 0)
			return;
		if (i == 0 && a->len == 0) {
			spec_walk_error(w, a, "%s: the program's name is empty",
			    sub);
			return;
		}
		if (program_pack(j->program.argv, &used, a->str, a->len) != 0) {
			spec_walk_error(w, a, "%s: argv is too long (limit %d "
			    "bytes in all)", sub, SPEC_PROGRAM_TEXT);
			return;
		}
		if (i < SPEC_ARGV_AT) {
			j->program.argv_line[i] = a->line;
			j->program.argv_col[i] = a->col;
		}
		j->program.argc++;
	}
}

static bool
program_env_name(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	}
	return true;
}

static void
program_env(struct spec_walk *w, const struct ydoc_node *v, const char *path,
    void *base)
{
	struct job_spec	*j = base;
	size_t		 used = 0;
	char		 sub[SPEC_KEYPATH_MAX], q[64], kv[SPEC_PROGRAM_TEXT];

	j->program.nenv = 0;
	if (v->kind != YDOC_MAP) {
		spec_walk_expect(w, v, path, "a mapping of names to strings "
		    "({OMP_NUM_THREADS: \"1\"})");
		return;
	}
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ydoc_node *k = v->kids[i], *val = v->kids[i + 1];
		int	 len;

		if (k->dup)
			continue;
		spec_quote(q, sizeof q, k->str, k->len);
		snprintf(sub, sizeof sub, "%s.%s", path, q);
		if (strlen(k->str) != k->len || !program_env_name(k->str)) {
			spec_walk_error(w, k, "%s: '%s' is not an environment "
			    "variable name (letters, digits and _)", path, q);
			continue;
		}
		for (int r = 0; program_reserved[r] != NULL; r++) {
			if (strcmp(k->str, program_reserved[r]) == 0 ||
			    strncmp(k->str, "HUNTER_", 7) == 0) {
				spec_walk_error(w, k, "%s: hunter sets %s for "
				    "each rank; a job file may not", sub, q);
				goto next;
			}
		}
		if (program_scalar(w, val, sub) != 0)
			continue;
		len = snprintf(kv, sizeof kv, "%s=%s", k->str, val->str);
		if (len < 0 || (size_t)len >= sizeof kv ||
		    program_pack(j->program.env, &used, kv, (size_t)len) != 0) {
			spec_walk_error(w, val, "%s: env is too long (limit %d "
			    "bytes in all)", sub, SPEC_PROGRAM_TEXT);
			return;
		}
		j->program.nenv++;
next:
		;
	}
}

static const struct spec_field program_batch[] = {
	{ .key = "micro", .type = SF_MICRO, .off = J(program.batch.micro),
	  .range = SR_POS },
	{ .key = "min", .type = SF_INT, .off = J(program.batch.min),
	  .range = SR_POS },
	{ .key = "max", .type = SF_INT, .off = J(program.batch.max),
	  .range = SR_POS },
	{ .key = "trial_steps", .type = SF_INT,
	  .off = J(program.batch.trial_steps), .range = SR_POS },
	{ NULL }
};

const struct spec_field spec_program_fields[] = {
	{ .key = "argv", .type = SF_CUSTOM, .custom = program_argv,
	  .required = 1 },
	{ .key = "env", .type = SF_CUSTOM, .custom = program_env },
	{ .key = "stop_grace", .type = SF_DURATION,
	  .off = J(program.stop_grace_s), .range = SR_NONNEG },
	{ .key = "startup", .type = SF_DURATION, .off = J(program.startup_s),
	  .range = SR_POS },
	{ .key = "oom_exit_code", .type = SF_INT,
	  .off = J(program.oom_exit_code), .range = SR_POS },
	{ .key = "batch", .type = SF_MAP, .sub = program_batch },
	{ NULL }
};

void
spec_program_defaults(struct job_spec *j)
{
	j->program.stop_grace_s = 30;
	j->program.startup_s = 300;
	j->program.batch.micro = -1;
	j->program.batch.min = 1;
	j->program.batch.max = 1024;
	j->program.batch.trial_steps = 20;
}

/* Before the walk: the kind, and the folder relative paths start from
 * (the job file's, made absolute from here). */
void
spec_program_prepare(const struct ydoc_node *root, const char *file,
    struct job_spec *j)
{
	const char	*slash = strrchr(file, '/');
	char		 cwd[PATH_MAX];
	int		 n;

	j->kind = ydoc_get(root, "program", NULL) != NULL ? JOB_PROGRAM :
	    JOB_MODEL;
	if (slash != NULL && file[0] == '/')
		n = snprintf(j->program.dir, sizeof j->program.dir, "%.*s",
		    slash == file ? 1 : (int)(slash - file), file);
	else if (getcwd(cwd, sizeof cwd) == NULL)
		n = snprintf(j->program.dir, sizeof j->program.dir, "%.*s",
		    slash != NULL ? (int)(slash - file) : 1,
		    slash != NULL ? file : ".");
	else if (slash != NULL)
		n = snprintf(j->program.dir, sizeof j->program.dir, "%s/%.*s",
		    cwd, (int)(slash - file), file);
	else
		n = snprintf(j->program.dir, sizeof j->program.dir, "%s", cwd);
	if (n < 0 || (size_t)n >= sizeof j->program.dir)
		snprintf(j->program.dir, sizeof j->program.dir, ".");
}

/* A job is one kind or the other, and says which. */
void
spec_program_check(struct spec_walk *w, const struct ydoc_node *root,
    const struct job_spec *j)
{
	const struct ydoc_node *key, *pkey;

	/* A job without program: is a model job, written or defaulted. */
	if (j->kind == JOB_MODEL)
		return;
	ydoc_get(root, "program", &pkey);
	for (int i = 0; program_model_keys[i] != NULL; i++) {
		if (ydoc_get(root, program_model_keys[i], &key) == NULL)
			continue;
		spec_walk_error(w, key, "%s: a program job runs its own code "
		    "and takes no %s: (program: is at line %d); a job is either "
		    "a model job or a program job", program_model_keys[i],
		    program_model_keys[i], pkey != NULL ? pkey->line : 0);
	}
	if (j->program.oom_exit_code > 255) {
		ydoc_get(ydoc_get(root, "program", NULL), "oom_exit_code", &key);
		spec_walk_error(w, key, "program.oom_exit_code: an exit status "
		    "is 1..255, got %d", j->program.oom_exit_code);
	}
	if (j->program.batch.min > j->program.batch.max) {
		ydoc_get(ydoc_get(ydoc_get(root, "program", NULL), "batch",
		    NULL), "min", &key);
		spec_walk_error(w, key, "program.batch.min: must be <= "
		    "program.batch.max (%d), got %d", j->program.batch.max,
		    j->program.batch.min);
	}
}

const char *
spec_program_str(const char *packed, int n, int i)
{
	size_t	 off = 0;

	if (i < 0 || i >= n)
		return NULL;
	for (int k = 0; k < i; k++)
		off += strlen(packed + off) + 1;
	return packed + off;
}

static int
program_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

int
spec_program_find(const struct job_spec *j, char *found, size_t flen,
    char *err, size_t errlen)
{
	const char	*a0 = spec_program_str(j->program.argv, j->program.argc, 0);
	const char	*path = getenv("PATH"), *p, *colon;
	char		 cand[PATH_MAX + 256];

	if (a0 == NULL) {
		errf(err, errlen, "no program to run");
		return -1;
	}
	if (strchr(a0, '/') != NULL) {
		snprintf(cand, sizeof cand, "%s%s%s", a0[0] == '/' ? "" :
		    j->program.dir, a0[0] == '/' ? "" : "/", a0);
		if (program_executable(cand) != 0) {
			errf(err, errlen, "'%s' is not an executable file "
			    "(%s: %s)", a0, cand, strerror(errno));
			return -1;
		}
		snprintf(found, flen, "%s", cand);
		return 0;
	}
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = colon + 1) {
		colon = strchr(p, ':');
		snprintf(cand, sizeof cand, "%.*s/%s", colon != NULL ?
		    (int)(colon - p) : (int)strlen(p), p, a0);
		if (program_executable(cand) == 0) {
			snprintf(found, flen, "%s", cand);
			return 0;
		}
		if (colon == NULL)
			break;
	}
	errf(err, errlen, "'%s' is not on PATH (%.200s)", a0, path);
	return -1;
}

/*
 * The index in argv of the script an interpreter (python, a shell, perl,
 * ruby, node) is given to run, or -1: none (python -m MODULE, sh -c
 * TEXT, a program that is no interpreter, no argument).  The options
 * before it are skipped, with the value of those that take one.
 */
static int
program_script(const struct job_spec *j)
{
	static const char *const interpreters[] = { "python", "bash", "sh",
	    "dash", "zsh", "ksh", "perl", "ruby", "node", NULL };
	static const char *const valued[] = { "-W", "-X", "-o", "-O", "+o",
	    "+O", NULL };
	const char	*a0 = spec_program_str(j->program.argv, j->program.argc, 0);
	const char	*base = strrchr(a0, '/') != NULL ? strrchr(a0, '/') + 1 : a0;
	bool		 known = false;

	for (int k = 0; interpreters[k] != NULL; k++) {
		size_t	 n = strlen(interpreters[k]);

		/* python3, python3.11, perl5.36: the name, then a version */
		if (strncmp(base, interpreters[k], n) == 0 &&
		    strspn(base + n, "0123456789.") == strlen(base + n))
			known = true;
	}
	for (int i = 1; known && i < j->program.argc; i++) {
		const char *a = spec_program_str(j->program.argv,
		    j->program.argc, i);

		if (strcmp(a, "--") == 0)
			return i + 1 < j->program.argc ? i + 1 : -1;
		if (strcmp(a, "-") == 0 || strcmp(a, "-m") == 0 ||
		    strcmp(a, "-c") == 0 || (a[0] == '-' && a[1] != '-' &&
		    strpbrk(a + 1, "mc") == a + strlen(a) - 1))
			return -1;	/* stdin, a module, a command */
		if (a[0] != '-' && a[0] != '+')
			return i;
		for (int k = 0; valued[k] != NULL; k++) {
			if (strcmp(a, valued[k]) == 0)
				i++;
		}
	}
	return -1;
}

int
spec_check_job_here(const char *path, struct job_spec *j,
    struct spec_errors *errs)
{
	char		 found[PATH_MAX], err[PATH_MAX + 512], full[PATH_MAX + 1100];
	const char	*script;
	struct stat	 st;
	int		 i;

	if (spec_load_job(path, j, errs) != 0)
		return -1;
	if (j->kind != JOB_PROGRAM)
		return 0;
	if (spec_program_find(j, found, sizeof found, err, sizeof err) != 0) {
		spec_error_add(errs, path, j->program.argv_line[0],
		    j->program.argv_col[0], "program.argv[0]: %s on this node",
		    err);
		return -1;
	}
	if ((i = program_script(j)) < 0)
		return 0;
	script = spec_program_str(j->program.argv, j->program.argc, i);
	snprintf(full, sizeof full, "%s%s%s", script[0] == '/' ? "" :
	    j->program.dir, script[0] == '/' ? "" : "/", script);
	if (stat(full, &st) == 0 && !S_ISDIR(st.st_mode))
		return 0;
	snprintf(err, sizeof err, "%s", stat(full, &st) == 0 ?
	    "is a directory" : strerror(errno));
	spec_error_add(errs, path, i < SPEC_ARGV_AT ? j->program.argv_line[i] :
	    j->program.argv_line[0], i < SPEC_ARGV_AT ? j->program.argv_col[i] :
	    j->program.argv_col[0], "program.argv[%d]: the script '%s' that "
	    "%s runs is not a file on this node (%s: %s; a relative path "
	    "starts from the job file's folder)", i, script, spec_program_str(
	    j->program.argv, j->program.argc, 0), full, err);
	return -1;
}

