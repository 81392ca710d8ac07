/*
 * comm-shm-seg.c: the segment of a shared-memory group (see
 * comm-shm-internal.h): made by the lowest member with mode 0600, a
 * random name and slots that fit /dev/shm, opened by the rest through
 * the name in the store, unlinked once all have it; and the removal of
 * what a killed creator left (comm_shm_remove_left).  The barrier is
 * comm-shm-wait.c's.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/cpuid.h"
#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "backend/comm/comm-shm-internal.h"

#define SHM_MAGIC	0x68756e7465727331ull	/* "hunters1" */
#define SHM_PREFIX	"hunter-"
#define SHM_DIR		"/dev/shm"	/* where glibc keeps shm_open's names */
#define SHM_SPIN	4000		/* about 20-50 us of pause */
#define SHM_SPIN_CROWDED 64		/* more members than CPUs */

static size_t
shm_data_offset(int world)
{
	size_t	head = sizeof(struct shm_head) +
	    (size_t)world * sizeof(struct shm_member);

	return (head + 4095) & ~(size_t)4095;
}

static size_t
shm_size(int world, size_t slot)
{
	return shm_data_offset(world) + 2 * (size_t)(world + 1) * slot;
}

/* SHM_SLOT, halved until the segment takes at most half of the room
 * left in /dev/shm; 0 when not even SHM_SLOT_MIN fits. */
static size_t
shm_fit_slot(int world)
{
	struct statvfs	sv;
	size_t		slot = SHM_SLOT;
	double		room;

	if (statvfs(SHM_DIR, &sv) != 0)
		return slot;
	room = (double)sv.f_bavail * (double)sv.f_frsize / 2;
	while (slot > SHM_SLOT_MIN && (double)shm_size(world, slot) > room)
		slot /= 2;
	return (double)shm_size(world, slot) <= room ? slot : 0;
}

/* Make the segment and publish its name under key. */
static int
shm_create(struct shm_group *g, const struct comm_store *cs, const char *key,
    char *err, size_t errlen)
{
	uint64_t	r[2];
	int		rc;

	for (int tries = 0; g->fd < 0 && tries < 8; tries++) {
		if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
			errf(err, errlen, "shm: getrandom: %s", strerror(errno));
			return -1;
		}
		snprintf(g->name, sizeof g->name, "/%s%ld-%016llx%016llx",
		    SHM_PREFIX, (long)getpid(), (unsigned long long)r[0],
		    (unsigned long long)r[1]);
		g->fd = shm_open(g->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
		    0600);
		if (g->fd < 0 && errno != EEXIST)
			break;
	}
	if (g->fd < 0) {
		errf(err, errlen, "shm: cannot create %s: %s", g->name,
		    strerror(errno));
		g->name[0] = '\0';
		return -1;
	}
	/* The umask may only have narrowed it; make it exactly 0600. */
	if (fchmod(g->fd, 0600) != 0 || ftruncate(g->fd, (off_t)g->size) != 0) {
		errf(err, errlen, "shm: sizing %s to %zu bytes: %s", g->name,
		    g->size, strerror(errno));
		return -1;
	}
	/* Take the pages now: a full /dev/shm is an error here, not a
	 * SIGBUS in the middle of a collective. */
	if ((rc = posix_fallocate(g->fd, 0, (off_t)g->size)) != 0) {
		errf(err, errlen, "shm: reserving %zu bytes for %s in %s: %s",
		    g->size, g->name, SHM_DIR, strerror(rc));
		return -1;
	}
	g->h = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (g->h == MAP_FAILED) {
		g->h = NULL;
		errf(err, errlen, "shm: mapping %s: %s", g->name, strerror(errno));
		return -1;
	}
	g->h->world = (uint32_t)g->world;
	g->h->slot = (uint32_t)g->slot;
	g->h->size = g->size;
	atomic_store(&g->h->magic, SHM_MAGIC);
	if (cs->set(cs->ctx, key, g->name, strlen(g->name)) != 0) {
		errf(err, errlen, "shm: publishing %s under %s failed", g->name,
		    key);
		return -1;
	}
	return 0;
}

