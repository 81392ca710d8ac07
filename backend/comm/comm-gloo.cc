/*
 * comm-gloo.cc: the gloo backend of comm.h (comm_backend_gloo, in
 * comm.c's table) over Gloo's TCP transport, the only C++ in hunter.  The caller's C store is wrapped in a
 * gloo::rendezvous::Store, and that in a PrefixStore named after the
 * generation ("g3/..."), so a re-formed group never reads the addresses
 * of the group before it.  Every Gloo exception is caught here and comes
 * back as -1 with its text in err; nothing is thrown across the C
 * boundary.  After a failure the transport is in an unknown state (Gloo's
 * docs say so for IoException), so the group refuses further work and
 * the caller destroys it and forms a new generation.
 *
 * A group of one never touches Gloo: its collectives are copies or
 * nothing.
 *
 * Gloo's TCP mesh has no authentication and no encryption: whoever
 * reaches a rank's port can join the rendezvous or feed it gradients.  So
 * it binds to the node's address only (127.0.0.1 for local nodes), never
 * to every interface: a wildcard address, or a name that resolves to one,
 * is refused before Gloo sees it.
 */
#include "config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include "lib/errf.h"
#include "lib/ipscope.h"
#include "backend/comm/comm-backend.h"

namespace {

using ms = std::chrono::milliseconds;

/* gloo::rendezvous::Store over the caller's struct comm_store. */
class comm_store_adapter : public gloo::rendezvous::Store {
public:
	comm_store_adapter(const struct comm_store &cs, int timeout_ms)
	    : cs_(cs), timeout_ms_(timeout_ms) {}

	void set(const std::string &key, const std::vector<char> &data)
	    override {
		if (cs_.set(cs_.ctx, key.c_str(), data.data(), data.size())
		    != 0)
			throw gloo::IoException("store: set of '" + key +
			    "' failed");
	}

	std::vector<char> get(const std::string &key) override {
		auto it = fetched_.find(key);
		if (it != fetched_.end()) {
			std::vector<char> v = std::move(it->second);
			fetched_.erase(it);
			return v;
		}
		return fetch(key, timeout_ms_);
	}

	void wait(const std::vector<std::string> &keys) override {
		wait(keys, ms(timeout_ms_));
	}

	/*
	 * The C store has no "exists", so waiting is a get whose value is
	 * kept for the get that Gloo makes next.
	 */
	void wait(const std::vector<std::string> &keys, const ms &timeout)
	    override {
		auto limit = timeout.count() > 0 ? timeout : ms(timeout_ms_);
		auto deadline = std::chrono::steady_clock::now() + limit;

		for (const auto &key : keys) {
			if (fetched_.count(key) != 0)
				continue;
			auto left = std::chrono::duration_cast<ms>(deadline -
			    std::chrono::steady_clock::now()).count();
			if (left < 1)
				left = 1;
			fetched_[key] = fetch(key, (int)left);
		}
	}

private:
	std::vector<char> fetch(const std::string &key, int timeout_ms) {
		void	*val = nullptr;
		size_t	 len = 0;

		if (cs_.get(cs_.ctx, key.c_str(), &val, &len, timeout_ms) != 0)
			throw gloo::IoException("store: key '" + key +
			    "' not set within " + std::to_string(timeout_ms) +
			    " ms");
		std::vector<char> v((char *)val, (char *)val + len);
		free(val);
		return v;
	}

	struct comm_store			cs_;
	int					timeout_ms_;
	std::map<std::string, std::vector<char>> fetched_;
};

} // namespace

struct comm_gloo {
	int					 rank, world, generation;
	int					 timeout_ms;
	uint32_t				 tag;
	std::string				 failed;
	std::unique_ptr<comm_store_adapter>	 store;
	std::unique_ptr<gloo::rendezvous::PrefixStore> prefix;
	std::shared_ptr<gloo::transport::Device> dev;
	std::shared_ptr<gloo::rendezvous::Context> ctx;
};

