/*
 * promtext.c: Prometheus' text exposition format (promtext.h): escapes
 * (a label value's backslash, quote and newline; a help text's backslash
 * and newline), the head of a family and its samples.
 */
#include <stdio.h>
#include <string.h>

#include "lib/promtext.h"

void
prom_family(struct prom_family *fm, const char *prefix, const char *name,
    bool counter, const char *help)
{
	snprintf(fm->name, sizeof fm->name, "%s%s", prefix, name);
	fm->type = counter ? "counter" : "gauge";
	fm->help = help;
	fm->head = false;
}

static void
prom_quote(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void
prom_head(FILE *f, struct prom_family *fm)
{
	if (fm->head)
		return;
	fm->head = true;
	fprintf(f, "# HELP %s ", fm->name);
	for (const char *s = fm->help; *s != '\0'; s++) {
		if (*s == '\\' || *s == '\n')
			fputs(*s == '\\' ? "\\\\" : "\\n", f);
		else
			fputc(*s, f);
	}
	fprintf(f, "\n# TYPE %s %s\n", fm->name, fm->type);
}

void
prom_sample(FILE *f, struct prom_family *fm, const char *labels, double v)
{
	prom_head(f, fm);
	fprintf(f, "%s{%s} %.15g\n", fm->name, labels, v);
}

void
prom_labels(char *buf, size_t len, int n, const char *const *keys,
    const char *const *vals)
{
	FILE	*f = fmemopen(buf, len, "w");

	if (f == NULL) {
		buf[0] = '\0';
		return;
	}
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "", keys[i]);
		prom_quote(f, vals[i]);
		fputc('"', f);
	}
	fclose(f);
}
