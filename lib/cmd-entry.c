/*
 * cmd-entry.c: the one parser of every subcommand's options, and the
 * --help it generates from the same table (see cmd-entry.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cmd-entry.h"
#include "lib/suggest.h"
#include "lib/xmalloc.h"

/* What every command takes besides its own table. */
static const struct cmd_option help_option = {
	"help", 'h', NULL, "this text"
};

/* "hunter run", or "hunter" for the console. */
static const char *
prefix(const struct cmd_entry *cmd, char *buf, size_t size)
{
	snprintf(buf, size, "hunter%s%s", cmd->name != NULL ? " " : "",
	    cmd->name != NULL ? cmd->name : "");
	return buf;
}

static int
count(const struct cmd_entry *cmd)
{
	int	n = 0;

	while (cmd->options != NULL && cmd->options[n].name != NULL)
		n++;
	return n;
}

/* The option of a long name (len bytes of it), its index, or -1. */
static int
find_long(const struct cmd_entry *cmd, const char *name, size_t len)
{
	for (int i = 0; i < count(cmd); i++) {
		if (strlen(cmd->options[i].name) == len &&
		    strncmp(cmd->options[i].name, name, len) == 0)
			return i;
	}
	return -1;
}

static int
find_letter(const struct cmd_entry *cmd, char c)
{
	for (int i = 0; i < count(cmd); i++) {
		if (cmd->options[i].letter == c)
			return i;
	}
	return -1;
}

static int
index_of(const struct cmd_args *a, const char *name)
{
	int	i = find_long(a->cmd, name, strlen(name));

	if (i < 0) {
		fprintf(stderr, "hunter: bug: option --%s is not in the table "
		    "of %s\n", name, a->cmd->name != NULL ? a->cmd->name :
		    "the console");
		abort();
	}
	return i;
}

bool
cmd_takes_option(const struct cmd_entry *cmd, const char *arg)
{
	if (strncmp(arg, "--", 2) == 0)
		return find_long(cmd, arg + 2, strcspn(arg + 2, "=")) >= 0;
	return arg[0] == '-' && arg[1] != '\0' && find_letter(cmd, arg[1]) >= 0;
}

static void
unknown(const struct cmd_entry *cmd, const char *arg, size_t len)
{
	const char	*names[64], *near = NULL;
	char		 word[64], p[64];
	int		 n = 0;

	if (strncmp(arg, "--", 2) == 0 && len - 2 < sizeof word) {
		for (int i = 0; i < count(cmd) && n + 2 < 64; i++)
			names[n++] = cmd->options[i].name;
		names[n++] = help_option.name;
		names[n] = NULL;
		memcpy(word, arg + 2, len - 2);
		word[len - 2] = '\0';
		near = suggest(word, names);
	}
	fprintf(stderr, "%s: unknown option '%.*s'", prefix(cmd, p, sizeof p),
	    (int)len, arg);
	if (near != NULL)
		fprintf(stderr, " (did you mean --%s?)", near);
	fprintf(stderr, "; %s --help lists the options\n", p);
}

/* Take option i, with the value that follows it in the same word (val)
 * or in the next one. */
static int
take(const struct cmd_entry *cmd, struct cmd_args *a, int i, const char *val,
    int argc, char **argv, int *at)
{
	const struct cmd_option *o = &cmd->options[i];
	char	 p[64];

	if (o->arg == NULL && val != NULL) {
		fprintf(stderr, "%s: --%s takes no value\n", prefix(cmd, p,
		    sizeof p), o->name);
		return -1;
	}
	if (o->arg != NULL && val == NULL) {
		if (*at + 1 >= argc) {
			fprintf(stderr, "%s: --%s needs %s\n", prefix(cmd, p,
			    sizeof p), o->name, o->arg);
			return -1;
		}
		val = argv[++*at];
	}
	a->v = xreallocarray(a->v, (size_t)a->nv + 1, sizeof *a->v);
	a->v[a->nv].opt = i;
	a->v[a->nv++].value = val != NULL ? val : "";
	return 0;
}

/* One word that starts with '-': 0, 1 for help, -1. */
static int
parse_option(const struct cmd_entry *cmd, struct cmd_args *a, int argc,
    char **argv, int *at)
{
	const char	*w = argv[*at], *eq;
	size_t		 len;
	int		 i;

	if (w[1] == '-') {
		len = (eq = strchr(w, '=')) != NULL ? (size_t)(eq - w) :
		    strlen(w);
		if ((i = find_long(cmd, w + 2, len - 2)) >= 0)
			return take(cmd, a, i, eq != NULL ? eq + 1 : NULL,
			    argc, argv, at);
		if (len == 6 && strncmp(w, "--help", 6) == 0)
			return 1;
		unknown(cmd, w, len);
		return -1;
	}
	for (const char *c = w + 1; *c != '\0'; c++) {
		if ((i = find_letter(cmd, *c)) < 0) {
			char	s[3] = { '-', *c, '\0' };

			if (*c == help_option.letter)
				return 1;
			unknown(cmd, s, 2);
			return -1;
		}
		if (cmd->options[i].arg != NULL)
			return take(cmd, a, i, c[1] != '\0' ? c + 1 : NULL,
			    argc, argv, at);
		if (take(cmd, a, i, NULL, argc, argv, at) != 0)
			return -1;
	}
	return 0;
}

int
cmd_parse(const struct cmd_entry *cmd, int argc, char **argv,
    struct cmd_args *a)
{
	bool	 ended = false;
	int	 rc;

