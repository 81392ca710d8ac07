/*
 * ssh-push.c: which hunter runs on an SSH node.  A copy pushed for this
 * build (HOME/.local/lib/hunter/BUILD-ID/hunter, HOME being where the
 * node's SFTP server starts) is preferred, so that one `hunter check
 * --push` serves every later run; else "hunter" from the login PATH.
 * With fleet_push set, a node whose hunter is missing (the shell says
 * 127) or reports another build in `hunter --version` gets this binary
 * (/proc/self/exe) over SFTP: written to a temporary name, made 0755,
 * then renamed into place, so a half-written copy is never run.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <libssh/sftp.h>

#include "backend/fleet/fleet.h"
#include "backend/fleet/ssh.h"

/* SFTP writes go in pieces this big; one round trip each. */
#define PUSH_CHUNK	(32 * 1024)

/* One push at a time in this process. */
static pthread_mutex_t	push_lock = PTHREAD_MUTEX_INITIALIZER;

/* Our build id, as the hello and `hunter --version` report it. */
static void
push_own_build(char *buf, size_t len)
{
	json_t	*h = proto_hello("backend", NULL);
	const char *b = json_string_value(json_object_get(json_object_get(h,
	    "versions"), "build"));

	snprintf(buf, len, "%s", b != NULL ? b : "unknown");
	json_decref(h);
}

/* Run `'hunter' --version` on the node.  Returns its exit status (127:
 * not on the PATH), or -1 when the channel failed; build gets the
 * "build:" line's value. */
static int
push_probe(ssh_session s, char *build, size_t len)
{
	ssh_channel	 ch = ssh_channel_new(s);
	char		 out[4096], *line, *nl;
	int		 n, got = 0, status = -1;

	build[0] = '\0';
	if (ch == NULL)
		return -1;
	if (ssh_channel_open_session(ch) != SSH_OK ||
	    ssh_channel_request_exec(ch, "'hunter' --version") != SSH_OK) {
		ssh_channel_free(ch);
		return -1;
	}
	while (got < (int)sizeof out - 1 && (n = ssh_channel_read_timeout(ch,
	    out + got, (uint32_t)(sizeof out - 1 - (size_t)got), 0,
	    10000)) > 0)
		got += n;
	out[got] = '\0';
	ssh_channel_send_eof(ch);
	status = ssh_channel_get_exit_status(ch);
	ssh_channel_close(ch);
	ssh_channel_free(ch);
	if ((line = strstr(out, "\nbuild: ")) != NULL) {
		line += strlen("\nbuild: ");
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		snprintf(build, len, "%s", line);
	}
	return status;
}

static bool
push_is_dir(sftp_session sftp, const char *path)
{
	sftp_attributes	 a = sftp_stat(sftp, path);
	bool		 dir;

	if (a == NULL)
		return false;
	dir = a->type == SSH_FILEXFER_TYPE_DIRECTORY;
	sftp_attributes_free(a);
	return dir;
}

/* mkdir -p over SFTP, relative to the start directory.  OpenSSH answers
 * a plain failure for a directory that exists, hence the stat. */
static int
push_mkdirs(sftp_session sftp, const char *path)
{
	char	 p[1024];
	size_t	 len;

	snprintf(p, sizeof p, "%s", path);
	len = strlen(p);
	for (size_t i = 1; i <= len; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (sftp_mkdir(sftp, p, 0755) != 0 && !push_is_dir(sftp, p))
			return -1;
		if (i < len)
			p[i] = '/';
	}
	return 0;
}

