/*
 * worker.h: `hunter worker --fd N`, one training rank (see worker.c).
 */
#ifndef HUNTER_WORKER_H
#define HUNTER_WORKER_H

#include "lib/cmd-entry.h"

/* hunter worker's entry, parsed by cmd_main (for tests that fork one). */
int	worker_main(int argc, char **argv);
extern const struct cmd_entry cmd_worker_entry;

#endif
