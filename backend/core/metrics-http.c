/*
 * metrics-http.c: the Prometheus endpoint's HTTP side (metrics-http.h):
 * libmicrohttpd on one internal thread, the newest rendering and the
 * handshake with the backend's loop that produces it.
 *
 * Slow clients cannot starve it: connections are bounded in all
 * (HTTP_CONNS) and per address (HTTP_PER_ADDR), and a request must be
 * whole within REQUEST_S of the connection's start (or of the end of its
 * last request): libmicrohttpd's own timeout starts again at every byte,
 * so a client sending a header line every few seconds held its slot for
 * ever.  A thread of its own (mh_sweep) shuts such connections down.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "lib/clock.h"
#include "lib/inet.h"
#include "lib/xmalloc.h"
#include "backend/core/metrics-http.h"

#define FRESH_S		0.1	/* a rendering this young is served as is */
#define WAIT_S		0.5	/* for the loop; then the newest one goes */
#define LINGER_MIN_S	3.0
#define LINGER_MAX_S	10.0
#define CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"
/* Prometheus holds one connection a server: a few scrapers fit many
 * times over.  Past the total a connection waits in the backlog, past
 * the per-address bound it is closed as it comes; slow ones make room
 * after REQUEST_S, so even clients of many addresses (all of 127/8 is
 * this host) cannot keep a scrape out for longer. */
#define HTTP_CONNS	256
#define HTTP_PER_ADDR	8
#define REQUEST_S	5.0	/* from a request's first byte to its end */
#define SWEEP_S		0.25	/* how often the sweeper looks */

/* A connection, from its start to its close (libmicrohttpd's socket
 * context): while no request of it is being answered, it must send one
 * whole within REQUEST_S of since. */
struct mh_conn {
	int		 fd;
	double		 since;
	bool		 busy;		/* a request of it is being answered */
	bool		 cut;		/* shut down by the sweeper */
	struct mh_conn	*next, *prev;
};

struct metrics_http {
	struct MHD_Daemon *d;
	int		 wake_fd;
	char		 url[128];

	pthread_mutex_t	 mu;		/* guards what follows */
	pthread_cond_t	 cv;		/* a rendering came, or one was served */
	char		*text;		/* the newest rendering */
	size_t		 len;
	unsigned long	 gen;		/* renderings published */
	double		 at;		/* CLOCK_MONOTONIC of the newest */
	bool		 want;		/* a scrape waits for a fresh one */
	bool		 closing;	/* no more renderings will come */
	double		 last_scrape, gap;
	bool		 final_served;	/* since closing, sent whole */

	struct mh_conn	*conns;		/* open connections (mu) */
	pthread_t	 sweeper;
	bool		 stop_sweep;	/* (mu) */

	/* The server thread's own: the response made from text, shared by
	 * every scrape until the next rendering. */
	struct MHD_Response *resp;
	unsigned long	 resp_gen;
};

static void
mh_timespec(double t, struct timespec *ts)
{
	ts->tv_sec = (time_t)t;
	ts->tv_nsec = (long)((t - (double)ts->tv_sec) * 1e9);
}

/* The response for a scrape now: a rendering at most FRESH_S old, or the
 * newest after WAIT_S; NULL while there has been none.  *last: it is the
 * final rendering, given after closing began. */
static struct MHD_Response *
mh_current(struct metrics_http *m, bool *last)
{
	struct MHD_Response *r = NULL;
	struct timespec	 ts;
	double		 now = clock_mono(), until = now + WAIT_S;
	unsigned long	 g;

	pthread_mutex_lock(&m->mu);
	if (m->last_scrape > 0)
		m->gap = now - m->last_scrape;
	m->last_scrape = now;
	if (!m->closing && (m->text == NULL || now - m->at > FRESH_S)) {
		g = m->gen;
		m->want = true;
		if (write(m->wake_fd, "m", 1) < 0) {
			/* the pipe is full: the loop is awake anyway */
		}
		mh_timespec(until, &ts);
		while (m->gen == g && !m->closing && clock_mono() < until)
			pthread_cond_timedwait(&m->cv, &m->mu, &ts);
	}
	if (m->text != NULL) {
		if (m->resp == NULL || m->resp_gen != m->gen) {
			if (m->resp != NULL)
				MHD_destroy_response(m->resp);
			m->resp = MHD_create_response_from_buffer(m->len,
			    m->text, MHD_RESPMEM_MUST_COPY);
			if (m->resp == NULL)
				abort();
			MHD_add_response_header(m->resp, "Content-Type",
			    CONTENT_TYPE);
			m->resp_gen = m->gen;
		}
		r = m->resp;
		*last = m->closing;
	}
	pthread_mutex_unlock(&m->mu);
	return r;
}