	memset(a, 0, sizeof *a);
	a->cmd = cmd;
	a->argv = xcalloc((size_t)argc + 1, sizeof *a->argv);
	for (int at = 1; at < argc; at++) {
		const char *w = argv[at];

		if (!ended && strcmp(w, "--") == 0)
			ended = true;
		else if (!ended && w[0] == '-' && w[1] != '\0') {
			if ((rc = parse_option(cmd, a, argc, argv, &at)) != 0)
				return rc;
		} else
			a->argv[a->argc++] = argv[at];
	}
	if (a->argc < cmd->args_min ||
	    (cmd->args_max >= 0 && a->argc > cmd->args_max)) {
		cmd_usage(cmd);
		return -1;
	}
	return 0;
}

void
cmd_args_free(struct cmd_args *a)
{
	free(a->v);
	free(a->argv);
	a->v = NULL;
	a->argv = NULL;
	a->nv = a->argc = 0;
}

int
cmd_main(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct cmd_args	 a;
	int		 rc = cmd_parse(cmd, argc, argv, &a);

	if (rc == 1)
		cmd_print_help(cmd, stdout);
	rc = rc == 0 ? cmd->exec(&a) : rc == 1 ? 0 : 2;
	cmd_args_free(&a);
	return rc;
}

const char *
cmd_get_nth(const struct cmd_args *a, const char *name, int n)
{
	int	i = index_of(a, name);

	for (int k = 0; k < a->nv; k++) {
		if (a->v[k].opt == i && n-- == 0)
			return a->v[k].value;
	}
	return NULL;
}

const char *
cmd_get(const struct cmd_args *a, const char *name)
{
	int	i = index_of(a, name);

	for (int k = a->nv - 1; k >= 0; k--) {
		if (a->v[k].opt == i)
			return a->v[k].value;
	}
	return NULL;
}

bool
cmd_has(const struct cmd_args *a, const char *name)
{
	return cmd_get(a, name) != NULL;
}

int
cmd_get_long(const struct cmd_args *a, const char *name, long long lo,
    long long hi, long long *out)
{
	const char	*s = cmd_get(a, name);
	char		*end, p[64];
	long long	 v;

	if (s == NULL)
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0 || v < lo || v > hi) {
		fprintf(stderr, "%s: --%s wants a whole number from %lld to "
		    "%lld, got '%.64s'\n", prefix(a->cmd, p, sizeof p), name,
		    lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

int
cmd_get_real(const struct cmd_args *a, const char *name, double lo,
    double hi, double *out)
{
	const char	*s = cmd_get(a, name);
	char		*end, p[64];
	double		 v;

	if (s == NULL)
		return 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(v) || !(v > lo) || v > hi) {
		fprintf(stderr, "%s: --%s wants a number above %g and up to %g, "
		    "got '%.64s'\n", prefix(a->cmd, p, sizeof p), name, lo, hi,
		    s);
		return -1;
	}
	*out = v;
	return 0;
}

void
cmd_print_forms(const struct cmd_entry *cmd, FILE *f, const char *first,
    const char *rest)
{
	const char	*u = cmd->usage != NULL ? cmd->usage : "";
	char		 p[64];
	int		 form = 0;

	prefix(cmd, p, sizeof p);
	do {
		size_t n = strcspn(u, "\n");

		fprintf(f, "%s%s%s%s%.*s\n", form++ == 0 ? first : rest, p,
		    count(cmd) > 0 ? " [OPTION...]" : "", n > 0 ? " " : "",
		    (int)n, u);
		u += n;
	} while (*u++ != '\0');
}

void
cmd_print_usage(const struct cmd_entry *cmd, FILE *f)
{
	cmd_print_forms(cmd, f, "usage: ", "       ");
}

/* Help lines wrap at this column, under the text's first column. */
#define HELP_WIDTH	79
#define HELP_INDENT	31

static void
print_option(FILE *f, const struct cmd_option *o)
{
	const char	*h = o->help;
	char		 left[64];
	int		 col;

	snprintf(left, sizeof left, "%c%c%s--%s%s%s", o->letter ? '-' : ' ',
	    o->letter ? o->letter : ' ', o->letter ? ", " : "  ", o->name,
	    o->arg != NULL ? " " : "", o->arg != NULL ? o->arg : "");
	if (strlen(left) + 3 > HELP_INDENT)
		fprintf(f, "  %s\n%*s", left, HELP_INDENT, "");
	else
		fprintf(f, "  %-*s", HELP_INDENT - 2, left);
	col = HELP_INDENT;
	while (*h != '\0') {
		size_t	n = strcspn(h, " ");

		if (col > HELP_INDENT && col + 1 + (int)n > HELP_WIDTH) {
			fprintf(f, "\n%*s", HELP_INDENT, "");
			col = HELP_INDENT;
		}
		if (col > HELP_INDENT) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)n, h);
		col += (int)n;
		h += n;
		h += strspn(h, " ");
	}
	fputc('\n', f);
}

void
cmd_print_options(const struct cmd_entry *cmd, FILE *f)
{
	for (int i = 0; i < count(cmd); i++)
		print_option(f, &cmd->options[i]);
	print_option(f, &help_option);
}

void
cmd_print_help(const struct cmd_entry *cmd, FILE *f)
{
	cmd_print_usage(cmd, f);
	fprintf(f, "\n%s\n\noptions:\n", cmd->summary);
	cmd_print_options(cmd, f);
	if (cmd->more_help != NULL)
		cmd->more_help(f);
}

int
cmd_usage(const struct cmd_entry *cmd)
{
	char	p[64];

	cmd_print_usage(cmd, stderr);
	fprintf(stderr, "(%s --help lists the options)\n", prefix(cmd, p,
	    sizeof p));
	return 2;
}
