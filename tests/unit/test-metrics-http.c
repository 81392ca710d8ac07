/*
 * test-metrics-http.c: the Prometheus endpoint's HTTP side
 * (backend/core/metrics-http.c) over a real socket: a scrape gets the
 * newest rendering, a scraper seen lately gets the final one whole
 * before the endpoint closes, even when it reads slowly, and slow
 * clients from many addresses neither starve the scrapes nor keep their
 * connections (issue 27).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "backend/core/metrics-http.h"

#define BIG	(16u << 20)	/* more than a socket's buffers hold */

struct scrape {
	int	 port;
	int	 delay_ms;	/* before the request */
	int	 read_ms;	/* between the request and the first read */
	int	 timeout_s;	/* a read that waits longer fails; 0: none */
	long	 content_length;	/* -1: none in the header */
	long	 body;		/* bytes after the header */
	char	 first[32];	/* the body's start */
};

/* One GET /metrics on its own connection, read to the end. */
static void *
scrape_run(void *arg)
{
	struct scrape	*s = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: t\r\n"
	    "Connection: close\r\n\r\n";
	size_t		 cap = 1 << 16, len = 0;
	char		*buf = malloc(cap), *eoh, *cl;
	int		 fd, small = 4096;
	ssize_t		 n;

	usleep((useconds_t)s->delay_ms * 1000);
	sa.sin_port = htons((uint16_t)s->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	/* A small window: the server cannot hand the body off at once. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	if (s->timeout_s > 0) {		/* connect, write and each read */
		struct timeval tv = { .tv_sec = s->timeout_s };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	}
	if (buf == NULL || fd < 0)
		abort();
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1)) {
		if (s->timeout_s == 0)
			abort();
		s->content_length = s->body = -1;
		close(fd);
		free(buf);
		return NULL;
	}
	usleep((useconds_t)s->read_ms * 1000);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 4096 && (buf = realloc(buf, cap *= 2)) == NULL)
			abort();
	}
	close(fd);
	buf[len] = '\0';
	s->content_length = s->body = -1;
	if ((eoh = strstr(buf, "\r\n\r\n")) != NULL) {
		s->body = (long)(len - (size_t)(eoh + 4 - buf));
		snprintf(s->first, sizeof s->first, "%.*s",
		    (int)(sizeof s->first - 1), eoh + 4);
		*eoh = '\0';
		if ((cl = strstr(buf, "\r\nContent-Length:")) != NULL)
			s->content_length = strtol(cl + 17, NULL, 10);
	}
	free(buf);
	return NULL;
}

static struct metrics_http *
open_endpoint(int wake[2], int *port)
{
	struct metrics_http *m;
	char		 err[256];
	const char	*url;

	assert_int_equal(pipe(wake), 0);
	m = metrics_http_open("127.0.0.1:0", wake[1], err, sizeof err);
	assert_non_null(m);
	url = metrics_http_url(m);
	assert_non_null(strstr(url, "http://127.0.0.1:"));
	*port = atoi(url + strlen("http://127.0.0.1:"));
	assert_true(*port > 0);
	return m;
}

static char *
rendering(char c, size_t len)
{
	char	*t = malloc(len);

	assert_non_null(t);
	memset(t, c, len);
	t[len - 1] = '\n';
	return t;
}

/* A fresh rendering goes out as is. */
static void
t_scrape(void **state)
{
	int		 wake[2], port;
	struct metrics_http *m = open_endpoint(wake, &port);
	struct scrape	 s = { 0 };

	(void)state;
	metrics_http_publish(m, rendering('a', 100), 100);
	s.port = port;
	scrape_run(&s);
	assert_int_equal(s.content_length, 100);
	assert_int_equal(s.body, 100);
	assert_memory_equal(s.first, "aaaa", 4);
	metrics_http_close(m, false);
	close(wake[0]);
	close(wake[1]);
}

/*
 * The final rendering, 16 MiB to a scraper that reads only after 1 s
 * through a 4 KiB window, arrives whole: the endpoint stays open until
 * it was sent, not only queued.
 */
