/*
 * backend-sim.c: the simulated backend (backend-sim.h).  It fills the
 * same struct backend the real one uses, so every accessor works and
 * backend_close() frees it: the cluster spec and the simulator's own
 * state live in the same allocation as the struct, behind it, and the
 * fleet has no links (nodes NULL), so nothing tries to reach an agent.
 * Node metrics follow a random walk (a node hosting a rank runs hot),
 * one node is down and the power figure is unknown on half of them, so
 * the console's colours, crosses and dashes all show.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-sim.h"

#define SIM_RANKS	8
#define SIM_STRAGGLER	5	/* this rank runs slow now and then */
#define SIM_EPOCH_TICKS	30	/* an epoch every 30 s */

struct sim_node {
	double	 cpu, mem, rx, tx, load;
};

struct sim {
	struct backend	 b;		/* first: free(&sim->b) frees it all */
	struct cluster_spec cluster;
	struct sim_node	*sn;
	struct rng	 rng;
	long		 step;
	int		 ticks;
	bool		 paused;
};

static double
sim_noise(struct sim *s, double scale)
{
	return ((double)rng_float(&s->rng) * 2 - 1) * scale;
}

static double
sim_clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

struct backend *
backend_open_sim(int nodes, int racks, uint64_t seed)
{
	struct sim	*s;
	struct backend	*b;
	size_t		 size;
	int		 per;

	nodes = nodes < 1 ? 1 : nodes;
	racks = racks < 1 ? 1 : racks > nodes ? nodes : racks;
	size = sizeof *s + (size_t)nodes * (sizeof(struct node_spec) +
	    sizeof(struct sim_node));
	s = xcalloc(1, size);
	b = &s->b;
	s->cluster.nodes = (struct node_spec *)(s + 1);
	s->sn = (struct sim_node *)(s->cluster.nodes + nodes);
	s->cluster.n_nodes = nodes;
	s->cluster.simulate = nodes;
	s->cluster.sim_racks = racks;
	snprintf(s->cluster.name, sizeof s->cluster.name, "sim");
	rng_seed(&s->rng, seed, 0);
	per = (nodes + racks - 1) / racks;
	for (int i = 0; i < nodes; i++) {
		struct node_spec *n = &s->cluster.nodes[i];

		snprintf(n->name, sizeof n->name, "sim%04d", i);
		snprintf(n->host, sizeof n->host, "sim");
		snprintf(n->rack, sizeof n->rack, "r%02d", i / per + 1);
		n->cpu_slots = 2;
		n->spare = (i + 1) % per == 0 || i == nodes - 1;
		s->sn[i] = (struct sim_node){ 5 + 20 * rng_float(&s->rng),
		    2e9 + 4e9 * rng_float(&s->rng), 1e5, 1e5, 0.5 };
	}
	b->lock_fd = b->console_fd = -1;
	pthread_mutex_init(&b->mu, NULL);
	pthread_mutex_init(&b->qmu, NULL);
	b->events = json_array();
	b->queue = json_array();
	b->loop = evloop_new();		/* the wake-up, and the tick */
	if (evloop_wake_on(b->loop, NULL, NULL) != 0) {
		backend_close(b);
		return NULL;
	}
	b->cluster = &s->cluster;
	b->fleet.n = nodes;		/* fleet.nodes stays NULL: no links */
	b->nodes = xcalloc((size_t)nodes, sizeof *b->nodes);
	b->used = xcalloc((size_t)nodes, sizeof *b->used);
	for (int i = 0; i < nodes; i++) {
		b->nodes[i].spec = &s->cluster.nodes[i];
		b->nodes[i].up = i != nodes / 2 || nodes < 4;
	}
	return b;
}

