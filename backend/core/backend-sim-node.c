/*
 * backend-sim-node.c: one simulated node's whole sample for the
 * simulated backend (backend-sim.c): from its random walk (CPU, memory,
 * network, load) the rest of what a real agent reports follows, so the
 * console's panels, the detail view and `hunter bench console` have as
 * much to draw as on a real cluster: 16 CPUs, two interfaces, a disk,
 * the state and checkpoint file systems, and on every fourth node two
 * GPUs.  Power is unknown on odd nodes and the CPUs' throttling on all,
 * so dashes show too.
 */
#include <math.h>
#include <string.h>

#include "lib/rng.h"
#include "backend/core/backend-internal.h"

#define SIM_CORES	16

static void
sim_set(struct node_sample *x, enum node_metric m, double v)
{
	x->v[m] = v;
	x->valid |= UINT64_C(1) << m;
}

static double
sim_jitter(struct rng *r, double v, double share)
{
	return v * (1 + ((double)rng_float(r) * 2 - 1) * share);
}

static void
sim_lists(struct node_view *nv, const struct sim_walk *w, struct rng *r)
{
	struct node_lists *nl = &nv->lists;
	static const char *const ifaces[] = { "eth0", "ib0" };

	nl->ncores = SIM_CORES;
	for (int c = 0; c < SIM_CORES; c++) {
		double	 u = sim_jitter(r, w->cpu, 0.3);

		nl->cores[c].v[CM_UTIL] = u > 100 ? 100 : u;
		nl->cores[c].v[CM_FREQ] = 2400 + 600 * (u / 100);
		nl->cores[c].valid = UINT64_C(1) << CM_UTIL |
		    UINT64_C(1) << CM_FREQ;
	}
	nl->nifaces = 2;
	for (int i = 0; i < 2; i++) {
		struct iface_sample *is = &nl->ifaces[i];
		double	 share = i == 0 ? 0.1 : 0.9;

		memset(is, 0, sizeof *is);
		strcpy(is->name, ifaces[i]);
		is->v[IM_RX] = w->rx * share;
		is->v[IM_TX] = w->tx * share;
		is->v[IM_RX_PACKETS] = floor(is->v[IM_RX] / 1500);
		is->v[IM_TX_PACKETS] = floor(is->v[IM_TX] / 1500);
		is->valid = (UINT64_C(1) << IM_COUNT) - 1;
	}
	nl->ndisks = 1;
	memset(&nl->disks[0], 0, sizeof nl->disks[0]);
	strcpy(nl->disks[0].name, "nvme0n1");
	nl->disks[0].v[DM_READ] = floor(sim_jitter(r, 2e6, 0.5));
	nl->disks[0].v[DM_WRITE] = floor(sim_jitter(r, 8e6, 0.5));
	nl->disks[0].v[DM_UTIL] = floor(sim_jitter(r, 12, 0.5));
	nl->disks[0].valid = (UINT64_C(1) << DM_COUNT) - 1;
}

static void
sim_gpus(struct node_view *nv, int i, const struct sim_walk *w,
    struct rng *r)
{
	nv->ngpus = i % 4 == 0 ? 2 : 0;
	for (int g = 0; g < nv->ngpus; g++) {
		struct gpu_sample *gs = &nv->gpus[g];
		double	 u = w->busy ? sim_jitter(r, 90, 0.05) : 0;

		memset(gs, 0, sizeof *gs);
		gs->index = g;
		strcpy(gs->name, "Simulated H200");
		gs->v[GM_UTIL] = floor(u > 100 ? 100 : u);
		gs->v[GM_MEM_UTIL] = floor(u * 0.4);
		gs->v[GM_MEM_TOTAL] = 150e9;
		gs->v[GM_MEM_USED] = w->busy ? 80e9 : 1e9;
		gs->v[GM_MEM_FREE] = gs->v[GM_MEM_TOTAL] - gs->v[GM_MEM_USED];
		gs->v[GM_TEMP] = 35 + u * 0.3;
		gs->v[GM_MEM_TEMP] = 40 + u * 0.3;
		gs->v[GM_POWER] = 90 + u * 5;
		gs->v[GM_SM_CLOCK] = 1980;
		gs->v[GM_MEM_CLOCK] = 2619;
		gs->v[GM_PCIE_RX] = floor(sim_jitter(r, 2e9, 0.2) * u / 100);
		gs->v[GM_PCIE_TX] = floor(sim_jitter(r, 1e9, 0.2) * u / 100);
		gs->v[GM_NVLINK_RX] = floor(sim_jitter(r, 100e9, 0.2) * u / 100);
		gs->v[GM_NVLINK_TX] = gs->v[GM_NVLINK_RX];
		gs->v[GM_ENERGY] = floor(w->up * (90 + u * 5));
		gs->valid = (UINT64_C(1) << GM_COUNT) - 1;
		/* No XID yet: its code is unknown; no video at all. */
		gs->valid &= ~(UINT64_C(1) << GM_XID_LAST |
		    UINT64_C(1) << GM_ENC_UTIL | UINT64_C(1) << GM_DEC_UTIL);
		gs->nprocs = 0;
	}
}