/* Open the segment whose name the creator published under key. */
static int
shm_open_named(struct shm_group *g, const struct comm_store *cs,
    const char *key, char *err, size_t errlen)
{
	struct stat	 st;
	void		*val = NULL;
	size_t		 len = 0;

	if (cs->get(cs->ctx, key, &val, &len, g->timeout_ms) != 0) {
		errf(err, errlen, "shm: rank %d: no segment under %s within "
		    "%d ms", g->global[g->rank], key, g->timeout_ms);
		return -1;
	}
	if (len <= sizeof SHM_PREFIX || len >= sizeof g->name ||
	    memcmp(val, "/" SHM_PREFIX, sizeof SHM_PREFIX) != 0 ||
	    memchr((char *)val + 1, '/', len - 1) != NULL ||
	    memchr(val, '\0', len) != NULL) {
		free(val);
		errf(err, errlen, "shm: %s does not name a segment", key);
		return -1;
	}
	memcpy(g->name, val, len);
	g->name[len] = '\0';
	free(val);
	if ((g->fd = shm_open(g->name, O_RDWR | O_CLOEXEC, 0)) < 0) {
		errf(err, errlen, "shm: rank %d: opening %s: %s (not on the "
		    "host of rank %d?)", g->global[g->rank], g->name,
		    strerror(errno), g->global[0]);
		return -1;
	}
	if (fstat(g->fd, &st) != 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) != 0600 ||
	    (size_t)st.st_size < shm_size(g->world, SHM_SLOT_MIN)) {
		errf(err, errlen, "shm: %s is not this group's (owner %ld, "
		    "mode %03o, %lld bytes; want %ld, 600, at least %zu)",
		    g->name, (long)st.st_uid, (unsigned)(st.st_mode & 07777),
		    (long long)st.st_size, (long)geteuid(),
		    shm_size(g->world, SHM_SLOT_MIN));
		return -1;
	}
	g->size = (size_t)st.st_size;
	g->h = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (g->h == MAP_FAILED) {
		g->h = NULL;
		errf(err, errlen, "shm: mapping %s: %s", g->name, strerror(errno));
		return -1;
	}
	if (atomic_load(&g->h->magic) != SHM_MAGIC ||
	    g->h->world != (uint32_t)g->world || g->h->slot < SHM_SLOT_MIN ||
	    g->h->slot > SHM_SLOT || g->h->slot % SHM_LINE != 0 ||
	    shm_size(g->world, g->h->slot) != g->size) {
		errf(err, errlen, "shm: %s holds a group of %u with slots of "
		    "%u bytes, not one of %d", g->name, g->h->world,
		    g->h->slot, g->world);
		return -1;
	}
	return 0;
}

struct shm_group *
shm_join(int rank, int world, const int *global, int timeout_ms,
    const struct comm_store *cs, const char *key, char *err, size_t errlen)
{
	struct shm_group	*g = xcalloc(1, sizeof *g);
	struct flock		 fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	    .l_start = rank, .l_len = 1 };
	double			 deadline = clock_mono() + timeout_ms / 1e3;
	char			 what[96];
	int			 rc;

	g->rank = rank;
	g->world = world;
	g->timeout_ms = timeout_ms;
	g->fd = -1;
	g->global = xcalloc((size_t)world, sizeof *g->global);
	for (int q = 0; q < world; q++)
		g->global[q] = global != NULL ? global[q] : q;
	if (world < 2 || world > SHM_MAX_WORLD) {
		errf(err, errlen, "shm: a group of %d ranks (2 to %d)", world,
		    SHM_MAX_WORLD);
		goto fail;
	}
	g->spin_max = world <= cpu_cores() ? SHM_SPIN : SHM_SPIN_CROWDED;
	g->spin = g->spin_max;
	if (rank == 0) {
		if ((g->slot = shm_fit_slot(world)) == 0) {
			errf(err, errlen, "shm: %s has not the room for %zu "
			    "bytes", SHM_DIR, shm_size(world, SHM_SLOT_MIN));
			goto fail;
		}
		g->size = shm_size(world, g->slot);
		rc = shm_create(g, cs, key, err, errlen);
	} else
		rc = shm_open_named(g, cs, key, err, errlen);
	if (rc != 0)
		goto fail;
	g->slot = g->h->slot;
	g->data = (uint8_t *)g->h + shm_data_offset(world);
	if (fcntl(g->fd, F_OFD_SETLK, &fl) != 0) {
		errf(err, errlen, "shm: locking byte %d of %s: %s", rank,
		    g->name, strerror(errno));
		goto fail;
	}
	g->h->member[rank].pid = (int32_t)getpid();
	atomic_store(&g->h->member[rank].attached, 1);
	atomic_fetch_add(&g->h->nattached, 1);
	shm_ring(g->h);
	snprintf(what, sizeof what, "shm: rank %d joining %s", g->global[rank],
	    g->name);
	if (shm_wait(g, 0, what, deadline, err, errlen) != 0)
		goto fail;
	if (rank == 0)
		shm_unlink(g->name);
	return g;

fail:
	if (rank == 0 && g->name[0] != '\0')
		shm_unlink(g->name);
	shm_leave(g);
	return NULL;
}

void
shm_leave(struct shm_group *g)
{
	if (g == NULL)
		return;
	if (g->h != NULL)
		munmap(g->h, g->size);
	if (g->fd >= 0)
		close(g->fd);
	free(g->global);
	free(g);
}

int
comm_shm_remove_left(long pid)
{
	char		 prefix[64], name[NAME_MAX + 2];
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	snprintf(prefix, sizeof prefix, "%s%ld-", SHM_PREFIX, pid);
	if ((d = opendir(SHM_DIR)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(name, sizeof name, "/%s", de->d_name);
		n += shm_unlink(name) == 0;
	}
	closedir(d);
	return n;
}