static enum MHD_Result
mh_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text),
	    (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result	 rc;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* Mark c's connection as being answered (busy) or as waiting for its
 * next request from now. */
static void
mh_conn_busy(struct metrics_http *m, struct MHD_Connection *c, bool busy)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct mh_conn	*k = ci != NULL ? ci->socket_context : NULL;

	if (k == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	k->busy = busy;
	k->since = clock_mono();
	pthread_mutex_unlock(&m->mu);
}

/* A connection starts or ends: its record in m->conns. */
static void
mh_connection(void *cls, struct MHD_Connection *c, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	struct metrics_http *m = cls;
	const union MHD_ConnectionInfo *ci;
	struct mh_conn	*k;

	pthread_mutex_lock(&m->mu);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c,
		    MHD_CONNECTION_INFO_CONNECTION_FD);
		k = xcalloc(1, sizeof *k);
		k->fd = ci != NULL ? ci->connect_fd : -1;
		k->since = clock_mono();
		if ((k->next = m->conns) != NULL)
			k->next->prev = k;
		m->conns = k;
		*socket_context = k;
	} else if ((k = *socket_context) != NULL) {
		/* Told before libmicrohttpd closes the fd: the sweeper,
		 * under the same lock, never touches a reused number. */
		if (k->prev != NULL)
			k->prev->next = k->next;
		else
			m->conns = k->next;
		if (k->next != NULL)
			k->next->prev = k->prev;
		free(k);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&m->mu);
}

/* Shut down the connections whose request is not whole in time; the
 * server thread then sees them end and closes them. */
static void *
mh_sweep(void *arg)
{
	struct metrics_http *m = arg;
	struct timespec	 ts;
	double		 now;

	pthread_mutex_lock(&m->mu);
	while (!m->stop_sweep) {
		now = clock_mono();
		for (struct mh_conn *k = m->conns; k != NULL; k = k->next) {
			if (!k->busy && !k->cut && k->fd >= 0 &&
			    now - k->since > REQUEST_S) {
				shutdown(k->fd, SHUT_RDWR);
				k->cut = true;
			}
		}
		mh_timespec(now + SWEEP_S, &ts);
		pthread_cond_timedwait(&m->cv, &m->mu, &ts);
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

static enum MHD_Result
mh_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_len, void **con_cls)
{
	struct metrics_http *m = cls;
	struct MHD_Response *r;
	bool		 last = false;

	mh_conn_busy(m, c, true);	/* its headers are in */

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return mh_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "hunter: only GET /metrics\n");
	if (strcmp(url, "/metrics") != 0)
		return mh_text(c, MHD_HTTP_NOT_FOUND,
		    "hunter: the Prometheus metrics are at /metrics\n");
	if ((r = mh_current(m, &last)) == NULL)
		return mh_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
		    "hunter: the backend has not rendered its metrics yet\n");
	if (last)
		*con_cls = m;	/* mh_completed tells the closing thread */
	return MHD_queue_response(c, MHD_HTTP_OK, r);
}

/*
 * A request is over.  The final rendering counts as served only once it
 * was sent whole: closing the daemon as soon as it was queued cut it off
 * on a loaded machine, and the scraper kept the values of a second ago.
 */
static void
mh_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct metrics_http *m = cls;

	mh_conn_busy(m, c, false);	/* the next request's clock starts */
	if (*con_cls != m || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		return;
	pthread_mutex_lock(&m->mu);
	m->final_served = true;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

/* libmicrohttpd's own complaints (a client that misbehaves) are not the
 * operator's business; the screen may be the console's. */
static void
mh_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}

