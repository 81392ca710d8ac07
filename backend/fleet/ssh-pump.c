/*
 * ssh-pump.c: the rest of the fleet speaks frames on an fd, and an SSH
 * node's agent is at the far end of an exec channel.  A socketpair joins
 * the two: one end goes to the fleet, and a thread per node moves bytes
 * between the other end and the channel, as they come, frames untouched
 * (an event loop of its own, lib/evloop.h).
 * The thread owns the libssh session (libssh sessions are not shared
 * between threads) and frees it when either side closes.
 *
 * When the remote side ends first, the thread sends one "error" frame
 * with the reason (the exit status and the last line the remote command
 * wrote on stderr, say "hunter: command not found"), then closes.  The
 * stderr bytes are taken as libssh receives them (a channel callback):
 * once the remote's close has been processed libssh refuses to read what
 * it still buffers, and a command that writes its complaint and exits at
 * once would be reported as a failed connection, its words lost.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <libssh/callbacks.h>

#include "lib/evloop.h"
#include "lib/utf8.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/fleet/ssh.h"

/* How long a turn sleeps when nothing moves; only bounds how late a
 * packet that libssh buffered without the socket waking us is seen. */
#define PUMP_IDLE_MS	1000

/* How long fleet_free waits for the pumps to let go of their sessions. */
#define PUMP_QUIESCE_MS	5000

/* Pumps still running: libssh must not be torn down under them at exit.
 * Finished ones are joined (not detached) so that their thread-local
 * state, OpenSSL's random generator among it, is gone before exit. */
static pthread_mutex_t	pump_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	pump_done = PTHREAD_COND_INITIALIZER;
static int		pump_running;
static pthread_t	*pump_finished;
static int		pump_nfinished, pump_capfinished;

struct pump {
	ssh_session	 s;
	ssh_channel	 ch;
	int		 fd;		/* our end of the socketpair */
	char		 node[64];
	char		 tail[512];	/* the remote's last stderr bytes */
	size_t		 tlen;
	char		 why[1024];	/* why the link ends, when it is said */
	bool		 done;
	struct ssh_channel_callbacks_struct cb;	/* lives as long as ch */
};