/* The simulated job, its ranks on the first working nodes. */
static void
sim_job(struct sim *s)
{
	struct backend	 *b = &s->b;
	struct job_state *j;
	int		  node = 0, world = SIM_RANKS;

	if (world > b->fleet.n)
		world = b->fleet.n;
	j = backend_new_job(b, "sim-train", JOB_QUEUED);
	spec_job_defaults(&j->spec);
	snprintf(j->spec.name, sizeof j->spec.name, "sim-train");
	j->spec.resources.ranks = j->world = world;
	j->spec.train.epochs = 100;
	j->spec.compression.method = COMPRESS_TOPK;
	j->yaml = xstrdup("");
	j->run = 1;
	j->epochs = json_array();
	j->ranks = xcalloc((size_t)world, sizeof *j->ranks);
	for (int r = 0; r < world; r++) {
		while (node < b->fleet.n - 1 && (s->cluster.nodes[node].spare ||
		    !b->nodes[node].up || b->used[node] >= 2))
			node++;
		j->ranks[r].node = node;
		j->ranks[r].pid = 1000 + r;
		b->used[node]++;
	}
	/* The same moves as a real job's, simulated. */
	job_set_phase(b, j, JOB_PLACING, "%d simulated ranks", world);
	backend_event(b, j->name, EV_PLACED, -1, NULL, "%d simulated ranks", world);
	for (int r = 0; r < world; r++)
		rank_set_phase(b, j, r, RANK_RUNNING, "simulated");
	job_set_phase(b, j, JOB_RUNNING, "simulated ranks report");
}

static void
sim_nodes(struct sim *s, double now)
{
	struct backend	*b = &s->b;
	json_t		*m;

	for (int i = 0; i < b->fleet.n; i++) {
		struct node_view *nv = &b->nodes[i];
		struct sim_node	*sn = &s->sn[i];
		double		 target = b->used[i] > 0 ? 88 : 10;

		if (!nv->up)
			continue;
		sn->cpu = sim_clamp(sn->cpu + (target - sn->cpu) * 0.05 +
		    sim_noise(s, 1.5), 0, 100);
		sn->mem = sim_clamp(sn->mem + sim_noise(s, 2e7), 1e9, 15e9);
		sn->rx = sim_clamp(sn->rx * (1 + sim_noise(s, 0.1)) +
		    (b->used[i] ? 2e6 : 0) * 0.05, 1e3, 1e9);
		sn->tx = sim_clamp(sn->tx * (1 + sim_noise(s, 0.1)) +
		    (b->used[i] ? 2e6 : 0) * 0.05, 1e3, 1e9);
		sn->load = sim_clamp(sn->load + sim_noise(s, 0.05), 0, 64);
		nv->sampled = clock_mono();
		sim_node_sample(nv, i, &(struct sim_walk){ sn->cpu, sn->mem,
		    sn->rx, sn->tx, sn->load, b->used[i] > 0, now, s->ticks + 1 },
		    &s->rng);
		backend_node_push(nv);
	}
	/* One frame for the whole fleet: observers learn that nodes moved. */
	m = json_pack("{s:s, s:s, s:i}", "t", MSG_METRICS, "scope", "node",
	    "nodes", b->fleet.n);
	backend_emit(b, m);
	json_decref(m);
}

/* What a rank's agent would measure of its process (RM_PROC_MASK). */
static void
sim_rank_procs(struct sim *s, struct rank_state *rs)
{
	rs->proc_cpu = 97 + sim_noise(s, 3);
	rs->threads = 6;
	rs->ctx_voluntary = 120 + sim_noise(s, 20);
	rs->ctx_involuntary = 8 + sim_noise(s, 2);
	rs->fds = 14;
	rs->gpu_mem = 40L << 30;
	rs->known |= RM_PROC_MASK;
	if (s->b.nodes[rs->node].ngpus == 0)
		rs->known &= ~RM_BIT(GPU_MEM);
}

