/*
 * series-file.c: a job's saved series on disk (series-file.h): appended
 * without fsync, thinned in place when it outgrows its bound: each rank's
 * metrics lines and each node's lines, every other one.  The file holds
 * whole lines only: a write that comes back short (a full disk) is cut
 * back to the last whole line, and a line a crash left cut is cut off
 * when the file is opened again, so no line is ever glued onto half of
 * another.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/core/series-file.h"

/* Nodes whose lines are counted apart, for thinning them as a rank's. */
#define SERIES_NODES	64

struct job_series {
	int		 fd;
	char		*path;
	off_t		 size;		/* to the end of the last whole line */
	bool		 cut;		/* it may end mid-line: a newline first */
	off_t		 limit;		/* thinned past this */
	int		 stride;	/* a rank's every stride-th frame kept */
	long		*seen;		/* metrics frames per rank */
	int		 nseen;
	struct {			/* node lines per node */
		char	 name[64];
		long	 seen;
	}		 nodes[SERIES_NODES];
};

void
series_file_path(const char *dir, const char *job, char *buf, size_t len)
{
	snprintf(buf, len, "%s/series/%s.jsonl", dir, job);
}

static double
wall_now(void)
{
	struct timeval	 tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec * 1e-6;
}

static void
series_write(struct job_series *s, const json_t *obj)
{
	char	*line = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t	 len = strlen(line), done;
	ssize_t	 n = 0;
	struct stat st;

	line = xrealloc(line, len + 3);
	if (s->cut) {
		memmove(line + 1, line, len);
		line[0] = '\n';
		len++;
	}
	line[len++] = '\n';
	/* One write() a line (O_APPEND; the backend is the only writer);
	 * the rest of a short one after it, or the whole line goes. */
	for (done = 0; done < len; done += (size_t)n) {
		if ((n = write(s->fd, line + done, len - done)) <= 0 &&
		    (n == 0 || errno != EINTR))
			break;
		if (n < 0)
			n = 0;
	}
	if (done == len) {
		s->size += (off_t)len;
		s->cut = false;
	} else if (ftruncate(s->fd, s->size) != 0) {
		/* Half a line stays: the next one starts on its own. */
		s->cut = true;
		if (fstat(s->fd, &st) == 0)
			s->size = st.st_size;
	}
	free(line);
}

/* The end of the last whole line of fd's size bytes: a line a crash or a
 * full disk cut short is not kept (0 when there is none). */
static off_t
series_whole(int fd, off_t size)
{
	char	 buf[4096];
	off_t	 at = size;
	ssize_t	 n;

	while (at > 0) {
		size_t want = at < (off_t)sizeof buf ? (size_t)at : sizeof buf;

		if ((n = pread(fd, buf, want, at - (off_t)want)) != (ssize_t)want)
			return size;	/* unreadable: leave it as it is */
		for (size_t i = want; i > 0; i--) {
			if (buf[i - 1] == '\n')
				return at - (off_t)want + (off_t)i;
		}
		at -= (off_t)want;
	}
	return 0;
}

struct job_series *
series_file_open(const char *dir, const char *job, long long run, bool fresh,
    char *err, size_t errlen)
{
	struct job_series *s;
	char		 path[4096], sub[4096];
	struct stat	 st;
	off_t		 whole;
	json_t		*h;
	int		 fd;

	snprintf(sub, sizeof sub, "%s/series", dir);
	series_file_path(dir, job, path, sizeof path);
	if (mkdir_p(sub, 0700) != 0 || (fd = open(path, O_RDWR | O_CREAT |
	    O_APPEND | O_CLOEXEC | O_NOFOLLOW | (fresh ? O_TRUNC : 0),
	    0600)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	s = xcalloc(1, sizeof *s);
	s->fd = fd;
	s->path = xstrdup(path);
	s->stride = 1;
	s->size = fstat(fd, &st) == 0 ? st.st_size : 0;
	if ((whole = series_whole(fd, s->size)) != s->size) {
		if (ftruncate(fd, whole) == 0)
			s->size = whole;
		else
			s->cut = true;
	}
	s->limit = SERIES_FILE_MAX;
	if (s->size == 0) {
		h = json_pack("{s:s, s:s, s:I, s:f, s:i}", "t", "series", "job",
		    job, "run", (json_int_t)run, "ts", wall_now(), "format", 1);
		series_write(s, h);
		json_decref(h);
	}
	return s;
}

/* The rank of a metrics line as series_file_append writes it
 * ({"t":"metrics","rank":R,...}); -1 for any other line. */
static int
line_rank(const char *line)
{
	static const char pre[] = "{\"t\":\"metrics\",\"rank\":";

	if (strncmp(line, pre, sizeof pre - 1) != 0)
		return -1;
	return atoi(line + sizeof pre - 1);
}

/* The slot of a node's lines ("" or unnamed: the last), found or taken. */
static int
node_slot(struct job_series *s, const char *name)
{
	int	 i;

	for (i = 0; i < SERIES_NODES - 1 && s->nodes[i].name[0] != '\0'; i++) {
		if (strcmp(s->nodes[i].name, name) == 0)
			return i;
	}
	if (s->nodes[i].name[0] == '\0')
		snprintf(s->nodes[i].name, sizeof s->nodes[i].name, "%s", name);
	return i;
}

/* The node slot of a node line as series_file_append writes it
 * ({"t":"node","node":"NAME",...}); -1 for any other line. */
static int
line_node(struct job_series *s, const char *line)
{
	static const char pre[] = "{\"t\":\"node\",\"node\":\"";
	char	 name[64];
	size_t	 n;

	if (strncmp(line, pre, sizeof pre - 1) != 0)
		return -1;
	line += sizeof pre - 1;
	n = strcspn(line, "\"");
	snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), line);
	return node_slot(s, name);
}