struct metrics_http *
metrics_http_open(const char *addr, int wake_fd, char *err, size_t errlen)
{
	struct metrics_http *m;
	struct inet_addr a;
	pthread_condattr_t ca;
	sigset_t	 all, old;
	char		 e[256], name[80];
	int		 fd;

	if (inet_parse(addr, &a, e, sizeof e) != 0) {
		snprintf(err, errlen, "metrics address %s", e);
		return NULL;
	}
	if ((fd = inet_listen(&a, e, sizeof e)) < 0) {
		snprintf(err, errlen, "metrics endpoint %s", e);
		return NULL;
	}
	m = xcalloc(1, sizeof *m);
	m->wake_fd = wake_fd;
	inet_format(&a, name, sizeof name);
	snprintf(m->url, sizeof m->url, "http://%s/metrics", name);
	pthread_mutex_init(&m->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* The server's thread takes no signal: they are the front end's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	m->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL,
	    mh_request, m,
	    MHD_OPTION_EXTERNAL_LOGGER, mh_log, NULL,
	    MHD_OPTION_NOTIFY_COMPLETED, mh_completed, m,
	    MHD_OPTION_NOTIFY_CONNECTION, mh_connection, m,
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    /* An idle connection goes after 5 s, between the scrapes of a
	     * 15 s interval; a slow one after REQUEST_S (mh_sweep). */
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNS,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTP_PER_ADDR,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)REQUEST_S,
	    MHD_OPTION_END);
	if (m->d != NULL && pthread_create(&m->sweeper, NULL, mh_sweep,
	    m) != 0) {
		MHD_stop_daemon(m->d);
		m->d = NULL;
		fd = -1;	/* closed with the daemon */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (m->d == NULL) {
		snprintf(err, errlen, "metrics endpoint %s: libmicrohttpd "
		    "would not start", name);
		if (fd >= 0)
			close(fd);
		pthread_cond_destroy(&m->cv);
		pthread_mutex_destroy(&m->mu);
		free(m);
		return NULL;
	}
	return m;
}

const char *
metrics_http_url(const struct metrics_http *m)
{
	return m->url;
}

bool
metrics_http_wanted(struct metrics_http *m)
{
	bool	 w;

	pthread_mutex_lock(&m->mu);
	w = m->want;
	m->want = false;
	pthread_mutex_unlock(&m->mu);
	return w;
}

void
metrics_http_publish(struct metrics_http *m, char *text, size_t len)
{
	pthread_mutex_lock(&m->mu);
	free(m->text);
	m->text = text;
	m->len = len;
	m->gen++;
	m->at = clock_mono();
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

void
metrics_http_close(struct metrics_http *m, bool linger)
{
	struct timespec	 ts;
	double		 now = clock_mono(), until;

	if (m == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	m->closing = true;
	m->final_served = false;
	pthread_cond_broadcast(&m->cv);
	if (linger && m->text != NULL && m->last_scrape > 0 &&
	    now - m->last_scrape < LINGER_MAX_S) {
		/* Two intervals, and 3 s at least: a loaded machine delays
		 * a scraper's turn. */
		until = m->last_scrape + 2 * (m->gap > 0 ? m->gap : 1) + 0.5;
		if (until < now + LINGER_MIN_S)
			until = now + LINGER_MIN_S;
		if (until > now + LINGER_MAX_S)
			until = now + LINGER_MAX_S;
		mh_timespec(until, &ts);
		while (!m->final_served && clock_mono() < until)
			pthread_cond_timedwait(&m->cv, &m->mu, &ts);
	}
	pthread_mutex_unlock(&m->mu);
	MHD_stop_daemon(m->d);		/* closes the listening socket */
	pthread_mutex_lock(&m->mu);
	m->stop_sweep = true;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	pthread_join(m->sweeper, NULL);
	if (m->resp != NULL)
		MHD_destroy_response(m->resp);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m->text);
	free(m);
}
