/*
 * test-metrics-http.c: the Prometheus endpoint's HTTP side
 * (backend/core/metrics-http.c) over a real socket: a scrape gets the
 * newest rendering, and a scraper seen lately gets the final one whole
 * before the endpoint closes, even when it reads slowly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
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
	if (buf == NULL || fd < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1))
		abort();
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_scrape),
		cmocka_unit_test(t_final_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