/* Copy /proc/self/exe to rel (relative to the start directory). */
static int
push_copy(sftp_session sftp, const char *rel, char *why, size_t whylen)
{
	char		 tmp[1200], dir[1024], buf[PUSH_CHUNK];
	sftp_file	 f;
	ssize_t		 n;
	uint64_t	 r;
	int		 fd, rc = -1;

	snprintf(dir, sizeof dir, "%s", rel);
	*strrchr(dir, '/') = '\0';
	if (push_mkdirs(sftp, dir) != 0) {
		snprintf(why, whylen, "cannot create %s", dir);
		return -1;
	}
	if ((fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "cannot read my own binary: %s",
		    strerror(errno));
		return -1;
	}
	/* A name nobody can guess, created new (O_EXCL: an SFTP server
	 * does not open a link or a file planted under it). */
	if (getentropy(&r, sizeof r) != 0) {
		snprintf(why, whylen, "getentropy: %s", strerror(errno));
		close(fd);
		return -1;
	}
	snprintf(tmp, sizeof tmp, "%s.%016" PRIx64 ".tmp", rel, r);
	if ((f = sftp_open(sftp, tmp, O_WRONLY | O_CREAT | O_EXCL, 0700)) ==
	    NULL) {
		snprintf(why, whylen, "cannot create %s", tmp);
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		if (sftp_write(f, buf, (size_t)n) != n) {
			snprintf(why, whylen, "writing %s failed", tmp);
			goto out;
		}
	}
	if (n < 0) {
		snprintf(why, whylen, "reading my own binary: %s",
		    strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	if (sftp_close(f) != 0 && rc == 0) {
		snprintf(why, whylen, "closing %s failed", tmp);
		rc = -1;
	}
	if (rc == 0 && sftp_chmod(sftp, tmp, 0755) != 0) {
		snprintf(why, whylen, "chmod %s failed", tmp);
		rc = -1;
	}
	sftp_unlink(sftp, rel);		/* SFTPv3 rename does not replace */
	if (rc == 0 && sftp_rename(sftp, tmp, rel) != 0) {
		snprintf(why, whylen, "renaming %s to %s failed", tmp, rel);
		rc = -1;
	}
	if (rc != 0)
		sftp_unlink(sftp, tmp);
	return rc;
}

/* Whether the node already holds a copy the size of this binary. */
static bool
push_present(sftp_session sftp, const char *rel)
{
	struct stat	 st;
	sftp_attributes	 a = sftp_stat(sftp, rel);
	bool		 ok;

	if (a == NULL)
		return false;
	ok = stat("/proc/self/exe", &st) == 0 && a->size == (uint64_t)st.st_size &&
	    (a->permissions & 0100) != 0 && a->type == SSH_FILEXFER_TYPE_REGULAR;
	sftp_attributes_free(a);
	return ok;
}

int
fleet_ssh_remote_exe(ssh_session s, const char *node, char *exe,
    size_t exelen, char *err, size_t errlen)
{
	char		 own[256], id[256], rel[1024], theirs[256], why[512];
	char		*home = NULL;
	sftp_session	 sftp;
	int		 status, rc = -1;

	snprintf(exe, exelen, "hunter");
	push_own_build(own, sizeof own);
	fleet_ssh_build_dir(id, sizeof id, own);
	snprintf(rel, sizeof rel, "%s/%s/hunter", SSH_PUSH_DIR, id);
	if ((sftp = sftp_new(s)) == NULL || sftp_init(sftp) != SSH_OK ||
	    (home = sftp_canonicalize_path(sftp, ".")) == NULL) {
		if (sftp != NULL)
			sftp_free(sftp);
		if (!fleet_push)
			return 0;	/* no SFTP: "hunter" from the PATH */
		snprintf(err, errlen, "no SFTP for --push: %s",
		    ssh_get_error(s));
		return -1;
	}
	/* Nodes connect at once (fleet.c), and two of them may share a
	 * home: one pushes while the other waits, then finds the copy. */
	pthread_mutex_lock(&push_lock);
	if (push_present(sftp, rel)) {
		snprintf(exe, exelen, "%s/%s", home, rel);
		rc = 0;
		goto out;
	}
	if (!fleet_push) {
		rc = 0;
		goto out;
	}
	status = push_probe(s, theirs, sizeof theirs);
	if (status == 0 && strcmp(theirs, own) == 0) {
		rc = 0;
		goto out;
	}
	fprintf(stderr, "hunter: node %s: %s; pushing this build to %s/%s\n",
	    node, status == 127 ? "no hunter on its PATH" : status == 0 ?
	    "its hunter is another build" : "its hunter does not run", home,
	    rel);
	if (push_copy(sftp, rel, why, sizeof why) != 0) {
		snprintf(err, errlen, "--push to %s failed: %s: %s", home, why, ssh_get_error(s));
		goto out;
	}
	snprintf(exe, exelen, "%s/%s", home, rel);
	rc = 0;
out:
	pthread_mutex_unlock(&push_lock);
	ssh_string_free_char(home);
	sftp_free(sftp);
	return rc;
}
