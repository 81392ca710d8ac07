/*
 * nvml-events.c: what NVML says about a GPU besides its gauges: XID
 * errors, from an event set every device is registered in (waited on for
 * 0 ms at each sample, so the agent's loop never blocks on it), and the
 * compute processes with the memory each holds.  A driver without the
 * event API leaves GM_XID unknown; one without the process calls leaves
 * the list unknown (nprocs -1).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib/nvml-internal.h"

/* Processes asked for at once; more are asked for again, sized. */
#define NV_PROCS_ASK	64

void
nvml_events_open(void)
{
	unsigned int	 n = nv.ndev < NV_DEVICES ? nv.ndev : NV_DEVICES;

	if (nv.events_none || n <= nv.events_ndev)
		return;
	if (nv.set_create == NULL || nv.register_events == NULL ||
	    nv.wait == NULL) {
		nv.events_none = true;
		return;
	}
	if (nv.events == NULL && nv.set_create(&nv.events) != 0) {
		nv.events = NULL;
		nv.events_none = true;
		return;
	}
	for (unsigned int i = nv.events_ndev; i < n; i++) {
		if (nv.handle(i, &nv.dev[i].handle) != 0)
			continue;
		nv.dev[i].xid_known = nv.register_events(nv.dev[i].handle,
		    NV_EVENT_XID, nv.events) == 0;
	}
	nv.events_ndev = n;
}

int
nvml_xids(struct nvml_xid *out, int max)
{
	struct nv_event	 ev;
	int		 n = 0;

	if (!nvml_load() || nv.count(&nv.ndev) != 0)
		return 0;
	nvml_events_open();
	if (nv.events == NULL)
		return 0;
	/* Every event waiting now; a bound, should a driver repeat one. */
	for (int k = 0; k < 4096; k++) {
		memset(&ev, 0, sizeof ev);
		if (nv.wait(nv.events, &ev, 0) != 0)
			break;		/* NVML_ERROR_TIMEOUT: no more */
		if (!(ev.type & NV_EVENT_XID))
			continue;
		for (unsigned int i = 0; i < NV_DEVICES && i < nv.ndev; i++) {
			if (!nv.dev[i].xid_known || nv.dev[i].handle != ev.device)
				continue;
			nv.dev[i].xids++;
			nv.dev[i].xid_last = ev.data;
			if (n < max)
				out[n++] = (struct nvml_xid){ (int)i, ev.data };
			break;
		}
	}
	return n;
}

/* The compute processes of d, the first GPU_PROCS_MAX by the memory
 * they hold. */
void
nvml_processes(nv_device d, struct gpu_sample *gs)
{
	struct nv_process ask[NV_PROCS_ASK], *p = ask;
	unsigned int	 n = NV_PROCS_ASK;
	nv_ret		 r;

	gs->nprocs = -1;
	if (nv.procs == NULL)
		return;
	memset(ask, 0, sizeof ask);
	if ((r = nv.procs(d, &n, p)) == NV_ERROR_INSUFFICIENT && n > 0) {
		n += 8;		/* some may start in between */
		p = calloc(n, sizeof *p);
		if (p == NULL)
			return;
		r = nv.procs(d, &n, p);
	}
	if (r == 0) {
		gs->nprocs = 0;
		for (unsigned int i = 0; i < n; i++) {
			struct gpu_proc gp = { p[i].pid, p[i].used == NV_VALUE_NA ?
			    -1 : (double)p[i].used, 0 };
			int	 at = gs->nprocs;

			/* Insertion by memory, the largest first. */
			while (at > 0 && gs->procs[at - 1].mem < gp.mem) {
				if (at < GPU_PROCS_MAX)
					gs->procs[at] = gs->procs[at - 1];
				at--;
			}
			if (at < GPU_PROCS_MAX)
				gs->procs[at] = gp;
			if (gs->nprocs < GPU_PROCS_MAX)
				gs->nprocs++;
		}
	}
	if (p != ask)
		free(p);
}
