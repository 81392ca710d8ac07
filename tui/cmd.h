/*
 * cmd.h: the subcommands of the hunter binary.  Each lives in its own
 * tui/cmd-NAME.c and exports one const struct cmd_entry; hunter.c lists
 * them in its table, and --help and the man page follow that table.
 */
#ifndef HUNTER_CMD_H
#define HUNTER_CMD_H

#include <stdbool.h>

struct cmd_entry {
	const char	*name;
	const char	*usage;		/* arguments, after the name */
	const char	*summary;	/* one line for --help */
	int		(*exec)(int argc, char **argv);	/* argv[0] is the name */
};

extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_validate_entry;
extern const struct cmd_entry cmd_check_entry;
extern const struct cmd_entry cmd_bench_entry;
extern const struct cmd_entry cmd_agent_entry;
extern const struct cmd_entry cmd_worker_entry;
extern const struct cmd_entry cmd_ctl_entry;

/* The console (console-open.c): `hunter [options] [JOB.yaml...]`, and
 * whether an argument is one of its options. */
int	console_main(int argc, char **argv);
bool	console_option(const char *arg);

/* `hunter bench console` (bench-console.c). */
int	bench_console(void);

/* Print "usage: hunter NAME USAGE" to stderr and return 2. */
int	cmd_usage(const struct cmd_entry *);

struct cluster_spec;
/* The cluster of file, or the embedded default when file is NULL; its
 * errors go to stderr.  0 or -1. */
int	cmd_load_cluster(const char *file, struct cluster_spec *);

#endif
