/*
 * check.h: what cmd-check.c (`hunter check`) shares with check-blas.c,
 * its BLAS columns and measurements.
 */
#ifndef HUNTER_CHECK_H
#define HUNTER_CHECK_H

#include "backend/fleet/fleet.h"

/* Ask every node that said hello, one after the other, to measure its
 * sgemm; each answer replaces the "blas" of its hello.  A node below half
 * the best of its CPU model is asked again (twice at most) and keeps its
 * highest figure.  errs[i] gets node i's failure (xstrdup'd) when it has
 * none yet. */
void	check_blas_measure(struct fleet *, char **errs);
/* A node's cells: library, kernel (and who chose it), GFLOP/s. */
void	check_blas_cells(const struct fleet_node *, char *lib, char *kernel,
	    char *gflops, size_t len);
/* Warn of each node below half the best node of its CPU model, and of
 * each whose operator's OPENBLAS_CORETYPE runs under 90% of the kernel
 * cpuid allows there. */
void	check_blas_warn(const struct fleet *);

#endif
