/*
 * metrics-http.c: the Prometheus endpoint's HTTP side (metrics-http.h):
 * libmicrohttpd on one internal thread, the newest rendering and the
 * handshake with the backend's loop that produces it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static enum MHD_Result
mh_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_len, void **con_cls)
{
	struct metrics_http *m = cls;
	struct MHD_Response *r;
	bool		 last = false;

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

	(void)c;
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
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    /* Prometheus holds one connection a server.  Past 32 from one
	     * address a connection is closed as it comes (at the overall
	     * limit it would wait in the backlog); an idle one goes after
	     * 5 s, between the scrapes of a 15 s interval. */
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)32,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)5,
	    MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (m->d == NULL) {
		snprintf(err, errlen, "metrics endpoint %s: libmicrohttpd "
		    "would not start", name);
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
	if (m->resp != NULL)
		MHD_destroy_response(m->resp);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m->text);
	free(m);
}
