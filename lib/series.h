/*
 * series.h: a ring of the last SERIES_LEN values of one metric, for
 * sparklines, charts and the detectors: one value a second for nodes,
 * one per metrics frame for ranks.
 */
#ifndef HUNTER_SERIES_H
#define HUNTER_SERIES_H

#define SERIES_LEN 600
struct series {
	float		 v[SERIES_LEN];
	int		 head, len;
};

/* Append v, dropping the oldest value when the ring is full. */
static inline void
series_push(struct series *s, float v)
{
	s->v[(s->head + s->len) % SERIES_LEN] = v;
	if (s->len < SERIES_LEN)
		s->len++;
	else
		s->head = (s->head + 1) % SERIES_LEN;
}

/* Forget every value. */
static inline void
series_clear(struct series *s)
{
	s->head = s->len = 0;
}

/* i = 0 is the oldest kept value. */
static inline float
series_get(const struct series *s, int i)
{
	return s->v[(s->head + i) % SERIES_LEN];
}

#endif
