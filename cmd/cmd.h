/*
 * cmd.h: the subcommands of the hunter binary.  Each exports one const
 * struct cmd_entry (lib/cmd-entry.h): those of the front end live in
 * cmd/cmd-NAME.c, the agent's and the worker's with the agent and the
 * worker.  hunter.c lists them in its table, and --help and the man page
 * follow that table.
 */
#ifndef HUNTER_CMD_H
#define HUNTER_CMD_H

#include <stdbool.h>

#include "lib/cmd-entry.h"

extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_validate_entry;
extern const struct cmd_entry cmd_check_entry;
extern const struct cmd_entry cmd_bench_entry;
extern const struct cmd_entry cmd_ctl_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_sample_entry;
extern const struct cmd_entry cmd_agents_entry;

#endif
