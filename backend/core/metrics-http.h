/*
 * metrics-http.h: the Prometheus endpoint's server (libmicrohttpd, on a
 * thread of its own).  It never reads the state model: the backend's loop
 * renders the exposition text under its lock when a scrape asks for one
 * (backend-prom.c) and publishes it here, and every scrape is answered
 * from the newest text published.  A slow or stuck scraper costs the
 * loop nothing; a storm of them costs it one rendering per 100 ms.
 */
#ifndef HUNTER_METRICS_HTTP_H
#define HUNTER_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct metrics_http;

/*
 * Listen on addr ("ADDR:PORT", lib/inet.h) and serve GET /metrics.  A
 * byte written to wake_fd asks the loop for a fresh rendering.  NULL
 * with err (the address, and why) when the address is bad or taken.
 */
struct metrics_http *metrics_http_open(const char *addr, int wake_fd,
		    char *err, size_t errlen);
/* "http://127.0.0.1:9400/metrics", with the port bound. */
const char	*metrics_http_url(const struct metrics_http *);
/* Whether a scrape waits for a fresh rendering; the question clears. */
bool		 metrics_http_wanted(struct metrics_http *);
/* The newest rendering (the callee takes text, malloc'd). */
void		 metrics_http_publish(struct metrics_http *, char *text,
		    size_t len);
/*
 * Stop serving.  With linger, a scraper seen lately first gets one scrape
 * of the last rendering, sent whole (so a job's final values reach it),
 * waiting two of its intervals, 3 s at least and 10 s at most.
 */
void		 metrics_http_close(struct metrics_http *, bool linger);

#endif