/*
 * Gloo writes to its sockets with writev(2), which raises SIGPIPE when a
 * peer has died; a worker must get "Connection closed by peer" instead of
 * dying with it.  A handler the program installed itself is left alone.
 */
static void
comm_ignore_sigpipe(void)
{
	struct sigaction	sa;

	if (sigaction(SIGPIPE, nullptr, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		sa.sa_handler = SIG_IGN;
		sa.sa_flags = 0;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGPIPE, &sa, nullptr);
	}
}

static void gloo_destroy(void *);

/* Whether the mesh may bind to cf->bind_addr: one that resolves, and to
 * no wildcard. */
static bool
gloo_bind_ok(const struct comm_config *cf, char *err, size_t errlen)
{
	enum ip_scope	 scope;
	char		 why[512];

	if (ip_scope_of(cf->bind_addr, &scope, why, sizeof why) != 0) {
		errf(err, errlen, "comm: rank %d: cannot bind the collective "
		    "mesh: %s", cf->rank, why);
		return false;
	}
	if (scope == IP_SCOPE_WILDCARD) {
		errf(err, errlen, "comm: rank %d: will not bind the collective "
		    "mesh to %s, every interface: Gloo's TCP has no "
		    "authentication; set the node's addr to its address on the "
		    "training network", cf->rank, cf->bind_addr);
		return false;
	}
	return true;
}

/* comm.c has checked the rank, the world, the timeout and the store. */
static void *
gloo_init(const struct comm_config *cf, const struct comm_store *cs,
    char *err, size_t errlen)
{
	if (cf->world > 1 && (cf->bind_addr == nullptr ||
	    *cf->bind_addr == '\0')) {
		errf(err, errlen, "comm: rank %d has no address to bind",
		    cf->rank);
		return nullptr;
	}
	if (cf->world > 1 && !gloo_bind_ok(cf, err, errlen))
		return nullptr;

	std::unique_ptr<struct comm_gloo> c(new (std::nothrow)
	    struct comm_gloo());
	if (!c) {
		errf(err, errlen, "comm: out of memory");
		return nullptr;
	}
	c->rank = cf->rank;
	c->world = cf->world;
	c->generation = cf->generation;
	c->timeout_ms = cf->timeout_ms;
	if (c->world == 1)
		return c.release();

	comm_ignore_sigpipe();
	try {
		gloo::transport::tcp::attr	attr;

		attr.hostname = cf->bind_addr;
		c->store.reset(new comm_store_adapter(*cs, c->timeout_ms));
		c->prefix.reset(new gloo::rendezvous::PrefixStore(
		    "g" + std::to_string(c->generation), *c->store));
		c->dev = gloo::transport::tcp::CreateDevice(attr);
		c->ctx = std::make_shared<gloo::rendezvous::Context>(c->rank,
		    c->world);
		c->ctx->setTimeout(ms(c->timeout_ms));
		c->ctx->connectFullMesh(*c->prefix, c->dev);
	} catch (const std::exception &e) {
		errf(err, errlen, "rendezvous of rank %d of %d "
		    "(generation %d, %s): %s", cf->rank, cf->world,
		    cf->generation, cf->bind_addr, e.what());
		gloo_destroy(c.release());
		return nullptr;
	} catch (...) {
		errf(err, errlen, "rendezvous of rank %d of %d "
		    "(generation %d, %s): unknown exception", cf->rank,
		    cf->world, cf->generation, cf->bind_addr);
		gloo_destroy(c.release());
		return nullptr;
	}
	return c.release();
}

/*
 * Run one collective: refuse if the group failed before, otherwise catch
 * whatever Gloo throws, keep it as the group's failure and report it
 * after what (e.g. "allreduce of 4194304 floats").
 */
