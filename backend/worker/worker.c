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
 * thread flushes when the socket is writable, and metrics are dropped
 * (and the drops reported) while the agent does not read.  The train
 * loop's hooks (what the rank reports, the controls it asks for, the
 * collectives) are in worker-hooks.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include "lib/cuda-probe.h"
#include "backend/spec/spec.h"
#include "backend/proto/proto.h"
#include "backend/comm/comm.h"
#include "backend/worker/train.h"
#include "backend/worker/worker-internal.h"
#include "backend/worker/worker.h"

static struct worker *worker_self;

static void
worker_command(struct worker *w, const char *cmd, const json_t *msg)
{
	static const char *names[CTL_COUNT + 1] = { "stop", "pause",
	    "checkpoint", "resume" };
	long	 seq = (long)json_integer_value(json_object_get(msg, "seq"));

	for (int c = 0; c <= CTL_COUNT; c++) {
		if (strcmp(cmd, names[c]) != 0)
			continue;
		if (seq <= 0)		/* no sequence: a one-off request */
			seq = atomic_load(&w->seq[c]) + 1;
		if (seq > atomic_load(&w->seq[c]))
			atomic_store(&w->seq[c], seq);
		return;
	}
	fprintf(stderr, "worker: ignoring command '%s'\n", cmd);
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

/* The link's other half: read frames, and flush the queue whenever the
 * socket takes more (worker_send wakes us when bytes wait). */
static void *
worker_reader(void *arg)
{
	struct worker		*w = arg;
	struct proto_reader	 rd;
	struct pollfd		 pfd[2];
	json_t			*msg;
	ssize_t			 n;
	int			 rc = 0;
	char			 buf[64];

	proto_reader_init(&rd);
	for (;;) {
		pthread_mutex_lock(&w->send_lock);
		pfd[0] = (struct pollfd){ .fd = w->fd,
		    .events = POLLIN | proto_queue_events(&w->q) };
		pthread_mutex_unlock(&w->send_lock);
		pfd[1] = (struct pollfd){ .fd = w->wake[0], .events = POLLIN };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents != 0)
			while (read(w->wake[0], buf, sizeof buf) > 0)
				;
		if (pfd[0].revents & POLLOUT) {
			pthread_mutex_lock(&w->send_lock);
			proto_queue_flush(&w->q);
			pthread_mutex_unlock(&w->send_lock);
		}
		if ((pfd[0].revents & ~POLLOUT) == 0)
			continue;
		n = proto_reader_fill(&rd, w->fd);
		while ((rc = proto_reader_next(&rd, &msg)) == 1) {
			worker_frame(w, msg);
			json_decref(msg);
		}
		if (rc < 0 || n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			break;
	}
	/* The agent is gone: nobody will read what we train.  Stop at the
	 * next step boundary with a checkpoint rather than run blind. */
	if (!atomic_load(&w->quit))	/* not our own shutdown at the end */
		fprintf(stderr, "worker: link to agent closed (%s)\n",
		    rc < 0 ? rd.err : "EOF");
	pthread_mutex_lock(&w->box_lock);
	w->link_down = true;
	pthread_cond_broadcast(&w->box_cond);
	pthread_mutex_unlock(&w->box_lock);
	atomic_store(&w->stop, 1);
	proto_reader_free(&rd);
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

/* Read the launch frame: the first thing the agent sends. */
static json_t *
worker_read_launch(int fd, char *err, size_t errlen)
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
		return NULL;
	switch (proto_kind(msg, why, sizeof why)) {
	case PK_CMD:
		if (strcmp(json_string_value(json_object_get(msg, "cmd")),
		    "launch") == 0)
			return msg;
		/* FALLTHROUGH */
	default:
		snprintf(why, sizeof why, "a '%s', not a launch",
		    proto_type(msg));
		/* FALLTHROUGH */
	case PK_INVALID:
		snprintf(err, errlen, "bad first frame: %s", why);
		json_decref(msg);
		return NULL;
	}
	return msg;
}

static int
worker_int(const json_t *o, const char *key, int def)
{
	json_t	*v = json_object_get(o, key);

	return json_is_integer(v) ? (int)json_integer_value(v) : def;
}

static const char *
worker_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

int
worker_main(int argc, char **argv)
{
	struct worker		 w = { .fd = -1 };
	struct spec_errors	 errs = { 0 };
	struct train_config	 cfg = { 0 };
	struct train_hooks	 hooks = { .ctx = &w, .on_epoch = worker_on_epoch,
	    .on_eval = worker_on_eval,
	    .on_event = worker_on_event, .requests = worker_requests,
	    .agreed = worker_agreed, .paused = worker_paused,
	    .on_step = worker_on_step, .on_autotune = worker_on_autotune };
	struct train_summary	 sum;
	struct sigaction	 sa = { .sa_handler = worker_on_sigterm };
	struct comm_config	 cc = { .backend = "auto" };
	struct comm_store	 cs = { .ctx = &w, .set = worker_store_set,
	    .get = worker_store_get };
	pthread_t		 reader, heart;
	json_t			*launch;
	const char		*yaml;
	char			 err[1024], ckdir[4096];
	int			 rc = 1, ndev;

	if (argc != 3 || strcmp(argv[1], "--fd") != 0) {
		fprintf(stderr, "usage: hunter worker --fd N (started by "
		    "hunter agent)\n");
		return 2;
	}
	w.fd = atoi(argv[2]);
	if ((launch = worker_read_launch(w.fd, err, sizeof err)) == NULL) {
		fprintf(stderr, "hunter worker: %s\n", err);
		return 1;
	}
	pthread_mutex_init(&w.send_lock, NULL);
	if (pipe2(w.wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		fprintf(stderr, "hunter worker: pipe: %s\n", strerror(errno));
		return 1;
	}
	proto_queue_init(&w.q, w.fd, 0);
	pthread_mutex_init(&w.box_lock, NULL);
	pthread_cond_init(&w.box_cond, NULL);
	w.box = json_object();
	w.rank = worker_int(launch, "rank", 0);
	w.world = worker_int(launch, "world", 1);
	w.generation = worker_int(launch, "generation", 0);
	w.trace_steps = worker_int(launch, "trace_steps", 0);
	w.log_flood = worker_int(launch, "log_flood", 0);
	snprintf(w.node, sizeof w.node, "%s", worker_str(launch, "node"));
	snprintf(ckdir, sizeof ckdir, "%s", worker_str(launch, "checkpoint_dir"));
	worker_self = &w;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* The BLAS threads the agent gave the rank (its share of the
	 * node's cores: OPENBLAS_NUM_THREADS), else one. */
	openblas_set_num_threads(blas_env_threads());

	yaml = worker_str(launch, "spec_yaml");
	if (spec_parse_job(worker_str(launch, "spec_file"), yaml, strlen(yaml),
	    &w.job, &errs) != 0) {
		snprintf(err, sizeof err, "%s:%d:%d: %s", errs.v[0].file,
		    errs.v[0].line, errs.v[0].col, errs.v[0].msg);
		spec_errors_free(&errs);
		snprintf(w.job.name, sizeof w.job.name, "%s", worker_str(launch, "job"));
		worker_on_event(&w, "failed", err);
		goto done;
	}
	if (worker_blas(&w, err, sizeof err) != 0) {
		worker_on_event(&w, "failed", err);
		goto done;
	}
	/* A cuda rank takes the device of its index among the job's ranks
	 * on this node (modulo the devices there). */
	if (w.job.resources.device == DEVICE_CUDA &&
	    ((ndev = cuda_device_check(err, sizeof err)) < 0 ||
	    cuda_use_device(worker_int(launch, "local_rank", 0) % ndev, err,
	    sizeof err) != 0)) {
		worker_on_event(&w, "failed", err);
		goto done;
	}
	pthread_create(&reader, NULL, worker_reader, &w);
	pthread_create(&heart, NULL, worker_heartbeat, &w);

	cfg.job = &w.job;
	cfg.rank = w.rank;
	cfg.world = w.world;
	cfg.checkpoint_dir = ckdir;
	cfg.resume = json_is_true(json_object_get(launch, "resume"));
	cfg.stop_after_epochs = worker_int(launch, "stop_after_epochs", 0);
	cfg.slow_data_ms = worker_int(launch, "slow_data_ms", 0);
	cfg.slow_ms = worker_int(launch, "slow_ms", 0);
	cfg.leak_bytes = (long)json_integer_value(json_object_get(launch,
	    "leak_bytes"));
	cfg.crash_at = (long)json_integer_value(json_object_get(launch,
	    "crash_at"));
	if (w.world > 1) {
		/* auto: shared memory between the ranks of a host, Gloo
		 * between hosts; HUNTER_COMM names another (e.g. gloo). */
		if (getenv("HUNTER_COMM") != NULL && *getenv("HUNTER_COMM") != '\0')
			cc.backend = getenv("HUNTER_COMM");
		cc.rank = w.rank;
		cc.world = w.world;
		cc.generation = w.generation;
		cc.bind_addr = worker_str(launch, "addr");
		cc.timeout_ms = worker_int(launch, "timeout_ms", 10000);
		if ((w.comm = comm_init(&cc, &cs, err, sizeof err)) == NULL) {
			worker_on_event(&w, "failed", err);
			goto done_thread;
		}
		hooks.allreduce = worker_allreduce;
		hooks.reduce_scatter = worker_reduce_scatter;
		hooks.broadcast = worker_broadcast;
		hooks.sum_u64 = worker_sum_u64;
		hooks.allgatherv = worker_allgatherv;
	}
	if (train_run(&cfg, &hooks, &sum, err, sizeof err) != 0) {
		worker_on_event(&w, "failed", err);
		if (w.rank == 0)
			worker_summary(&w, &sum);
		goto done_comm;
	}
	worker_flush_metrics(&w);
	if (w.rank == 0)
		worker_summary(&w, &sum);
	/* Each rank's final weights, for comparing ranks and runs; a rank
	 * that stopped (for a re-formation, or asked to) has not finished. */
	if (strcmp(sum.state, "finished") == 0)
		worker_send(&w, json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:s}",
		    "t", MSG_EVENT, "job", w.job.name, "kind", "finished",
		    "rank", w.rank, "node", w.node, "reason", sum.state,
		    "params_crc32", sum.params_crc32));
	rc = 0;
done_comm:
	comm_destroy(w.comm);
done_thread:
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
	close(w.wake[0]);
	close(w.wake[1]);
	json_decref(launch);
	json_decref(w.box);
	return rc;
}

const struct cmd_entry cmd_worker_entry = {
	.name = "worker",
	.usage = "--fd N",
	.summary = "(started by an agent) one training rank",
	.exec = worker_main,
};
