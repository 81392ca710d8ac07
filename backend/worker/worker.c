/*
 * worker.c: `hunter worker --fd N`, one training rank, started by an
 * agent.  Its first frame on fd N is the launch command: the job's YAML
 * text, its rank and world, the group generation, the address to bind
 * Gloo to and where checkpoints go.  The ranks of one host find each
 * other through the store and exchange through shared memory (comm.h,
 * the "auto" backend), whatever the launch frame calls their nodes.  It then trains, streaming metrics
 * (at most once a second), epoch lines, events and a summary back.
 *
 * A reader thread owns the incoming side of the link: store answers go to
 * a mailbox that the rendezvous waits on, commands set flags the train
 * loop reads at step boundaries.  Every thread sends through one queue
 * (struct proto_queue) under one mutex, and none waits for the agent:
 * what the socket does not take waits in the queue, which the reader
 * thread (an event loop, lib/evloop.h) flushes when the socket is
 * writable, and metrics are dropped (and the drops reported) while the
 * agent does not read.  The train
 * loop's hooks (what the rank reports, the controls it asks for, the
 * collectives) are in worker-hooks.c.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "lib/clock.h"
#include "lib/cpuid.h"
#include "lib/evloop.h"
#include "lib/cuda-probe.h"
#include "backend/spec/spec.h"
#include "backend/proto/launch.h"
#include "backend/proto/proto.h"
#include "backend/comm/comm.h"
#include "backend/worker/train.h"
#include "backend/worker/worker-internal.h"
#include "backend/worker/worker.h"

static struct worker *worker_self;

static void
worker_command(struct worker *w, const char *cmd, const json_t *msg)
{
	long	 seq = (long)json_integer_value(json_object_get(msg, "seq"));
	int	 c = proto_seq_cmd(cmd);

	_Static_assert(CTL_COUNT + 1 == PROTO_SEQ_CMDS, "the worker's slots "
	    "are the protocol's sequenced commands");
	if (c < 0) {
		fprintf(stderr, "worker: ignoring command '%s'\n", cmd);
		return;
	}
	if (seq <= 0)		/* no sequence: a one-off request */
		seq = atomic_load(&w->seq[c]) + 1;
	if (seq > atomic_load(&w->seq[c]))
		atomic_store(&w->seq[c], seq);
}

/* A frame from the agent: a store answer to the mailbox, by its "req",
 * or a command. */
static void
worker_frame(struct worker *w, json_t *msg)
{
	char	 key[32], err[300];

	switch (proto_kind(msg, err, sizeof err)) {
	case PK_STORE:
		snprintf(key, sizeof key, "%lld", (long long)
		    json_integer_value(json_object_get(msg, "req")));
		pthread_mutex_lock(&w->box_lock);
		json_object_set(w->box, key, msg);
		pthread_cond_broadcast(&w->box_cond);
		pthread_mutex_unlock(&w->box_lock);
		break;
	case PK_CMD:
		worker_command(w, json_string_value(json_object_get(msg, "cmd")),
		    msg);
		break;
	case PK_INVALID:
		fprintf(stderr, "worker: refusing %s\n", err);
		break;
	default:
		break;
	}
}

/* The reader thread's side of the link: what it has read so far. */
struct worker_reader {
	struct worker	*w;
	struct proto_reader rd;
	int		 rc;		/* the last proto_reader_next */
	bool		 closed;	/* the agent's end is gone */
};

/* The link's events: POLLOUT while bytes wait in the queue, which every
 * thread sends through (under the send lock). */
static short
worker_link_events(void *arg)
{
	struct worker	*w = arg;
	short		 ev;

	pthread_mutex_lock(&w->send_lock);
	ev = proto_queue_want(&w->q);
	pthread_mutex_unlock(&w->send_lock);
	return ev;
}

