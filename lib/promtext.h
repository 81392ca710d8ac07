/*
 * promtext.h: the pieces of Prometheus' text exposition format 0.0.4: a
 * family's HELP and TYPE lines, written once before its first sample,
 * samples with their labels, and label values quoted as the format
 * wants.  What the series are is the caller's (backend/core/backend-prom.c).
 */
#ifndef HUNTER_PROMTEXT_H
#define HUNTER_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct prom_family {
	char		 name[128];
	const char	*type, *help;
	bool		 head;		/* HELP and TYPE written */
};

/* A family named prefix + name, a counter or a gauge; help is one line. */
void	prom_family(struct prom_family *, const char *prefix,
	    const char *name, bool counter, const char *help);
/* One sample; the family's head before its first. */
void	prom_sample(FILE *, struct prom_family *, const char *labels,
	    double v);
/* n labels into buf: keys[i]="vals[i]", the values quoted. */
void	prom_labels(char *buf, size_t len, int n, const char *const *keys,
	    const char *const *vals);

#endif
