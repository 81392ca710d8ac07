/*
 * spec-file.c: specs read from disk.  A file is read whole, up to
 * SPEC_FILE_LIMIT (the cap yaml-doc.c puts on any buffer); a regular file
 * over it is refused from its size alone, before any of it is read.  Also
 * here: which cluster a command gets (a file, the Slurm allocation, the
 * embedded default), and telling a cluster file from a job file, for
 * hunter validate.
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>

#include "backend/spec/spec-internal.h"
#include "backend/spec/spec-slurm.h"

/* Read a whole file, refusing more than SPEC_FILE_LIMIT bytes. */
static int
file_read(const char *path, char **bufp, size_t *lenp,
    struct spec_errors *errs)
{
	FILE		*f;
	struct stat	 st;
	char		*buf;
	size_t		 len = 0, got;

	*bufp = NULL;
	*lenp = 0;
	if ((f = fopen(path, "rb")) == NULL) {
		spec_error_add(errs, path, 0, 0, "cannot open: %s",
		    strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > SPEC_FILE_LIMIT) {
		spec_error_add(errs, path, 1, 1, "file too large (%lld bytes, "
		    "limit 1 MiB)", (long long)st.st_size);
		fclose(f);
		return -1;
	}
	buf = spec_xcalloc(1, SPEC_FILE_LIMIT + 2);
	while ((got = fread(buf + len, 1, SPEC_FILE_LIMIT + 1 - len, f)) > 0)
		len += got;
	if (ferror(f)) {
		spec_error_add(errs, path, 0, 0, "cannot read: %s",
		    strerror(errno));
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	if (len > SPEC_FILE_LIMIT) {
		spec_error_add(errs, path, 1, 1, "file too large (more than "
		    "%d bytes, limit 1 MiB)", SPEC_FILE_LIMIT);
		free(buf);
		return -1;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

int
spec_load_job(const char *path, struct job_spec *j, struct spec_errors *errs)
{
	char	*buf;
	size_t	 len;
	int	 rc;

	spec_job_defaults(j);
	if (strlen(path) >= sizeof j->file) {
		spec_error_add(errs, path, 0, 0, "path too long");
		return -1;
	}
	if (file_read(path, &buf, &len, errs) != 0)
		return -1;
	rc = spec_parse_job(path, buf, len, j, errs);
	free(buf);
	return rc;
}

int
spec_load_cluster(const char *path, struct cluster_spec *c,
    struct spec_errors *errs)
{
	char	*buf;
	size_t	 len;
	int	 rc;

	memset(c, 0, sizeof *c);
	if (strlen(path) >= sizeof c->file) {
		spec_error_add(errs, path, 0, 0, "path too long");
		return -1;
	}
	if (file_read(path, &buf, &len, errs) != 0)
		return -1;
	rc = spec_parse_cluster(path, buf, len, c, errs);
	free(buf);
	return rc;
}

int
spec_open_cluster(const char *file, int spares, struct cluster_spec *c,
    FILE *out)
{
	struct spec_errors errs = { 0 };
	char		 err[1024];
	int		 rc;

	/* Inside an allocation the allocation is the cluster, unless a file
	 * is named (./slurm names a file called slurm). */
	if (file != NULL ? strcmp(file, "slurm") == 0 :
	    getenv("SLURM_JOB_ID") != NULL) {
		if ((rc = spec_slurm_open(spares, c, err, sizeof err)) != 0)
			fprintf(out, "hunter: %s: %s\n", file != NULL ?
			    "--cluster slurm" : "the cluster of this Slurm job "
			    "(SLURM_JOB_ID is set; --cluster FILE names another)",
			    err);
		return rc;
	}
	if (spares >= 0) {
		memset(c, 0, sizeof *c);
		fprintf(out, "hunter: --spares is for a Slurm allocation; in a "
		    "cluster file, mark spare nodes with spare: true\n");
		return SPEC_CLUSTER_USAGE;
	}
	if (file == NULL) {
		spec_cluster_default(c);
		return 0;
	}
	if (spec_load_cluster(file, c, &errs) == 0)
		return 0;
	spec_errors_print(out, &errs);
	spec_errors_free(&errs);
	return -1;
}

int
spec_open_cluster_args(const struct cmd_args *a, bool simulated_ok,
    struct cluster_spec *c, FILE *out)
{
	const char	*arg = cmd_get(a, "spares");
	char		*end;
	long		 n = -1;
	int		 rc;

	if (arg != NULL && ((n = strtol(arg, &end, 10)) < 0 || end == arg ||
	    *end != '\0' || n > SPEC_MAX_NODES)) {
		memset(c, 0, sizeof *c);
		fprintf(out, "hunter: --spares wants a number of nodes (0 or "
		    "more), got '%.64s'\n", arg);
		return SPEC_CLUSTER_USAGE;
	}
	if ((rc = spec_open_cluster(cmd_get(a, "cluster"), (int)n, c, out)) !=
	    0 || c->simulate == 0 || simulated_ok)
		return rc;
	fprintf(out, "hunter: %s describes a simulated cluster (simulate: %d), "
	    "which only the console runs: hunter --cluster %s\n", c->file,
	    c->simulate, c->file);
	spec_cluster_free(c);
	return SPEC_CLUSTER_USAGE;
}

/* A line that starts with key, a colon and then space or nothing. */
static bool
file_has_key(const char *buf, size_t len, const char *key)
{
	size_t	klen = strlen(key), i = 0;

	while (i < len) {
		if (len - i > klen && memcmp(buf + i, key, klen) == 0 &&
		    buf[i + klen] == ':' && (i + klen + 1 == len ||
		    strchr(" \t\r\n", buf[i + klen + 1]) != NULL))
			return true;
		while (i < len && buf[i] != '\n')
			i++;
		i++;
	}
	return false;
}

/*
 * A file that does not parse is judged by its text, so that hunter validate
 * still reports a broken cluster file with the cluster schema.
 */
bool
spec_is_cluster_file(const char *path)
{
	struct spec_errors	 errs = { 0 };
	struct ydoc_node	*root;
	char			*buf;
	size_t			 len;
	bool			 ok, is;

	if (file_read(path, &buf, &len, &errs) != 0) {
		spec_errors_free(&errs);
		return false;
	}
	if ((root = ydoc_parse(path, buf, len, &errs, &ok)) != NULL)
		is = ydoc_get(root, "cluster", NULL) != NULL ||
		    ydoc_get(root, "nodes", NULL) != NULL;
	else
		is = file_has_key(buf, len, "cluster") ||
		    file_has_key(buf, len, "nodes");
	ydoc_free(root);
	free(buf);
	spec_errors_free(&errs);
	return is;
}
