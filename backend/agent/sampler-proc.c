/*
 * sampler-proc.c: the processes of the ranks an agent runs, from
 * /proc/PID (under the sampler's root): CPU time, threads and resident
 * memory (stat), context switches (each thread's status: a process's own
 * status counts its main thread only), open fds (fd/), and the GPU
 * memory NVML lists for them.  A hunter worker is one process; a program's rank is its
 * whole process group (its data loaders and helpers count), found by one
 * pass over /proc a sample.  Also the agent's own fds.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/agent/sampler-internal.h"

/* What one pass adds up for a rank: CPU ticks, threads, voluntary and
 * involuntary switches, fds, and which of them were read. */
struct proc_sum {
	uint64_t	 ticks, vol, invol;
	long		 threads, fds, rss;
	bool		 stat, status, fd;
};

/* Entries of a directory, "." and ".." left out; -1 if unreadable. */
static long
proc_count(const char *dir)
{
	DIR		*d = opendir(dir);
	struct dirent	*e;
	long		 n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int
proc_status_line(char *line, void *arg)
{
	uint64_t	*v = arg;

	if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0) {
		v[0] = strtoull(line + 24, NULL, 10);
		v[2] |= 1;
	} else if (strncmp(line, "nonvoluntary_ctxt_switches:", 27) == 0) {
		v[1] = strtoull(line + 27, NULL, 10);
		v[2] |= 2;
	}
	return v[2] == 3;
}

/* What /proc/PID/stat says of a process. */
struct proc_stat {
	long		 pgrp, threads, rss;	/* rss in pages */
	uint64_t	 ticks;
};

/* /proc/PID/stat into ps; 0 or -1. */
static int
proc_stat(const struct sampler *s, long pid, struct proc_stat *ps)
{
	char		 rel[64], path[PATH_MAX], buf[1024], *rp;
	unsigned long	 ut, st;
	FILE		*f;
	size_t		 n;

	snprintf(rel, sizeof rel, "/proc/%ld/stat", pid);
	sampler_path(s, path, sizeof path, rel);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After the name in parentheses: state ppid pgrp ..., utime and
	 * stime the 12th and 13th after the state, threads the 18th, the
	 * resident pages the 22nd. */
	ps->rss = 0;
	if ((rp = strrchr(buf, ')')) == NULL || sscanf(rp + 2, "%*c %*d %ld "
	    "%*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %ld %*d "
	    "%*u %*u %ld", &ps->pgrp, &ut, &st, &ps->threads, &ps->rss) < 4)
		return -1;
	ps->ticks = (uint64_t)ut + st;
	return 0;
}

