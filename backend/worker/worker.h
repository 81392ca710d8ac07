/*
 * worker.h: `hunter worker --fd N`, one training rank (see worker.c).
 */
#ifndef HUNTER_WORKER_H
#define HUNTER_WORKER_H

int	worker_main(int argc, char **argv);

#endif