/* Write all of buf to the fleet's side.  0 or -1 (it closed). */
static int
pump_to_fleet(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Keep the last bytes the remote wrote on stderr, for the reason. */
static void
pump_keep_stderr(struct pump *p, const char *buf, size_t n)
{
	if (n >= sizeof p->tail - 1) {
		buf += n - (sizeof p->tail - 1);
		n = sizeof p->tail - 1;
	}
	if (p->tlen + n > sizeof p->tail - 1) {
		size_t drop = p->tlen + n - (sizeof p->tail - 1);

		memmove(p->tail, p->tail + drop, p->tlen - drop);
		p->tlen -= drop;
	}
	memcpy(p->tail + p->tlen, buf, n);
	p->tlen += n;
	p->tail[p->tlen] = '\0';
}

/* libssh's data callback: stderr is kept as it arrives (the bytes are
 * consumed); stdout stays buffered for pump_drain. */
static int
pump_on_data(ssh_session s, ssh_channel ch, void *data, uint32_t len,
    int is_stderr, void *arg)
{
	(void)s;
	(void)ch;
	if (!is_stderr)
		return 0;
	pump_keep_stderr(arg, data, len);
	return (int)len;
}

/* The last non-empty line of what the remote wrote on stderr. */
static const char *
pump_last_line(struct pump *p)
{
	char	*end;

	while (p->tlen > 0 && (p->tail[p->tlen - 1] == '\n' ||
	    p->tail[p->tlen - 1] == '\r'))
		p->tail[--p->tlen] = '\0';
	end = strrchr(p->tail, '\n');
	return end != NULL ? end + 1 : p->tail;
}

/*
 * The remote command ended: say so with its status and last stderr line,
 * and when the shell could not find hunter (127) or run it (126), in
 * words that name the fix.
 */
static void
pump_why_ended(struct pump *p, char *why, size_t len)
{
	int		 status = ssh_channel_get_exit_status(p->ch);
	const char	*line = pump_last_line(p);
	char		 what[768];

	snprintf(what, sizeof what, "the remote `hunter agent --stdio` ended "
	    "(exit status %d)%s%s", status, p->tlen > 0 ? ": " : "", line);
	if (status == 127)
		snprintf(why, len, "hunter is not installed on node %s (not on "
		    "the PATH of its SSH sessions): %s; `hunter check --push` "
		    "copies this build there", p->node, what);
	else if (status == 126)
		snprintf(why, len, "hunter cannot run on node %s: %s; `hunter "
		    "check --push` copies a build that runs there", p->node,
		    what);
	else
		snprintf(why, len, "%s", what);
}

/* Tell the fleet why the link ends; best effort, it may be gone. */
static void
pump_say_why(struct pump *p, char *why, size_t size)
{
	json_t	*m = json_pack("{s:s, s:s, s:s}", "t", MSG_ERROR, "node",
	    p->node, "reason", utf8_fix(why, size));	/* quotes the remote */
	uint8_t	*frame;
	size_t	 len;

	if (m != NULL && (frame = proto_encode(m, &len, NULL, 0)) != NULL) {
		send(p->fd, frame, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		free(frame);
	}
	json_decref(m);
}

/* Take what libssh holds for one stream.  1 = more may come, 0 = EOF,
 * -1 = the connection failed, -2 = the fleet closed its end. */
static int
pump_drain(struct pump *p, int is_stderr)
{
	char	 buf[32768];
	int	 n;

	while ((n = ssh_channel_read_nonblocking(p->ch, buf, sizeof buf,
	    is_stderr)) > 0) {
		if (is_stderr)
			pump_keep_stderr(p, buf, (size_t)n);
		else if (pump_to_fleet(p->fd, buf, (size_t)n) != 0)
			return -2;
	}
	if (n == SSH_EOF)
		return 0;
	if (n == SSH_ERROR)
		return -1;
	return ssh_channel_is_eof(p->ch) ? 0 : 1;
}

/* The remote closed its end (a read may then fail with "Remote channel
 * is closed"), as against the connection failing under it. */
static bool
pump_remote_ended(struct pump *p)
{
	return ssh_channel_is_eof(p->ch) ||
	    (ssh_channel_is_closed(p->ch) && ssh_is_connected(p->s));
}

/* The fleet's side has bytes for the channel. */
static void
pump_on_fleet(int fd, short revents, void *arg)
{
	struct pump	*p = arg;
	char		 buf[32768];
	ssize_t		 n;

	(void)revents;
	n = read(fd, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		p->done = true;		/* the fleet closed the link */
		return;
	}
	if (ssh_channel_write(p->ch, buf, (uint32_t)n) == (int)n)
		return;
	/* Refused as "Remote channel is closed" when the command ended
	 * before our first frame went. */
	p->done = true;
	if (pump_drain(p, 0) == -2)
		return;			/* the fleet closed the link */
	(void)pump_drain(p, 1);
	if (pump_remote_ended(p))
		pump_why_ended(p, p->why, sizeof p->why);
	else
		snprintf(p->why, sizeof p->why, "the SSH connection failed: %s",
		    ssh_get_error(p->s));
}

/* The SSH socket has bytes: the drain at the top of the next turn takes
 * what libssh makes of them. */
static void
pump_on_ssh(int fd, short revents, void *arg)
{
	(void)fd;
	(void)revents;
	(void)arg;
}

static void *
pump_main(void *arg)
{
	struct pump	*p = arg;
	struct evloop	*loop = evloop_new();
	int		 out, err;

	evloop_fd_add(loop, p->fd, POLLIN, pump_on_fleet, p);
	evloop_fd_add(loop, ssh_get_fd(p->s), POLLIN, pump_on_ssh, p);
	while (!p->done) {
		/* Drain first: poll() sees the socket, not libssh's buffers. */
		out = pump_drain(p, 0);
		err = out == -2 ? 1 : pump_drain(p, 1);
		if (out == -2)
			break;			/* the fleet closed the link */
		if ((out == -1 || err == -1) && !pump_remote_ended(p)) {
			snprintf(p->why, sizeof p->why, "the SSH connection "
			    "failed: %s", ssh_get_error(p->s));
			break;
		}
		if (out != 1) {		/* 0, or a read refused after EOF */
			pump_why_ended(p, p->why, sizeof p->why);
			break;
		}
		if (evloop_run_once(loop, PUMP_IDLE_MS) < 0)
			break;
	}
	evloop_free(loop);
	if (p->why[0] != '\0')
		pump_say_why(p, p->why, sizeof p->why);
	shutdown(p->fd, SHUT_RDWR);
	close(p->fd);
	if (ssh_channel_is_open(p->ch)) {
		ssh_channel_send_eof(p->ch);
		ssh_channel_close(p->ch);
	}
	ssh_channel_free(p->ch);
	ssh_disconnect(p->s);
	ssh_free(p->s);
	free(p);
	pthread_mutex_lock(&pump_lock);
	if (pump_nfinished == pump_capfinished) {
		pump_capfinished = pump_capfinished ? 2 * pump_capfinished : 8;
		pump_finished = xreallocarray(pump_finished,
		    (size_t)pump_capfinished, sizeof *pump_finished);
	}
	pump_finished[pump_nfinished++] = pthread_self();
	pump_running--;
	pthread_cond_broadcast(&pump_done);
	pthread_mutex_unlock(&pump_lock);
	return NULL;
}

/* Join the pumps that have finished (they are exiting, or gone). */
static void
pump_reap(void)
{
	pthread_t	*done;
	int		 n;

	pthread_mutex_lock(&pump_lock);
	done = pump_finished;
	n = pump_nfinished;
	pump_finished = NULL;
	pump_nfinished = pump_capfinished = 0;
	pthread_mutex_unlock(&pump_lock);
	for (int i = 0; i < n; i++)
		pthread_join(done[i], NULL);
	free(done);
}

void
fleet_ssh_quiesce(void)
{
	struct timespec	 until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PUMP_QUIESCE_MS / 1000;
	pthread_mutex_lock(&pump_lock);
	while (pump_running > 0 &&
	    pthread_cond_timedwait(&pump_done, &pump_lock, &until) == 0)
		;
	pthread_mutex_unlock(&pump_lock);
	pump_reap();
}

int
fleet_ssh_pump_start(ssh_session s, ssh_channel ch, const char *node,
    char *err, size_t errlen)
{
	struct pump	*p;
	pthread_t	 t;
	sigset_t	 all, old;
	int		 sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "socketpair: %s",
		    strerror(errno));
		return -1;
	}
	p = xcalloc(1, sizeof *p);
	p->s = s;
	p->ch = ch;
	p->fd = sv[1];
	snprintf(p->node, sizeof p->node, "%s", node);
	p->cb.userdata = p;
	p->cb.channel_data_function = pump_on_data;
	ssh_callbacks_init(&p->cb);
	ssh_set_channel_callbacks(ch, &p->cb);
	/* The thread takes no signals: they are the main thread's. */
	sigfillset(&all);
	pump_reap();
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&pump_lock);
	if ((rc = pthread_create(&t, NULL, pump_main, p)) == 0)
		pump_running++;
	pthread_mutex_unlock(&pump_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start a thread: %s",
		    strerror(rc));
		close(sv[0]);
		close(sv[1]);
		free(p);
		return -1;
	}
	return sv[0];
}
