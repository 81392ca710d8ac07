/*
 * spec-slurm.h: the cluster of a Slurm allocation (hunter(1), RUNNING
 * UNDER SLURM).  The nodes are what `scontrol show hostnames` makes of
 * SLURM_JOB_NODELIST; each node's address, CPUs and GPUs come from
 * `scontrol -o show node`, its rack from the leaf switch of `scontrol
 * show topology`, and the CPUs the allocation holds on it from
 * SLURM_JOB_CPUS_PER_NODE.  Reading what scontrol printed is pure
 * (spec-slurm.c, unit-tested on captured output); running it is
 * spec-slurm-run.c.
 */
#ifndef HUNTER_SPEC_SLURM_H
#define HUNTER_SPEC_SLURM_H

#include <stddef.h>

#include "backend/spec/spec.h"

/* One node as one line of `scontrol -o show node` describes it. */
struct slurm_node {
	char	name[SPEC_NAME_MAX];	/* NodeName */
	char	addr[256];		/* NodeAddr; "" when not given */
	char	host[256];		/* NodeHostName; "" when not given */
	int	cpus;			/* CPUEfctv, else CPUTot; -1 unknown */
	int	gpus;			/* the gpu count of Gres */
};

/* What the allocation is, as the commands and the environment said it. */
struct slurm_alloc {
	const char	*job;		/* SLURM_JOB_ID */
	const char	*nodelist;	/* SLURM_JOB_NODELIST, for messages */
	const char	*hostnames;	/* scontrol show hostnames NODELIST */
	const char	*nodes;		/* scontrol -o show node NODELIST */
	const char	*topology;	/* scontrol show topology; NULL: none */
	const char	*cpus_per_node;	/* SLURM_JOB_CPUS_PER_NODE; NULL */
	int		 spares;	/* the last N nodes; -1 = 0 */
};

/* Expand a Slurm host list ("n[1-3,7],gpu[01-02]-ib") into names, in
 * order.  0 with *names (free with spec_slurm_names_free), or -1 with err. */
int	spec_slurm_expand(const char *list, char ***names, int *n, char *err,
	    size_t errlen);
void	spec_slurm_names_free(char **names, int n);
/* One line of `scontrol -o show node`.  0, or -1 when it names no node. */
int	spec_slurm_parse_node(const char *line, struct slurm_node *);
/* The GPUs a Gres value counts: "gpu:2", "gpu:a100:4(S:0-1),nic:1". */
int	spec_slurm_gres_gpus(const char *gres);
/* SLURM_JOB_CPUS_PER_NODE ("2(x3),1") into out[n]: 0 when it describes
 * exactly n nodes, else -1. */
int	spec_slurm_cpus_per_node(const char *s, int *out, int n);
/* The cluster of an allocation: nodes named as Slurm names them, reached
 * through srun, spares last.  0, or -1 with err naming the node. */
int	spec_slurm_build(const struct slurm_alloc *, struct cluster_spec *,
	    char *err, size_t errlen);

/* Ask Slurm (scontrol, the environment) for the allocation this process
 * runs in.  0, -1 with err, or SPEC_CLUSTER_USAGE outside one. */
int	spec_slurm_open(int spares, struct cluster_spec *, char *err,
	    size_t errlen);

#endif