static void
sim_ranks(struct sim *s)
{
	struct job_state *j = &s->b.jobs[0];
	struct rank_report rr;
	double		 loss;
	json_t		*m;

	if (job_done(j) || s->paused)
		return;
	s->step += 12;
	loss = 0.25 + 2.05 * exp(-s->step / 2500.0);
	for (int r = 0; r < j->world; r++) {
		bool	 slow = r == SIM_STRAGGLER && (s->ticks / 20) % 2 == 1;

		rr = (struct rank_report){ .step = s->step,
		    .epoch = s->ticks / SIM_EPOCH_TICKS, .bytes_sent = 21600, .bytes_dense = 1077296, .density = 0.01,
		    .optimizer_bytes = 1077296,
		    .micro_batch = 32, .accum = 1, .rss = 240L << 20,
		    .heartbeat = (double)time(NULL), .pid = j->ranks[r].pid,
		    .bytes_sent_total = s->step * 21600L,
		    .bytes_dense_total = s->step * 1077296L,
		    .compression_ratio = 1077296 / 21600.0,
		    .valid = RM_ALL & ~(RM_BIT(LR) | RM_BIT(COMPUTE_MS) |
		    RM_BIT(LR_GAIN) | RM_BIT(NOISE_SCALE) |
		    RM_BIT(PEAK_GFLOPS) | RM_BIT(MFU)) };
		/* One draw at a time: the order of the noise is the walk. */
		rr.loss = loss + sim_noise(s, 0.02);
		rr.step_ms = (slow ? 24 : 8.5) + sim_noise(s, 0.6);
		rr.comm_ms = rr.step_ms * 0.6;
		rr.data_wait_ms = 0.05 + sim_noise(s, 0.02);
		rr.samples_per_s = 256 * 1000 / rr.step_ms;
		m = json_pack("{s:s, s:s, s:s, s:i}", "t", MSG_METRICS,
		    "scope", "rank", "job", j->name, "rank", r);
		rank_report_put(&rr, m);
		json_object_set_new(m, "run", json_integer(j->run));
		/* The frame into the state, as the backend reads a real one. */
		backend_rank_metrics(j, r, m);
		sim_rank_procs(s, &j->ranks[r]);
		backend_emit(&s->b, m);
		json_decref(m);
	}
	if (++s->ticks % SIM_EPOCH_TICKS == 0) {
		m = json_pack("{s:s, s:s, s:i, s:i, s:I, s:f, s:f, s:f, s:I}",
		    "t", MSG_EPOCH, "job", j->name, "epoch",
		    s->ticks / SIM_EPOCH_TICKS, "epochs", j->spec.train.epochs,
		    "step", (json_int_t)s->step, "loss", loss, "test_acc",
		    0.9 - loss * 0.2, "samples_per_s", 30000.0, "run",
		    (json_int_t)j->run);
		json_array_append(j->epochs, m);
		backend_emit(&s->b, m);
		json_decref(m);
	}
}

static void
sim_stop(struct sim *s, struct job_state *j)
{
	char	 err[64];
	json_t	*m;

	job_set_phase(&s->b, j, JOB_STOPPING, "stop asked (simulated)");
	backend_event(&s->b, j->name, EV_CHECKPOINT, -1, NULL,
	    "simulated checkpoint at step %ld before the stop", s->step);
	memset(&j->sum, 0, sizeof j->sum);
	SUMMARY_SET(&j->sum, steps, s->step);
	snprintf(j->sum.job, sizeof j->sum.job, "%s", j->name);
	snprintf(j->sum.state, sizeof j->sum.state, "stopped");
	j->sum.have |= (uint64_t)1 << SUMMARY_F_job |
	    (uint64_t)1 << SUMMARY_F_state;
	m = json_pack("{s:s}", "t", MSG_SUMMARY);
	summary_pack(&j->sum, m, err, sizeof err);
	backend_emit(&s->b, m);
	json_decref(m);
	for (int r = 0; r < j->world; r++)
		rank_set_phase(&s->b, j, r, RANK_EXITED, "stopped (simulated)");
	job_settle(&s->b, j);
}

static void
sim_migrate(struct sim *s, struct job_state *j, const json_t *cmd)
{
	struct backend	*b = &s->b;
	int		 r = (int)json_integer_value(json_object_get(cmd, "rank"));
	const char	*to = json_string_value(json_object_get(cmd, "node"));
	int		 n = -1, from;

	for (int i = 0; to != NULL && i < b->fleet.n; i++) {
		if (strcmp(s->cluster.nodes[i].name, to) == 0)
			n = i;
	}
	if (r < 0 || r >= j->world || n < 0 || !b->nodes[n].up ||
	    b->used[n] >= s->cluster.nodes[n].cpu_slots) {
		backend_event(b, j->name, EV_REFUSED, r, to, "cannot migrate "
		    "rank %d to %s", r, to != NULL ? to : "(no node)");
		return;
	}
	from = j->ranks[r].node;
	job_set_phase(b, j, JOB_REFORMING, "migrate rank %d (simulated)", r);
	for (int i = 0; i < j->world; i++)
		rank_set_phase(b, j, i, RANK_EXITED, "re-forming (simulated)");
	b->used[from]--;
	b->used[n]++;
	j->ranks[r].node = n;
	j->generation++;
	job_set_phase(b, j, JOB_PLACING, "generation %d (simulated)",
	    j->generation);
	for (int i = 0; i < j->world; i++)
		rank_set_phase(b, j, i, RANK_RUNNING, "simulated");
	job_set_phase(b, j, JOB_RUNNING, "simulated ranks report");
	backend_event(b, j->name, EV_MIGRATED, r, to, "rank %d: %s -> %s at "
	    "step %ld (simulated, generation %d)", r, s->cluster.nodes[from].name,
	    to, s->step, j->generation);
}

