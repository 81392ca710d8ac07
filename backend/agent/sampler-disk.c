/*
 * sampler-disk.c: a node's storage: /proc/diskstats over whole disks
 * (bytes read and written a second, summed and each, and the time each
 * spent doing I/O, whose busiest is the node's disk_util), the file
 * systems that hold the state and the checkpoint directories (statvfs:
 * free space and inodes, as the agent's user may use them) and the size
 * of a checkpoint there, which says how many more fit.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "backend/agent/sampler-internal.h"

struct sampler_disk_arg {
	struct sampler		*s;
	struct node_lists	*nl;
	double			 now;
	uint64_t		 sum[2];	/* sectors read, written */
	double			 busiest;	/* percent; < 0 none */
};

/* /proc/diskstats: "maj min name reads merged SECTORS ms writes merged
 * SECTORS ms in-flight IO-MS ...".  Only whole disks count, so nothing is
 * counted twice: partitions have no /sys/block entry; loop, ram, zram,
 * device-mapper and md devices do, but they sit on top of disks or of
 * memory. */
static int
sampler_disk_line(char *line, void *arg)
{
	static const char *skip[] = { "loop", "ram", "zram", "dm-", "md" };
	struct sampler_disk_arg	*a = arg;
	unsigned long long	 rd, wr, io = 0;
	char			 name[128], path[PATH_MAX], *p;
	size_t			 i;
	int			 got;

	got = sscanf(line, "%*u %*u %127s %*u %*u %llu %*u %*u %*u %llu %*u "
	    "%*u %llu", name, &rd, &wr, &io);
	if (got < 3)
		return 0;
	for (i = 0; i < sizeof skip / sizeof skip[0]; i++) {
		if (strncmp(name, skip[i], strlen(skip[i])) == 0)
			return 0;
	}
	for (p = name; *p != '\0'; p++) {
		if (*p == '/')		/* cciss/c0d0 is sys/block/cciss!c0d0 */
			*p = '!';
	}
	snprintf(path, sizeof path, "%s/sys/block/%s", a->s->root, name);
	if (access(path, F_OK) != 0)
		return 0;
	a->sum[0] += rd;
	a->sum[1] += wr;
	if (a->nl != NULL && a->nl->ndisks < NODE_DISKS_MAX) {
		struct sampler_named *e = sampler_named(a->s->disks,
		    NODE_DISKS_MAX, name);
		struct disk_sample *ds = &a->nl->disks[a->nl->ndisks];
		uint64_t	 cur[3] = { rd, wr, io };
		double		 r[3];

		if (e == NULL)
			return 0;
		a->nl->ndisks++;
		memset(ds, 0, sizeof *ds);
		snprintf(ds->name, sizeof ds->name, "%s", name);
		if (sampler_rates(&e->p, cur, got >= 4 ? 3 : 2, a->now, 1, r)) {
			ds->v[DM_READ] = r[0] * 512;
			ds->v[DM_WRITE] = r[1] * 512;
			ds->valid = UINT64_C(1) << DM_READ |
			    UINT64_C(1) << DM_WRITE;
			if (got >= 4) {
				/* ms of I/O a second, as a share. */
				ds->v[DM_UTIL] = r[2] / 10 > 100 ? 100 :
				    r[2] / 10;
				ds->valid |= UINT64_C(1) << DM_UTIL;
				if (ds->v[DM_UTIL] > a->busiest)
					a->busiest = ds->v[DM_UTIL];
			}
		}
	}
	return 0;
}

void
sampler_disk(struct sampler *s, struct node_sample *ns, struct node_lists *nl,
    double now)
{
	struct sampler_disk_arg a = { s, nl, now, { 0, 0 }, -1 };
	double		 r[2];

	sampler_named_begin(s->disks, NODE_DISKS_MAX);
	if (sampler_lines(s, "/proc/diskstats", sampler_disk_line, &a) == -1) {
		s->disk.have = false;
		sampler_named_end(s->disks, NODE_DISKS_MAX);
		return;
	}
	sampler_named_end(s->disks, NODE_DISKS_MAX);
	if (sampler_rates(&s->disk, a.sum, 2, now, 512, r)) {
		sampler_set(ns, NM_DISK_READ, r[0]);
		sampler_set(ns, NM_DISK_WRITE, r[1]);
	}
	if (a.busiest >= 0)
		sampler_set(ns, NM_DISK_UTIL, a.busiest);
}

/* statvfs of dir, or of its nearest parent that exists (a checkpoint
 * directory is made by the first checkpoint); 0 or -1. */
static int
sampler_statvfs(const char *dir, struct statvfs *st)
{
	char	 path[PATH_MAX], *slash;

	snprintf(path, sizeof path, "%s", dir);
	for (;;) {
		if (statvfs(path, st) == 0)
			return 0;
		if (errno != ENOENT && errno != ENOTDIR)
			return -1;
		if ((slash = strrchr(path, '/')) == NULL || slash == path)
			return statvfs("/", st);
		*slash = '\0';
	}
}

/* Free (to an unprivileged user), size, free inodes, inodes. */
static void
sampler_fs_one(const char *dir, struct node_sample *ns, enum node_metric m0)
{
	struct statvfs	 st;

	if (dir == NULL || sampler_statvfs(dir, &st) != 0)
		return;
	sampler_set(ns, m0, (double)st.f_bavail * st.f_frsize);
	sampler_set(ns, m0 + 1, (double)st.f_blocks * st.f_frsize);
	/* Some file systems (btrfs, overlays of them) have no inode count. */
	if (st.f_files > 0) {
		sampler_set(ns, m0 + 2, (double)st.f_favail);
		sampler_set(ns, m0 + 3, (double)st.f_files);
	}
}

/*
 * The size of a checkpoint there: the largest regular file in dir (a
 * job's kept checkpoints are about the same size; a config.json beside
 * them is not one), or, in a directory of jobs' directories, in the one
 * changed last.  -1 when there is none.  A few entries: one job's kept
 * checkpoints.
 */
static double
sampler_ckpt_size(const char *dir, int depth)
{
	DIR		*d = opendir(dir);
	struct dirent	*e;
	struct stat	 st;
	char		 path[PATH_MAX], newest[PATH_MAX] = "";
	double		 size = -1, t = -1;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t	 n = strlen(e->d_name);

		if (e->d_name[0] == '.' || (n > 4 && strcmp(e->d_name + n - 4,
		    ".tmp") == 0))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0)
			continue;
		if (S_ISREG(st.st_mode) && (double)st.st_size > size)
			size = (double)st.st_size;
		else if (S_ISDIR(st.st_mode) && depth > 0 &&
		    st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9 > t) {
			t = st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
			snprintf(newest, sizeof newest, "%s", path);
		}
	}
	closedir(d);
	if (size < 0 && newest[0] != '\0')
		size = sampler_ckpt_size(newest, 0);
	return size;
}

void
sampler_fs(struct sampler *s, struct node_sample *ns)
{
	double	 size;

	sampler_fs_one(s->state_dir, ns, NM_STATE_FREE);
	sampler_fs_one(s->ckpt_dir, ns, NM_CKPT_FREE);
	if (s->ckpt_dir != NULL && (size = sampler_ckpt_size(s->ckpt_dir,
	    1)) >= 0)
		sampler_set(ns, NM_CKPT_BYTES, size);
}