template <typename F>
static int
comm_run(struct comm_gloo *c, const std::string &what, char *err, size_t errlen,
    F fn)
{
	if (!c->failed.empty()) {
		errf(err, errlen, "%s: group failed earlier (%s)",
		    what.c_str(), c->failed.c_str());
		return -1;
	}
	try {
		fn(c->tag++);
		return 0;
	} catch (const std::exception &e) {
		c->failed = e.what();
	} catch (...) {
		c->failed = "unknown exception";
	}
	errf(err, errlen, "%s: %s", what.c_str(), c->failed.c_str());
	return -1;
}

static int
gloo_allreduce_f32(void *g, float *buf, size_t n, char *err, size_t errlen)
{
	struct comm_gloo	*c = (struct comm_gloo *)g;

	if (c->world == 1 || n == 0)
		return 0;
	return comm_run(c, "allreduce of " + std::to_string(n) + " floats",
	    err, errlen, [&](uint32_t tag) {
		gloo::AllreduceOptions	opts(c->ctx);
		void (*fn)(void *, const void *, const void *, size_t) =
		    &gloo::sum<float>;

		opts.setOutput(buf, n);
		opts.setReduceFunction(fn);
		opts.setTag(tag);
		opts.setTimeout(ms(c->timeout_ms));
		gloo::allreduce(opts);
	});
}

static int
gloo_allgatherv(void *g, const void *in, void *out, const size_t *lens,
    char *err, size_t errlen)
{
	struct comm_gloo	*c = (struct comm_gloo *)g;
	size_t			 total = 0, off = 0;

	for (int i = 0; i < c->world; i++) {
		if (i < c->rank)
			off += lens[i];
		total += lens[i];
	}
	if (c->world == 1) {
		if (lens[0] != 0 && in != out)
			memmove(out, in, lens[0]);
		return 0;
	}
	if (total == 0)
		return 0;
	return comm_run(c, "allgatherv of " + std::to_string(total) +
	    " bytes", err, errlen, [&](uint32_t tag) {
		gloo::AllgathervOptions	opts(c->ctx);
		std::vector<size_t>	elements(lens, lens + c->world);
		uint8_t			*o = (uint8_t *)out;

		/* Without an input Gloo gathers in place from out. */
		if (lens[c->rank] != 0 && in != o + off)
			opts.setInput((uint8_t *)in, lens[c->rank]);
		opts.setOutput(o, elements);
		opts.setTag(tag);
		opts.setTimeout(ms(c->timeout_ms));
		gloo::allgatherv(opts);
	});
}

/* comm.c has checked that root is in the world. */
static int
gloo_broadcast(void *g, void *buf, size_t len, int root, char *err,
    size_t errlen)
{
	struct comm_gloo	*c = (struct comm_gloo *)g;

	if (c->world == 1 || len == 0)
		return 0;
	return comm_run(c, "broadcast of " + std::to_string(len) +
	    " bytes from rank " + std::to_string(root), err, errlen,
	    [&](uint32_t tag) {
		gloo::BroadcastOptions	opts(c->ctx);

		opts.setOutput((uint8_t *)buf, len);
		opts.setRoot(root);
		opts.setTag(tag);
		opts.setTimeout(ms(c->timeout_ms));
		gloo::broadcast(opts);
	});
}

static int
gloo_barrier(void *g, char *err, size_t errlen)
{
	struct comm_gloo	*c = (struct comm_gloo *)g;

	if (c->world == 1)
		return 0;
	return comm_run(c, "barrier", err, errlen, [&](uint32_t tag) {
		gloo::BarrierOptions	opts(c->ctx);

		opts.setTag(tag);
		opts.setTimeout(ms(c->timeout_ms));
		gloo::barrier(opts);
	});
}

/*
 * Transfers in the background (comm.h): an unbound buffer over the
 * caller's bytes, sent or received under a slot of a prefix that none of
 * Gloo's collectives use (gloo/types.h has 0x01 to 0x08), so they never
 * meet a collective's messages; Gloo's device thread moves the bytes.
 * The collectives' tag counter is left alone: ranks post different
 * numbers of transfers, and every rank must name each collective alike.
 */