/* Everything of one process into sum. */
static void
proc_add(const struct sampler *s, long pid, struct proc_sum *sum)
{
	char		 rel[96], path[PATH_MAX];
	DIR		*d;
	struct dirent	*e;
	struct proc_stat ps;
	long		 fds;

	if (proc_stat(s, pid, &ps) != 0)
		return;
	sum->ticks += ps.ticks;
	sum->threads += ps.threads;
	sum->rss += ps.rss;
	sum->stat = true;
	snprintf(rel, sizeof rel, "/proc/%ld/fd", pid);
	sampler_path(s, path, sizeof path, rel);
	if ((fds = proc_count(path)) >= 0) {
		sum->fds += fds;
		sum->fd = true;
	}
	snprintf(rel, sizeof rel, "/proc/%ld/task", pid);
	sampler_path(s, path, sizeof path, rel);
	if ((d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		uint64_t v[3] = { 0, 0, 0 };

		if (e->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof rel, "/proc/%ld/task/%.20s/status", pid,
		    e->d_name);
		if (sampler_lines(s, rel, proc_status_line, v) == 0 &&
		    v[2] == 3) {
			sum->vol += v[0];
			sum->invol += v[1];
			sum->status = true;
		}
	}
	closedir(d);
}

/* The members of every group rank: one pass over /proc. */
static void
proc_groups(const struct sampler *s, const struct proc_want *w, int n,
    struct proc_sum *sums)
{
	char		 path[PATH_MAX];
	DIR		*d;
	struct dirent	*e;
	struct proc_stat ps;
	long		 pid;
	char		*end;

	sampler_path(s, path, sizeof path, "/proc");
	if ((d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		pid = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end != '\0' || pid <= 0 ||
		    proc_stat(s, pid, &ps) != 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (w[i].group && w[i].pid == ps.pgrp) {
				proc_add(s, pid, &sums[i]);
				break;
			}
		}
	}
	closedir(d);
}

/* The kept counters of pid (a new slot, its base new, when none). */
static struct sampler_proc *
proc_slot(struct sampler *s, long pid)
{
	struct sampler_proc *free = NULL;

	for (int i = 0; i < SAMPLER_PROCS; i++) {
		if (s->procs[i].pid == pid) {
			s->procs[i].seen = true;
			return &s->procs[i];
		}
		if (free == NULL && (s->procs[i].pid == 0 || !s->procs[i].seen))
			free = &s->procs[i];
	}
	if (free != NULL) {
		memset(free, 0, sizeof *free);
		free->pid = pid;
		free->seen = true;
	}
	return free;
}

/* Which rank a GPU process belongs to: its own pid, or a program's
 * group; -1 for none. */
static int
proc_owner(const struct sampler *s, const struct proc_want *w, int n, long pid)
{
	struct proc_stat ps;
	bool		 groups = false;

	for (int i = 0; i < n; i++) {
		if (w[i].pid == pid)
			return i;
		groups |= w[i].group;
	}
	if (!groups || proc_stat(s, pid, &ps) != 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (w[i].group && w[i].pid == ps.pgrp)
			return i;
	}
	return -1;
}

/* The GPU memory of each rank, and each GPU process's owner. */
static void
proc_gpus(const struct sampler *s, const struct proc_want *w, int n,
    struct gpu_sample *gpus, int ngpus, struct rank_report *out)
{
	bool	 known = ngpus > 0;

	for (int g = 0; g < ngpus; g++)
		known &= gpus[g].nprocs >= 0;
	if (!known)
		return;
	for (int i = 0; i < n; i++) {
		out[i].gpu_mem = 0;
		out[i].valid |= RM_BIT(GPU_MEM);
	}
	for (int g = 0; g < ngpus; g++) {
		for (int p = 0; p < gpus[g].nprocs; p++) {
			struct gpu_proc *gp = &gpus[g].procs[p];
			int	 i = proc_owner(s, w, n, gp->pid);

			if (i < 0)
				continue;
			gp->owner = w[i].pid;
			if (gp->mem > 0)
				out[i].gpu_mem += (long)gp->mem;
		}
	}
}

void
sampler_procs(struct sampler *s, const struct proc_want *w, int n,
    struct gpu_sample *gpus, int ngpus, struct rank_report *out)
{
	struct proc_sum	*sums = calloc((size_t)n + 1, sizeof *sums);
	double		 now = s->now(), tck = (double)sysconf(_SC_CLK_TCK);
	bool		 groups = false;

	if (sums == NULL)
		return;
	for (int i = 0; i < SAMPLER_PROCS; i++)
		s->procs[i].seen = false;
	for (int i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		if (w[i].group)
			groups = true;
		else
			proc_add(s, w[i].pid, &sums[i]);
	}
	if (groups)
		proc_groups(s, w, n, sums);
	for (int i = 0; i < n; i++) {
		struct sampler_proc *sp = proc_slot(s, w[i].pid);
		uint64_t cur[3] = { sums[i].ticks, sums[i].vol, sums[i].invol };
		double	 r[3];

		if (!sums[i].stat) {
			if (sp != NULL)
				sp->p.have = false;
			continue;
		}
		out[i].threads = sums[i].threads;
		out[i].rss = sums[i].rss * sysconf(_SC_PAGESIZE);
		out[i].pid = w[i].pid;
		out[i].valid |= RM_BIT(THREADS) | RM_BIT(RSS) | RM_BIT(PID);
		if (sums[i].fd) {
			out[i].fds = sums[i].fds;
			out[i].valid |= RM_BIT(FDS);
		}
		if (sp == NULL || !sampler_rates(&sp->p, cur, 3, now, 1, r))
			continue;
		out[i].proc_cpu = r[0] * 100 / tck;
		out[i].valid |= RM_BIT(PROC_CPU);
		if (sums[i].status) {
			out[i].ctx_voluntary = r[1];
			out[i].ctx_involuntary = r[2];
			out[i].valid |= RM_BIT(CTX_VOL) | RM_BIT(CTX_INVOL);
		}
	}
	for (int i = 0; i < SAMPLER_PROCS; i++) {
		if (!s->procs[i].seen)
			s->procs[i].pid = 0;
	}
	free(sums);
	proc_gpus(s, w, n, gpus, ngpus, out);
}

void
sampler_agent_fds(struct sampler *s, struct node_sample *ns)
{
	char	 path[PATH_MAX];
	long	 n;

	sampler_path(s, path, sizeof path, "/proc/self/fd");
	/* The directory itself, while it is read, is one of them. */
	if ((n = proc_count(path)) > 0)
		sampler_set(ns, NM_AGENT_FDS, n - 1);
}