void
sim_node_sample(struct node_view *nv, int i, const struct sim_walk *w,
    struct rng *r)
{
	struct node_sample *x = &nv->last;

	memset(x, 0, sizeof *x);
	x->time = w->t;
	sim_set(x, NM_CPU_UTIL, w->cpu);
	sim_set(x, NM_CPU_USER, w->cpu * 0.8);
	sim_set(x, NM_CPU_SYS, w->cpu * 0.2);
	sim_set(x, NM_CPU_IOWAIT, 0.5);
	sim_set(x, NM_LOAD1, w->load);
	sim_set(x, NM_MEM_USED, w->mem);
	sim_set(x, NM_MEM_TOTAL, 16e9);
	sim_set(x, NM_MEM_AVAIL, 16e9 - w->mem);
	sim_set(x, NM_MEM_CACHE, (16e9 - w->mem) * 0.6);
	sim_set(x, NM_SWAP_USED, 0);
	sim_set(x, NM_SWAP_TOTAL, 2e9);
	sim_set(x, NM_NET_RX, w->rx);
	sim_set(x, NM_NET_TX, w->tx);
	sim_set(x, NM_NET_ERRORS, 0);
	sim_set(x, NM_NET_DROPS, 0);
	sim_set(x, NM_TCP_RETRANS, floor(sim_jitter(r, w->busy ? 3 : 0.5, 0.9)));
	sim_set(x, NM_DISK_READ, 2e6);
	sim_set(x, NM_DISK_WRITE, 8e6);
	sim_set(x, NM_DISK_UTIL, 12);
	sim_set(x, NM_TEMP, 40 + w->cpu * 0.3);
	if (i % 2 == 0)
		sim_set(x, NM_POWER, 60 + w->cpu);
	sim_set(x, NM_CPUS, SIM_CORES);
	sim_set(x, NM_CPU_FREQ, 2400 + 6 * w->cpu);
	sim_set(x, NM_PSI_CPU, w->cpu > 80 ? (w->cpu - 80) / 2 : 0);
	sim_set(x, NM_PSI_CPU_FULL, 0);
	sim_set(x, NM_PSI_MEM, 0);
	sim_set(x, NM_PSI_MEM_FULL, 0);
	sim_set(x, NM_PSI_IO, 0.2);
	sim_set(x, NM_PSI_IO_FULL, 0.1);
	sim_set(x, NM_MAJOR_FAULTS, 0);
	for (int k = 0; k < 2; k++) {
		enum node_metric m0 = k ? NM_CKPT_FREE : NM_STATE_FREE;

		sim_set(x, m0, 400e9 - (i % 7) * 50e9);
		sim_set(x, m0 + 1, 1e12);
		sim_set(x, m0 + 2, 6e7);
		sim_set(x, m0 + 3, 6.5e7);
	}
	sim_set(x, NM_CKPT_BYTES, 2.2e6);
	sim_set(x, NM_AGENT_FDS, 23);
	sim_lists(nv, w, r);
	sim_gpus(nv, i, w, r);
	strcpy(nv->blas.lib, "OpenBLAS 0.3.21");
	strcpy(nv->blas.kernel, "SkylakeX");
}