#define GLOO_XFER_PREFIX	0x48

struct gloo_xfer {
	std::unique_ptr<gloo::transport::UnboundBuffer>	buf;
	bool						send;
	int						peer;
	size_t						len;
};

static int
gloo_has_xfer(void *g)
{
	return ((struct comm_gloo *)g)->world > 1;
}

/* Keep what Gloo threw as the group's failure, and say it after what. */
static void
gloo_xfer_failed(struct comm_gloo *c, const gloo_xfer &x, const char *e,
    char *err, size_t errlen)
{
	if (c->failed.empty())
		c->failed = e;
	errf(err, errlen, "%s of %zu bytes %s rank %d: %s", x.send ? "send" :
	    "receive", x.len, x.send ? "to" : "from", x.peer, e);
}

static void *
gloo_xfer_start(void *g, void *buf, size_t len, int peer, int send,
    uint32_t tag, char *err, size_t errlen)
{
	struct comm_gloo		*c = (struct comm_gloo *)g;
	std::unique_ptr<gloo_xfer>	 x(new (std::nothrow) gloo_xfer());

	if (!x) {
		errf(err, errlen, "transfer: out of memory");
		return nullptr;
	}
	x->send = send != 0;
	x->peer = peer;
	x->len = len;
	if (!c->failed.empty()) {
		errf(err, errlen, "%s of %zu bytes: group failed earlier (%s)",
		    send ? "send" : "receive", len, c->failed.c_str());
		return nullptr;
	}
	try {
		uint64_t slot = gloo::Slot::build(GLOO_XFER_PREFIX, tag);

		x->buf = c->ctx->createUnboundBuffer(buf, len);
		if (x->send)
			x->buf->send(peer, slot);
		else
			x->buf->recv(peer, slot);
	} catch (const std::exception &e) {
		gloo_xfer_failed(c, *x, e.what(), err, errlen);
		return nullptr;
	} catch (...) {
		gloo_xfer_failed(c, *x, "unknown exception", err, errlen);
		return nullptr;
	}
	return x.release();
}

/* False from a wait is an abort, which nothing here asks for: a failure
 * too.  The buffer goes after the wait either way: Gloo's pairs hold it
 * only weakly. */
static int
gloo_xfer_wait(void *g, void *p, char *err, size_t errlen)
{
	struct comm_gloo		*c = (struct comm_gloo *)g;
	std::unique_ptr<gloo_xfer>	 x((gloo_xfer *)p);
	bool				 done = false;

	try {
		done = x->send ? x->buf->waitSend(ms(c->timeout_ms)) :
		    x->buf->waitRecv(ms(c->timeout_ms));
	} catch (const std::exception &e) {
		gloo_xfer_failed(c, *x, e.what(), err, errlen);
		return -1;
	} catch (...) {
		gloo_xfer_failed(c, *x, "unknown exception", err, errlen);
		return -1;
	}
	if (!done) {
		gloo_xfer_failed(c, *x, "aborted", err, errlen);
		return -1;
	}
	return 0;
}

/*
 * The context goes first: its pairs hold the device, whose loop thread
 * stops when the last of them lets go.
 */
static void
gloo_destroy(void *g)
{
	struct comm_gloo	*c = (struct comm_gloo *)g;

	if (c == nullptr)
		return;
	c->ctx.reset();
	c->dev.reset();
	delete c;
}

extern "C" const struct comm_backend comm_backend_gloo = {
	"gloo", "host", gloo_init, gloo_allreduce_f32, gloo_allgatherv,
	gloo_broadcast, gloo_barrier, gloo_destroy, nullptr, gloo_has_xfer,
	gloo_xfer_start, gloo_xfer_wait,
};