static void
worker_on_link(int fd, short revents, void *arg)
{
	struct worker_reader *r = arg;
	struct worker	*w = r->w;
	json_t		*msg;
	ssize_t		 n;

	if (revents & POLLOUT) {
		pthread_mutex_lock(&w->send_lock);
		proto_queue_flush(&w->q);
		pthread_mutex_unlock(&w->send_lock);
	}
	if ((revents & ~POLLOUT) == 0)
		return;
	n = proto_reader_fill(&r->rd, fd);
	while ((r->rc = proto_reader_next(&r->rd, &msg)) == 1) {
		worker_frame(w, msg);
		json_decref(msg);
	}
	if (r->rc < 0 || n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		r->closed = true;
}

/* The link's other half, on the worker's event loop: read frames, and
 * flush the queue whenever the socket takes more (worker_send rings the
 * loop when bytes wait). */
static void *
worker_reader(void *arg)
{
	struct worker		*w = arg;
	struct worker_reader	 r = { .w = w };
	struct evloop_fd	*link;

	proto_reader_init(&r.rd);
	link = evloop_fd_add(w->loop, w->fd, POLLIN, worker_on_link, &r);
	evloop_fd_want(link, worker_link_events, w);
	while (!r.closed && evloop_run_once(w->loop, -1) >= 0)
		;
	evloop_fd_del(link);
	/* The agent is gone: nobody will read what we train.  Stop at the
	 * next step boundary with a checkpoint rather than run blind. */
	if (!atomic_load(&w->quit))	/* not our own shutdown at the end */
		fprintf(stderr, "worker: link to agent closed (%s)\n",
		    r.rc < 0 ? r.rd.err : "EOF");
	pthread_mutex_lock(&w->box_lock);
	w->link_down = true;
	pthread_cond_broadcast(&w->box_cond);
	pthread_mutex_unlock(&w->box_lock);
	atomic_store(&w->stop, 1);
	proto_reader_free(&r.rd);
	return NULL;
}

/* A heartbeat a second while the train loop sends no metrics of its own
 * (loading data, forming the group, resuming, evaluating), so the backend
 * can tell a busy rank from a dead one. */
static void *
worker_heartbeat(void *arg)
{
	struct worker		*w = arg;
	struct rank_report	 rr;
	json_t			*m;

	while (!w->link_down && !atomic_load(&w->quit)) {
		nanosleep(&(struct timespec){ 0, 250 * 1000000L }, NULL);
		worker_report_drops(w);
		if (clock_mono() - atomic_load(&w->last_sent) < 1.0)
			continue;
		atomic_store(&w->last_sent, clock_mono());
		rr = (struct rank_report){ .step = atomic_load(&w->last_step),
		    .heartbeat = (double)time(NULL), .pid = (long)getpid(),
		    .valid = RM_BIT(STEP) | RM_BIT(HEARTBEAT) | RM_BIT(PID) };
		m = worker_metrics(w, &rr);
		json_object_set_new(m, "beat", json_true());
		json_object_set_new(m, "paused",
		    json_boolean(atomic_load(&w->paused) != 0));
		worker_send(w, m);
	}
	return NULL;
}

static int
worker_store_set(void *ctx, const char *key, const void *val, size_t len)
{
	struct worker	*w = ctx;
	char		*b64 = proto_b64_encode(val, len);
	char		 full[512];

	/* Keys are scoped by job here; comm scopes them by generation. */
	snprintf(full, sizeof full, "%s/%s", w->job.name, key);
	worker_send(w, json_pack("{s:s, s:s, s:s, s:s}", "t", MSG_STORE,
	    "op", "set", "key", full, "value", b64));
	free(b64);
	return w->link_down ? -1 : 0;
}

static int
worker_store_get(void *ctx, const char *key, void **val, size_t *len,
    int timeout_ms)
{
	struct worker	*w = ctx;
	struct timespec	 deadline;
	json_t		*ans = NULL;
	char		 id[32], full[512];
	long		 req;
	int		 rc = 0;

	snprintf(full, sizeof full, "%s/%s", w->job.name, key);

	pthread_mutex_lock(&w->box_lock);
	req = ++w->next_req;
	pthread_mutex_unlock(&w->box_lock);
	snprintf(id, sizeof id, "%ld", req);
	worker_send(w, json_pack("{s:s, s:s, s:s, s:I, s:i}", "t", MSG_STORE,
	    "op", "get", "key", full, "req", (json_int_t)req,
	    "timeout_ms", timeout_ms));
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000 + 1;
	pthread_mutex_lock(&w->box_lock);
	while ((ans = json_object_get(w->box, id)) == NULL && !w->link_down &&
	    rc == 0)
		rc = pthread_cond_timedwait(&w->box_cond, &w->box_lock, &deadline);
	if (ans != NULL) {
		json_incref(ans);
		json_object_del(w->box, id);
	}
	pthread_mutex_unlock(&w->box_lock);
	if (ans == NULL)
		return -1;
	rc = -1;
	/* The reader let through only answers whose value is a string. */
	if (strcmp(json_string_value(json_object_get(ans, "op")), "value") == 0) {
		if ((*val = proto_b64_decode(json_string_value(json_object_get(
		    ans, "value")), len)) != NULL)
			rc = 0;
		else
			fprintf(stderr, "worker: store get %s: the value is not "
			    "base64\n", key);
	} else
		fprintf(stderr, "worker: store get %s: %s\n", key,
		    json_string_value(json_object_get(ans, "reason")) ?:
		    "refused");
	json_decref(ans);
	return rc;
}

static void
worker_on_sigterm(int sig)
{
	(void)sig;
	if (worker_self != NULL)
		atomic_store(&worker_self->stop, 1);
}

/* Read the launch order: the first frame the agent sends.  0, or -1
 * with err. */
static int
worker_read_launch(int fd, struct launch_order *l, char *err, size_t errlen)
{
	struct proto_reader	 rd;
	json_t			*msg = NULL;
	ssize_t			 n;
	int			 rc;
	char			 why[300];

	proto_reader_init(&rd);
	while ((rc = proto_reader_next(&rd, &msg)) == 0) {
		if ((n = proto_reader_fill(&rd, fd)) <= 0) {
			snprintf(err, errlen, "no launch frame: %s", n == 0 ?
			    "link closed" : strerror(errno));
			break;
		}
	}
	if (rc < 0)
		snprintf(err, errlen, "bad launch frame: %s", rd.err);
	proto_reader_free(&rd);
	if (msg == NULL)
		return -1;
	rc = -1;
	if (proto_kind(msg, why, sizeof why) == PK_INVALID)
		snprintf(err, errlen, "bad first frame: %s", why);
	else if (strcmp(proto_type(msg), MSG_CMD) != 0 || strcmp(
	    json_string_value(json_object_get(msg, "cmd")), "launch") != 0)
		snprintf(err, errlen, "bad first frame: a '%s', not a launch",
		    proto_type(msg));
	else if (launch_unpack(msg, l, why, sizeof why) != 0)
		snprintf(err, errlen, "bad launch frame: %s", why);
	else
		rc = 0;
	json_decref(msg);
	return rc;
}

/* The job of the launch order, and the device a cuda rank computes on
 * (its index among the job's ranks on this node, modulo the devices
 * there).  0, or -1 with err. */
static int
worker_job(struct worker *w, const struct launch_order *l, char *err,
    size_t errlen)
{
	struct spec_errors	 errs = { 0 };
	int			 ndev;

	if (spec_parse_job(l->spec_file, l->spec_yaml, strlen(l->spec_yaml),
	    &w->job, &errs) != 0) {
		snprintf(err, errlen, "%s:%d:%d: %s", errs.v[0].file,
		    errs.v[0].line, errs.v[0].col, errs.v[0].msg);
		spec_errors_free(&errs);
		snprintf(w->job.name, sizeof w->job.name, "%s", l->job);
		return -1;
	}
	/* An adaptive batch runs at what the backend chose for this world,
	 * with the learning rate scaled for it (docs/scheduling.md). */
	if (w->job.train.batch.adaptive &&
	    (l->have >> LAUNCH_F_global_batch & 1)) {
		if (l->global_batch < w->job.train.batch.global_min ||
		    l->global_batch > w->job.train.batch.global_max) {
			snprintf(err, errlen, "the launch's global batch %d is "
			    "outside train.batch.global [%d, %d]",
			    l->global_batch, w->job.train.batch.global_min,
			    w->job.train.batch.global_max);
			return -1;
		}
		w->job.train.batch.global = l->global_batch;
		if (l->have >> LAUNCH_F_lr & 1)
			w->job.train.lr.base = l->lr;
	}
	if (w->job.resources.device == DEVICE_CUDA &&
	    ((ndev = cuda_device_check(err, errlen)) < 0 ||
	    cuda_use_device(l->local_rank % ndev, err, errlen) != 0))
		return -1;
	return 0;
}

/* Form the group of a rank with peers: shared memory between the ranks
 * of a host, Gloo between hosts (auto; HUNTER_COMM names another, e.g.
 * gloo), and the collectives into the hooks.  0, or -1 with err. */
static int
worker_group(struct worker *w, const struct launch_order *l,
    struct train_hooks *hooks, char *err, size_t errlen)
{
	struct comm_config	 cc = { .backend = "auto", .rank = l->rank,
	    .world = l->world, .generation = l->generation,
	    .bind_addr = l->addr, .timeout_ms = l->timeout_ms };
	struct comm_store	 cs = { .ctx = w, .set = worker_store_set,
	    .get = worker_store_get };
	const char		*forced = getenv("HUNTER_COMM");

	if (l->world <= 1)
		return 0;
	if (forced != NULL && *forced != '\0')
		cc.backend = forced;
	if ((w->comm = comm_init(&cc, &cs, err, errlen)) == NULL)
		return -1;
	hooks->allreduce = worker_allreduce;
	hooks->reduce_scatter = worker_reduce_scatter;
	hooks->broadcast = worker_broadcast;
	hooks->sum_u64 = worker_sum_u64;
	hooks->allgatherv = worker_allgatherv;
	if (comm_has_xfer(w->comm)) {
		hooks->xfer_start = worker_xfer_start;
		hooks->xfer_wait = worker_xfer_wait;
	}
	return 0;
}

/* Whether the rank loads its batches itself, with no prefetch thread:
 * where the job's ranks on this host are as many as its cores.  A thread
 * that wakes to load then stops a rank that computes: on 2 cores, 2
 * ranks of the mlp trained 5% faster without it (median of 8 runs
 * each), and where a core is left over, the thread's loading is free.
 * A rank's own BLAS threads do not count: they idle between GEMMs, and
 * one rank of 2 threads measured no better either way.  An operator's
 * data.prefetch: 0 asks for it anywhere (train.c). */
static bool
worker_data_inline(const struct launch_order *l)
{
	return (l->have >> LAUNCH_F_host_ranks & 1) && l->host_ranks > 0 &&
	    l->host_ranks >= cpu_cores();
}

/* Train to the end, or to a stop; rank 0 sends the summary and every
 * rank that trained to the end its final weights' CRC. */
static int
worker_train(struct worker *w, const struct launch_order *l,
    const struct train_hooks *hooks)
{
	struct train_config	 cfg = { .job = &w->job, .rank = w->rank,
	    .world = w->world, .checkpoint_dir = l->checkpoint_dir,
	    .run = l->run, .resume = l->resume, .stop_after_epochs = l->stop_after_epochs,
	    .slow_data_ms = l->slow_data_ms, .slow_ms = l->slow_ms,
	    .slow_sample_us = l->slow_sample_us,
	    .leak_bytes = (long)l->leak_bytes, .crash_at = (long)l->crash_at,
	    .data_inline = worker_data_inline(l) };
	struct train_summary	 sum;
	char			 err[1024];
	int			 rc = train_run(&cfg, hooks, &sum, err, sizeof err);

	if (rc != 0)
		worker_on_event(w, EV_FAILED, err);
	else
		worker_flush_metrics(w);
	if (w->rank == 0)
		worker_summary(w, &sum);
	/* Each rank's final weights, for comparing ranks and runs; a rank
	 * that stopped (for a re-formation, or asked to) has not finished. */
	if (rc == 0 && strcmp(sum.f.state, "finished") == 0)
		worker_send(w, json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:s}",
		    "t", MSG_EVENT, "job", w->job.name, "kind", "finished",
		    "rank", w->rank, "node", w->node, "reason", sum.f.state,
		    "params_crc32", sum.params_crc32));
	return rc;
}