/* Keep every other metrics line of each rank, and of node lines of each
 * node; the rest stays. */
static void
series_thin(struct job_series *s)
{
	char		 tmp[4300], dir[4200], *line = NULL;
	size_t		 cap = 0;
	ssize_t		 n;
	long		*kept;
	FILE		*in, *out;
	int		 r, fd;

	/* Set first, so a pass that fails is not retried at each line. */
	s->stride *= 2;
	s->limit *= 2;
	snprintf(dir, sizeof dir, "%s", s->path);
	*strrchr(dir, '/') = '\0';
	if ((in = fopen(s->path, "r")) == NULL)
		return;
	if ((fd = file_tmp_open(dir, ".thin", 0600, tmp, sizeof tmp)) < 0 ||
	    (out = fdopen(fd, "w")) == NULL) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		fclose(in);
		return;
	}
	kept = xcalloc((size_t)s->nseen + SERIES_NODES, sizeof *kept);
	while ((n = getline(&line, &cap, in)) > 0) {
		if (line[n - 1] != '\n')
			break;			/* a line cut short */
		r = line_rank(line);
		if (r >= 0 && r < s->nseen && kept[r]++ % 2 != 0)
			continue;
		if (r < 0 && (r = line_node(s, line)) >= 0 &&
		    kept[s->nseen + r]++ % 2 != 0)
			continue;
		fwrite(line, 1, (size_t)n, out);
	}
	free(kept);
	free(line);
	fclose(in);
	if (fclose(out) != 0 || rename(tmp, s->path) != 0 ||
	    (fd = open(s->path, O_RDWR | O_APPEND | O_CLOEXEC)) < 0) {
		unlink(tmp);
		return;
	}
	close(s->fd);
	s->fd = fd;
	s->size = lseek(fd, 0, SEEK_END);
	/* What is not metrics (epochs, the summary) is not thinned: should
	 * it be most of the file, the next pass waits for it to double. */
	s->limit = s->size * 2 > SERIES_FILE_MAX ? s->size * 2 :
	    SERIES_FILE_MAX;
}

void
series_file_append(struct job_series *s, const json_t *frame)
{
	const char	*t = json_string_value(json_object_get(frame, "t"));
	json_t		*o, *r = json_object_get(frame, "rank");
	int		 rank;

	if (s == NULL || t == NULL)
		return;
	o = json_pack("{s:s}", "t", t);
	if (strcmp(t, "metrics") == 0) {
		rank = (int)json_integer_value(r);
		if (rank < 0 || rank >= 65536)
			goto out;
		if (rank >= s->nseen) {
			s->seen = xreallocarray(s->seen, (size_t)rank + 1,
			    sizeof *s->seen);
			memset(s->seen + s->nseen, 0, sizeof *s->seen *
			    (size_t)(rank + 1 - s->nseen));
			s->nseen = rank + 1;
		}
		if (s->seen[rank]++ % s->stride != 0)
			goto out;
	} else if (strcmp(t, "node") == 0) {
		const char *name = json_string_value(json_object_get(frame,
		    "node"));

		if (s->nodes[node_slot(s, name != NULL ? name : "")].seen++ %
		    s->stride != 0)
			goto out;
		json_object_set(o, "node", json_object_get(frame, "node"));
	}
	if (r != NULL)
		json_object_set(o, "rank", r);
	json_object_update_missing(o, (json_t *)frame);
	json_object_del(o, "job");
	json_object_del(o, "scope");
	json_object_del(o, "run");
	json_object_set_new(o, "ts", json_real(wall_now()));
	series_write(s, o);
	if (s->size > s->limit)
		series_thin(s);
out:
	json_decref(o);
}

void
series_file_close(struct job_series *s)
{
	if (s == NULL)
		return;
	close(s->fd);
	free(s->path);
	free(s->seen);
	free(s);
}
