#!/bin/sh
# hunter sched decide --serve (issue 25, check 1): one request a line in,
# one reply a line out, on 2 nodes x 4 slots.  A job whose speedup grows
# linearly and one whose speedup is flat: the first gets most of the
# slots, the second at least one; no node is given more ranks than its
# slots; min and max are kept; the reply fed back as the current
# allocations keeps them (no restart for nothing); malformed and hostile
# requests (bad JSON, an unknown node, negative slots, a row with ranks <
# nodes, min > max, 10^6 jobs, a line past the limit) each get an error
# line and the next request is still served.  Every policy of the table
# is asked the same.
. "$SRCDIR/tests/integration/lib.sh"
cd "$T"
"$PY" - "$HUNTER" <<'PYEOF' || fail "the protocol check above failed"
import json, subprocess, sys

hunter = sys.argv[1]
NODES = [{"name": "n0", "slots": 4, "rack": "r0"},
         {"name": "n1", "slots": 4, "rack": "r1"}]

def rows(f, top=8):
    # every (nodes, ranks) that 2 nodes of 4 can hold; 5% less a node
    out = []
    for k in range(1, top + 1):
        lo = (k + 3) // 4
        for n in range(lo, min(k, 2) + 1):
            out.append([n, k, f(k) * (1 - 0.05 * (n - lo))])
    return out

def job(name, f, lo=0, hi=8, **kw):
    j = {"name": name, "submitted": 0, "age": 600, "attained": 0,
         "restarts": 0, "min_ranks": lo, "max_ranks": hi,
         "preemptible": True, "speedup": rows(f)}
    j.update(kw)
    return j

def request(jobs, current=None):
    return {"time": 600, "interval_s": 60, "restart_s": 30,
            "nodes": NODES, "jobs": jobs, "current": current or {}}

linear = lambda k: float(k)
flat = lambda k: 1.0

lines, checks = [], []
def ask(req, check):
    lines.append(req if isinstance(req, str) else json.dumps(req))
    checks.append(check)

def slots_kept(reply):
    used = {}
    for alloc in reply["allocations"].values():
        for n in alloc:
            used[n] = used.get(n, 0) + 1
    assert all(used[n] <= 4 for n in used), used

def linflat(reply):
    a = reply["allocations"]
    slots_kept(reply)
    assert len(a["lin"]) >= 5 and len(a["flat"]) >= 1, a
    assert len(a["lin"]) + len(a["flat"]) <= 8, a

def minmax(reply):
    a = reply["allocations"]
    slots_kept(reply)
    assert 3 <= len(a["a"]) <= 5, a
    assert len(a["b"]) == 2, a

def err(word):
    def check(reply):
        assert set(reply) == {"error"}, reply
        assert word in reply["error"], reply
    return check

for policy in ("goodput", "fifo", "las"):
    lines.clear()
    checks.clear()
    ask(request([job("lin", linear, 1), job("flat", flat, 1, 1)]),
        linflat if policy == "goodput" else slots_kept)
    ask(request([job("a", linear, 3, 5), job("b", linear, 2, 2)]), minmax)
    ask("{not json", err("malformed JSON"))
    ask(request([job("a", linear, 1)], {"a": ["n0", "n7"]}),
        err("node 'n7' is not a node of the request"))
    bad = request([job("a", linear, 1)])
    bad["nodes"] = [{"name": "n0", "slots": -4, "rack": "r0"}]
    ask(bad, err("slots must be in 0..65536"))
    worse = job("a", linear, 1)
    worse["speedup"] = [[1, 1, 1.0], [3, 2, 1.5]]
    ask(request([worse]), err("ranks >= nodes"))
    ask(request([job("a", linear, 4, 2)]), err("min_ranks <= max_ranks"))
    ask('{"nodes": [], "jobs": [' +
        ",".join(['{}'] * 10 ** 6) + "]}",
        err("1000001 objects; at most 65536 nodes and 65536 jobs"))
    ask('{"nodes": [], "jobs": [], "pad": "' + "x" * (17 << 20) + '"}',
        err("longer than"))
    ask(request([job("lin", linear, 1), job("flat", flat, 1, 1)]),
        slots_kept)
    p = subprocess.run([hunter, "sched", "decide", "--serve", "--policy",
                        policy], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr)
    replies = p.stdout.splitlines()
    assert len(replies) == len(lines), (len(replies), len(lines), p.stderr)
    for r, check in zip(replies, checks):
        check(json.loads(r))
    print(policy, "served", len(replies), "lines")

    # The reply fed back as the current allocations is kept, twice over.
    req = request([job("lin", linear, 1), job("flat", flat, 1, 1),
                   job("mid", lambda k: k ** 0.5, 1)])
    first = None
    for _ in range(3):
        out = subprocess.run([hunter, "sched", "decide", "--policy",
                              policy], input=json.dumps(req) + "\n",
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out
        alloc = json.loads(out.stdout)["allocations"]
        if first is None:
            first = alloc
        assert alloc == first, (first, alloc)
        req["current"] = alloc
        req["time"] += 60
        for j in req["jobs"]:
            j["age"] += 60
            j["attained"] += 60 * len(alloc[j["name"]])
    print(policy, "keeps", first)

# One request, no --serve: exit 1 for an error reply, 0 for an allocation.
for text, rc in (("[]", 1), (json.dumps(request([job("a", linear, 1)])), 0),
                 ("", 1)):
    p = subprocess.run([hunter, "sched", "decide"], input=text,
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == rc and len(p.stdout.splitlines()) == 1, (text, p)
p = subprocess.run([hunter, "sched", "decide", "--policy", "sjf"],
                   capture_output=True, text=True, timeout=30)
assert p.returncode == 2 and "unknown policy 'sjf'" in p.stderr, p
PYEOF
pass "sched decide serves the protocol and refuses what it cannot serve"