static int
worker_run(const struct cmd_args *a)
{
	struct worker		 w = { .fd = -1 };
	struct train_hooks	 hooks = { .ctx = &w, .on_epoch = worker_on_epoch,
	    .on_eval = worker_on_eval,
	    .on_event = worker_on_event, .requests = worker_requests,
	    .agreed = worker_agreed, .paused = worker_paused,
	    .on_step = worker_on_step, .on_autotune = worker_on_autotune };
	struct sigaction	 sa = { .sa_handler = worker_on_sigterm };
	struct launch_order	 l;
	pthread_t		 reader, heart;
	char			 err[1024];
	int			 rc = 1;
	long long		 fd = -1;

	if (cmd_get_long(a, "fd", 0, INT_MAX, &fd) != 0)
		return 2;
	if (fd < 0) {
		fprintf(stderr, "hunter worker: --fd is required (an agent "
		    "starts workers)\n");
		return 2;
	}
	w.fd = (int)fd;
	if (worker_read_launch(w.fd, &l, err, sizeof err) != 0) {
		fprintf(stderr, "hunter worker: %s\n", err);
		launch_free(&l);
		return 1;
	}
	pthread_mutex_init(&w.send_lock, NULL);
	w.loop = evloop_new();
	if (evloop_wake_on(w.loop, NULL, NULL) != 0) {
		fprintf(stderr, "hunter worker: pipe: %s\n", strerror(errno));
		launch_free(&l);
		return 1;
	}
	proto_queue_init(&w.q, w.fd, 0);
	pthread_mutex_init(&w.box_lock, NULL);
	pthread_cond_init(&w.box_cond, NULL);
	w.box = json_object();
	w.rank = l.rank;
	w.world = l.world;
	w.generation = l.generation;
	w.trace_steps = l.trace_steps;
	w.log_flood = l.log_flood;
	snprintf(w.node, sizeof w.node, "%s", l.node);
	worker_self = &w;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* The BLAS threads the agent gave the rank (its share of the
	 * node's cores: OPENBLAS_NUM_THREADS), else one. */
	openblas_set_num_threads(blas_env_threads());

	if (worker_job(&w, &l, err, sizeof err) != 0 ||
	    worker_blas(&w, err, sizeof err) != 0) {
		worker_on_event(&w, EV_FAILED, err);
		goto done;
	}
	pthread_create(&reader, NULL, worker_reader, &w);
	pthread_create(&heart, NULL, worker_heartbeat, &w);
	if (worker_group(&w, &l, &hooks, err, sizeof err) != 0)
		worker_on_event(&w, EV_FAILED, err);
	else if (worker_train(&w, &l, &hooks) == 0)
		rc = 0;
	comm_destroy(w.comm);
	atomic_store(&w.quit, 1);
	pthread_join(heart, NULL);
	worker_drain(&w);
	/* Closing our side ends the reader thread. */
	shutdown(w.fd, SHUT_RDWR);
	pthread_join(reader, NULL);
done:
	worker_drain(&w);
	proto_queue_free(&w.q);
	close(w.fd);
	evloop_free(w.loop);
	launch_free(&l);
	json_decref(w.box);
	return rc;
}

static const struct cmd_option worker_options[] = {
	{ "fd", 0, "N", "the socket to the agent, for the launch and every "
	    "frame (required)" },
	{ NULL }
};

const struct cmd_entry cmd_worker_entry = {
	.name = "worker",
	.usage = "--fd N",
	.summary = "(started by an agent) one training rank",
	.options = worker_options,
	.args_min = 0,
	.args_max = 0,
	.exec = worker_run,
};

int
worker_main(int argc, char **argv)
{
	return cmd_main(&cmd_worker_entry, argc, argv);
}
