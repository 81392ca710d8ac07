/*
 * spec-config.c: the user's ~/.config/hunter/config.yaml
 * ($XDG_CONFIG_HOME/hunter/config.yaml when that is set), which the front
 * ends read: `theme: NAME` (the console's), `metrics: {listen:
 * ADDR:PORT}` (the Prometheus endpoint of the console and hunter run) and
 * `scheduler: {policy, interval, restart}` (for a cluster whose file
 * does not say, the embedded one among them).
 * Problems are file:line:col, and leave their key unset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/inet.h"
#include "backend/spec/spec.h"
#include "backend/spec/spec-internal.h"
#include "backend/spec/yaml-doc.h"

static const char *const config_keys = "theme, metrics, scheduler";

/* metrics: {listen: ADDR:PORT} */
static void
config_metrics(const char *path, const struct ydoc_node *m,
    struct user_config *uc, struct spec_errors *errs)
{
	const struct ydoc_node *v;
	struct inet_addr a;
	char		 e[256];

	if (m->kind != YDOC_MAP) {
		spec_error_add(errs, path, m->line, m->col, "metrics wants a "
		    "mapping, e.g. metrics: {listen: 127.0.0.1:9400}");
		return;
	}
	for (size_t i = 0; i + 1 < m->n; i += 2) {
		if (strcmp(m->kids[i]->str, "listen") != 0)
			spec_error_add(errs, path, m->kids[i]->line,
			    m->kids[i]->col, "unknown key 'metrics.%.40s' "
			    "(known: listen)", m->kids[i]->str);
	}
	if ((v = ydoc_get(m, "listen", NULL)) == NULL)
		return;
	if (v->kind != YDOC_SCALAR || inet_parse(v->str, &a, e, sizeof e) != 0)
		spec_error_add(errs, path, v->line, v->col, "metrics.listen %s",
		    v->kind == YDOC_SCALAR ? e : "wants ADDR:PORT");
	else
		snprintf(uc->metrics_listen, sizeof uc->metrics_listen, "%s",
		    v->str);
}

void
spec_load_config(struct user_config *uc, struct spec_errors *errs)
{
	const char	*xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	const struct ydoc_node *v;
	struct ydoc_node *top;
	char		 buf[16384];
	size_t		 n;
	FILE		*f;
	bool		 ok;

	memset(uc, 0, sizeof *uc);
	uc->sched = (struct sched_config){ .interval_s = -1, .restart_s = -1 };
	if (xdg != NULL && *xdg != '\0')
		snprintf(uc->path, sizeof uc->path, "%s/hunter/config.yaml", xdg);
	else if (home != NULL)
		snprintf(uc->path, sizeof uc->path,
		    "%s/.config/hunter/config.yaml", home);
	else
		return;
	if ((f = fopen(uc->path, "r")) == NULL)
		return;
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	if ((top = ydoc_parse(uc->path, buf, n, errs, &ok)) == NULL)
		return;
	for (size_t i = 0; i + 1 < top->n; i += 2) {
		const char *k = top->kids[i]->str;

		if (strcmp(k, "theme") != 0 && strcmp(k, "metrics") != 0 &&
		    strcmp(k, "scheduler") != 0)
			spec_error_add(errs, uc->path, top->kids[i]->line,
			    top->kids[i]->col, "unknown key '%.40s' (known: %s)",
			    k, config_keys);
	}
	if ((v = ydoc_get(top, "theme", NULL)) != NULL && v->kind == YDOC_SCALAR)
		snprintf(uc->theme, sizeof uc->theme, "%s", v->str);
	if ((v = ydoc_get(top, "metrics", NULL)) != NULL)
		config_metrics(uc->path, v, uc, errs);
	if ((v = ydoc_get(top, "scheduler", NULL)) != NULL) {
		struct spec_walk w = { uc->path, errs, 0 };

		if (v->kind != YDOC_MAP)
			spec_walk_expect(&w, v, "scheduler", "a mapping");
		else
			spec_walk_map(&w, v, "scheduler", spec_sched_fields,
			    &uc->sched);
	}
	ydoc_free(top);
}

const char *
spec_config_metrics(const char *opt, struct user_config *uc, FILE *out)
{
	struct spec_errors errs = { 0 };

	if (opt != NULL)
		return opt;
	spec_load_config(uc, &errs);
	spec_errors_print(out, &errs);
	spec_errors_free(&errs);
	return uc->metrics_listen[0] != '\0' ? uc->metrics_listen : NULL;
}
