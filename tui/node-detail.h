/*
 * node-detail.h: what the detail view's files share (node-detail.c: the
 * host; node-procs.c: the GPUs and the processes; node-flow.c: the
 * layout): the view being drawn,
 * whose rows may run past the window (top is the first row shown), and
 * the flow that lays fields out into lines.
 */
#ifndef HUNTER_NODE_DETAIL_H
#define HUNTER_NODE_DETAIL_H

#include "tui/console.h"

#define DV_REFS	64	/* sparklines a view draws at most */
/* The host's rows are laid out from here, then placed (dv_map): its
 * first host_k rows under the head, the rest after the processes when
 * the screen cannot hold it all. */
#define DV_HOST	100000

struct dview {
	struct console	*c;
	struct node_view *nv;
	WINDOW		*w;
	int		 top, rows, cols;
	int		 host_y;	/* where the host's rows begin */
	int		 host_k;	/* how many stay there */
	int		 rest_y;	/* where the others go */
	bool		 more;		/* taller than the screen */
	int		 spark_w;	/* columns of a field's sparkline */
	int		 sel_row;	/* the selected process's row; -1 */
	int		 nprocs;	/* rows of the process list */
	struct hist_ref	 refs[DV_REFS];	/* what the sparklines read */
	int		 nrefs;
};

/* Fields "label value [sparkline]" placed left to right from x0, onto
 * the next line when one does not fit in width. */
struct flow {
	struct dview	*d;
	int		 x0, width, x, y;
	int		 spw;
};

/* The row of the view where row y goes (y past DV_HOST: the host's). */
int	dv_map(const struct dview *, int y);
bool	dv_visible(const struct dview *, int y);
/* Text at row y of the view (drawn only when shown); its columns. */
int	dv_text(struct dview *, int y, int x, int maxw, enum elem,
	    const char *);
/* Compact numbers: "80.0G" (binary), "1.2M" (decimal). */
const char *dv_bytes(char *, size_t, bool valid, double);
const char *dv_si(char *, size_t, bool valid, double);

void	flow_start(struct flow *, struct dview *, int x0, int width, int y);
void	flow_field(struct flow *, const char *label, const char *value,
	    enum elem, const struct hist_ref *spark);
void	flow_break(struct flow *);
int	flow_end(struct flow *);

/* node-procs.c: the GPUs from row y; the processes; the scroll that
 * keeps the selected one in view, given the view's rows. */
int	dv_gpus(struct dview *, int y);
int	dv_procs(struct dview *, int y);
void	dv_scroll(struct dview *, int rows);

#endif
