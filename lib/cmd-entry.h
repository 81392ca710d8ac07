/*
 * cmd-entry.h: one subcommand of the hunter binary, as tmux's cmd_entry:
 * a name, its options as data, the arguments that follow them, a line for
 * --help and the function that runs it.  Each subcommand exports one
 * where its work lives; cmd/hunter.c lists them in its table.
 *
 * One parser (cmd-entry.c) serves every command: it takes long options
 * (--name, --name=VALUE, --name VALUE), their short letters (-j, -c FILE,
 * -cFILE, -jr), "--" to end the options, and arguments anywhere between
 * them; it answers -h and --help of every command with the text it
 * generates from the same table, and refuses an unknown option, a
 * missing value or the wrong number of arguments with a message naming
 * it (exit 2).  The command reads what was given by long name.
 */
#ifndef HUNTER_CMD_ENTRY_H
#define HUNTER_CMD_ENTRY_H

#include <stdbool.h>
#include <stdio.h>

/* One option.  A table of them ends with a row whose name is NULL. */
struct cmd_option {
	const char	*name;		/* the long name, without "--" */
	char		 letter;	/* its short letter, or 0 */
	const char	*arg;		/* the value's name; NULL: a flag */
	const char	*help;		/* one line for --help */
};

/* What the parser found: the options in the order given (a flag's value
 * is ""), then the arguments. */
struct cmd_args {
	const struct cmd_entry	*cmd;
	struct cmd_value {
		int		 opt;		/* index into cmd->options */
		const char	*value;
	}			*v;
	int			 nv;
	int			 argc;		/* the arguments, options removed */
	char			**argv;
};

struct cmd_entry {
	const char	*name;
	const char	*usage;		/* the arguments after the options;
					 * "\n" starts another form */
	const char	*summary;	/* one line for hunter --help */
	const struct cmd_option *options;	/* NULL: none but --help */
	int		 args_min, args_max;	/* arguments; max -1: any */
	int		(*exec)(const struct cmd_args *);
	void		(*more_help)(FILE *);	/* after the options; or NULL */
};

/* Parse argv (argv[0] is the command's name), answer --help, and run the
 * command: its exit status, 0 after --help, 2 after a usage error. */
int	cmd_main(const struct cmd_entry *, int argc, char **argv);
/* Parse argv into args: 0; 1 when --help was asked for; -1 after a usage
 * error, said on stderr.  Free args with cmd_args_free. */
int	cmd_parse(const struct cmd_entry *, int argc, char **argv,
	    struct cmd_args *);
void	cmd_args_free(struct cmd_args *);

/* Whether the option named (its long name) was given; its last value or
 * NULL; its i-th value (0 first) or NULL, for an option given more than
 * once.  A name not in the command's table is a bug: they abort. */
bool		 cmd_has(const struct cmd_args *, const char *name);
const char	*cmd_get(const struct cmd_args *, const char *name);
const char	*cmd_get_nth(const struct cmd_args *, const char *name, int i);
/* The option's value as a whole number in [lo, hi] into *out (untouched
 * when it was not given): 0, or -1 after saying what it wants on stderr. */
int	cmd_get_long(const struct cmd_args *, const char *name, long long lo,
	    long long hi, long long *out);
/* The same for a real number above lo (exclusive) and up to hi. */
int	cmd_get_real(const struct cmd_args *, const char *name, double lo,
	    double hi, double *out);

/* Whether arg ("--name" or "--name=...", or "-x") is an option of cmd. */
bool	cmd_takes_option(const struct cmd_entry *, const char *arg);
/* "hunter NAME [OPTION...] USAGE" for each form of the usage, to f, the
 * first after first, the others after rest. */
void	cmd_print_forms(const struct cmd_entry *, FILE *f, const char *first,
	    const char *rest);
/* The same after "usage: ". */
void	cmd_print_usage(const struct cmd_entry *, FILE *f);
/* Each option with its value and its line of help, --help last. */
void	cmd_print_options(const struct cmd_entry *, FILE *f);
/* The usage, the summary, the options, and the command's more_help. */
void	cmd_print_help(const struct cmd_entry *, FILE *f);
/* Print the usage and where the options are listed to stderr; 2. */
int	cmd_usage(const struct cmd_entry *);

#endif