static void
sim_command(struct sim *s, const json_t *cmd)
{
	const char	*c = json_string_value(json_object_get(cmd, "cmd"));
	const char	*name = json_string_value(json_object_get(cmd, "job"));
	struct job_state *j = &s->b.jobs[0];

	if (c != NULL && strcmp(c, "detach") == 0) {
		s->b.detach = true;
		return;
	}
	if (c == NULL || name == NULL || strcmp(name, j->name) != 0 ||
	    job_done(j)) {
		backend_event(&s->b, name, EV_REFUSED, -1, NULL, "no running job "
		    "%s", name != NULL ? name : "(none)");
		return;
	}
	if (strcmp(c, "pause") == 0 || strcmp(c, "resume") == 0) {
		s->paused = c[0] == 'p';
		job_set_phase(&s->b, j, s->paused ? JOB_PAUSED : JOB_RUNNING,
		    "%s (simulated)", c);
		for (int r = 0; r < j->world; r++)
			j->ranks[r].paused = s->paused;
		backend_event(&s->b, name, s->paused ? EV_PAUSED : EV_RESUMED, -1,
		    NULL, "every rank %s at step %ld (simulated)", s->paused ?
		    "holds" : "continues", s->step);
	} else if (strcmp(c, "checkpoint") == 0)
		backend_event(&s->b, name, EV_CHECKPOINT, -1, NULL,
		    "simulated checkpoint at step %ld", s->step);
	else if (strcmp(c, "migrate") == 0)
		sim_migrate(s, j, cmd);
	else if (strcmp(c, "stop") == 0)
		sim_stop(s, j);
	else
		backend_event(&s->b, name, EV_REFUSED, -1, NULL,
		    "unknown command '%s'", c);
}

/* Once a second: the nodes' walk and the ranks' step. */
static void
sim_tick(void *arg)
{
	struct sim	*s = arg;
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	sim_nodes(s, (double)ts.tv_sec + ts.tv_nsec * 1e-9);
	sim_ranks(s);
}

/* The loop's turns: the commands posted (their post woke it), then the
 * tick when it is due; the state lock is held but while it waits. */
static void *
sim_main(void *arg)
{
	struct sim	*s = arg;
	struct backend	*b = &s->b;
	json_t		*q, *cmd;
	size_t		 i;

	for (;;) {
		pthread_mutex_lock(&b->mu);
		evloop_prepare(b->loop);
		pthread_mutex_unlock(&b->mu);
		evloop_wait(b->loop, -1);
		pthread_mutex_lock(&b->mu);
		if (b->quit) {
			pthread_mutex_unlock(&b->mu);
			break;
		}
		pthread_mutex_lock(&b->qmu);
		q = b->queue;
		b->queue = json_array();
		pthread_mutex_unlock(&b->qmu);
		json_array_foreach(q, i, cmd)
			sim_command(s, cmd);
		json_decref(q);
		evloop_dispatch(b->loop);
		pthread_mutex_unlock(&b->mu);
	}
	return NULL;
}

int
backend_sim_start(struct backend *b, const struct backend_observer *obs)
{
	struct sim	*s = (struct sim *)b;

	if (obs != NULL)
		b->obs = *obs;
	sim_job(s);
	evloop_timer_add(b->loop, 0, 1.0, sim_tick, s);
	if (pthread_create(&b->thread, NULL, sim_main, s) != 0)
		return -1;
	b->threaded = true;
	return 0;
}