static void
t_final_whole(void **state)
{
	int		 wake[2], port;
	struct metrics_http *m = open_endpoint(wake, &port);
	struct scrape	 s = { 0 };
	pthread_t	 t;

	(void)state;
	metrics_http_publish(m, rendering('a', 100), 100);
	s.port = port;
	scrape_run(&s);			/* a scraper seen lately */
	assert_int_equal(s.body, 100);

	metrics_http_publish(m, rendering('z', BIG), BIG);
	s = (struct scrape){ .port = port, .delay_ms = 300, .read_ms = 1000 };
	assert_int_equal(pthread_create(&t, NULL, scrape_run, &s), 0);
	metrics_http_close(m, true);	/* the scrape comes while it waits */
	pthread_join(t, NULL);
	assert_int_equal(s.content_length, (long)BIG);
	assert_int_equal(s.body, (long)BIG);
	assert_memory_equal(s.first, "zzzz", 4);
	close(wake[0]);
	close(wake[1]);
}

#define SLOW_CLIENTS	256
#define SLOW_ADDRS	8	/* 127.0.0.2 .. 127.0.0.9 */

struct slow {
	int		 port, fd[SLOW_CLIENTS];
	volatile int	 stop;
};

/* Slow clients: each connects from 127.0.0.(2 + i % 8), starts a
 * request and sends one more header line a second, never ending it. */
static void *
slow_run(void *arg)
{
	struct slow	*sl = arg;
	static const char start[] = "GET /metrics HTTP/1.1\r\nHost: t\r\n";
	static const char more[] = "X-Slow: 1\r\n";

	for (int i = 0; i < SLOW_CLIENTS; i++) {
		struct sockaddr_in sa = { .sin_family = AF_INET };

		struct timeval tv = { .tv_sec = 2 };

		sl->fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_true(sl->fd[i] >= 0);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 2 + i % SLOW_ADDRS);
		assert_int_equal(bind(sl->fd[i], (struct sockaddr *)&sa,
		    sizeof sa), 0);
		sa.sin_port = htons((uint16_t)sl->port);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		/* One at a time, as the server takes them (all at once
		 * would overflow the backlog and hold fewer). */
		setsockopt(sl->fd[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(sl->fd[i], (struct sockaddr *)&sa, sizeof sa) == 0)
			send(sl->fd[i], start, sizeof start - 1, MSG_NOSIGNAL);
		fcntl(sl->fd[i], F_SETFL, O_NONBLOCK);
	}
	while (!sl->stop) {
		usleep(1000000);
		for (int i = 0; i < SLOW_CLIENTS; i++)
			send(sl->fd[i], more, sizeof more - 1, MSG_NOSIGNAL);
	}
	return NULL;
}

/* Whether the server has closed fd: EOF or a reset, read at once. */
static int
closed_by_server(int fd)
{
	char	 buf[4096];
	ssize_t	 n;

	while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
		;
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * 256 clients from 127.0.0.2-9 that send a header line a second (each
 * line used to restart libmicrohttpd's 5 s timeout, and they held every
 * slot there was) do not keep three scrapes from 127.0.0.1 out: each is
 * answered within 10 s; and 7 s on, the server has closed every one of
 * the slow clients, none of which ever finished a request.
 */
static void
t_slow_clients(void **state)
{
	int		 wake[2], port, open_after = 0;
	struct metrics_http *m = open_endpoint(wake, &port);
	struct slow	 sl = { 0 };
	struct scrape	 s;
	pthread_t	 t;
	double		 t0 = now_s(), took;

	(void)state;
	metrics_http_publish(m, rendering('a', 100), 100);
	sl.port = port;
	assert_int_equal(pthread_create(&t, NULL, slow_run, &sl), 0);
	usleep(1500000);		/* they are in, and trickling */
	for (int k = 0; k < 3; k++) {
		double	 a = now_s();

		s = (struct scrape){ .port = port, .timeout_s = 10 };
		scrape_run(&s);
		took = now_s() - a;
		print_message("scrape %d: %ld bytes in %.1f s\n", k, s.body,
		    took);
		assert_int_equal(s.body, 100);
		assert_true(took < 10.0);
	}
	while (now_s() - t0 < 7.5)
		usleep(100000);
	for (int i = 0; i < SLOW_CLIENTS; i++)
		open_after += !closed_by_server(sl.fd[i]);
	sl.stop = 1;
	pthread_join(t, NULL);
	print_message("slow clients still open after 7.5 s: %d of %d\n",
	    open_after, SLOW_CLIENTS);
	assert_int_equal(open_after, 0);
	for (int i = 0; i < SLOW_CLIENTS; i++)
		close(sl.fd[i]);
	metrics_http_close(m, false);
	close(wake[0]);
	close(wake[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_scrape),
		cmocka_unit_test(t_final_whole),
		cmocka_unit_test(t_slow_clients),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
