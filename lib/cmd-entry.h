/*
 * cmd-entry.h: one subcommand of the hunter binary, as tmux's cmd_entry:
 * a name, the arguments that follow it, a line for --help and the
 * function that runs it (argv[0] is the name).  Each subcommand exports
 * one where its work lives; cmd/hunter.c lists them in its table, and
 * --help and the man page follow that table.
 */
#ifndef HUNTER_CMD_ENTRY_H
#define HUNTER_CMD_ENTRY_H

struct cmd_entry {
	const char	*name;
	const char	*usage;		/* arguments, after the name */
	const char	*summary;	/* one line for --help */
	int		(*exec)(int argc, char **argv);
};

#endif
