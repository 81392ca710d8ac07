/*
 * spec-slurm-run.c: asking Slurm about the allocation this process runs
 * in (spec-slurm.h): its job id and node list from the environment, the
 * node names, their addresses, CPUs and GPUs, and the topology from
 * scontrol, which spec-slurm.c reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errf.h"
#include "lib/run.h"
#include "backend/spec/spec-slurm.h"

/* scontrol asks slurmctld, which answers in well under a second; a busy
 * controller may take a few. */
#define SLURM_SCONTROL_TIMEOUT_MS	20000

/* scontrol ARGS... into *out.  0, or -1 with err. */
static int
slurm_scontrol(const char *const argv[], char **out, char *err, size_t errlen)
{
	char	 why[512];
	int	 rc = run_capture(argv, out, SLURM_SCONTROL_TIMEOUT_MS, why,
	    sizeof why);

	if (rc == 0)
		return 0;
	errf(err, errlen, "`scontrol %s %s %s` failed: %s", argv[1],
	    argv[2], argv[3] != NULL ? argv[3] : "", why[0] != '\0' ? why :
	    "no message");
	free(*out);
	*out = NULL;
	return -1;
}

int
spec_slurm_open(int spares, struct cluster_spec *c, char *err, size_t errlen)
{
	const char	*job = getenv("SLURM_JOB_ID");
	const char	*list = getenv("SLURM_JOB_NODELIST");
	const char	*hn[] = { "scontrol", "show", "hostnames", NULL, NULL };
	const char	*nd[] = { "scontrol", "-o", "show", "node", NULL, NULL };
	const char	*tp[] = { "scontrol", "show", "topology", NULL };
	char		*hosts = NULL, *nodes = NULL, *topo = NULL, why[512];
	int		 rc = -1;

	memset(c, 0, sizeof *c);
	if (job == NULL || job[0] == '\0') {
		errf(err, errlen, "not inside a Slurm allocation "
		    "(SLURM_JOB_ID is not set): run hunter under salloc or "
		    "sbatch, or give a cluster file");
		return SPEC_CLUSTER_USAGE;
	}
	if (list == NULL)
		list = getenv("SLURM_NODELIST");
	if (list == NULL || list[0] == '\0') {
		errf(err, errlen, "Slurm job %s: SLURM_JOB_NODELIST is not "
		    "set", job);
		return -1;
	}
	hn[3] = list;
	nd[4] = list;
	if (slurm_scontrol(hn, &hosts, err, errlen) != 0 ||
	    slurm_scontrol(nd, &nodes, err, errlen) != 0)
		goto out;
	/* Without a topology plugin scontrol says so on stderr: one rack. */
	if (run_capture(tp, &topo, SLURM_SCONTROL_TIMEOUT_MS, why,
	    sizeof why) != 0) {
		free(topo);
		topo = NULL;
	}
	rc = spec_slurm_build(&(struct slurm_alloc){ .job = job,
	    .nodelist = list, .hostnames = hosts, .nodes = nodes,
	    .topology = topo, .spares = spares,
	    .cpus_per_node = getenv("SLURM_JOB_CPUS_PER_NODE") }, c, err,
	    errlen);
out:
	free(hosts);
	free(nodes);
	free(topo);
	return rc;
}
