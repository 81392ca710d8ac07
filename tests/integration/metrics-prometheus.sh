#!/bin/sh
# Metrics check 2: a real Prometheus server (Debian's prometheus), on
# 127.0.0.1 with a private config and data directory, scrapes hunter
# every second while a 2-rank job trains.  After the job has finished
# (hunter run waits for one more scrape before it goes), the server's
# query API returns the step series of both ranks, rising, and the last
# value of each is the job's final step.
. "$SRCDIR/tests/integration/lib.sh"
command -v prometheus >/dev/null ||
	fail "prometheus is not installed (bootstrap installs it)"
export PYTHONPATH="$SRCDIR/tests/integration"
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
hport=$(free_port)
pport=$(free_port)
mkdata "$T/data" 4000 64
small_job "$T/j.yaml" promsrv "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 12/; s/micro: 32/micro: 16/' "$T/j.yaml"
cat > "$T/prometheus.yml" <<EOF2
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1m}
scrape_configs:
  - job_name: hunter
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$hport"]}]
EOF2
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$pport" --log.level=warn > "$T/prom.log" 2>&1 &
prom=$!
cleanup_hooks="kill $prom 2>/dev/null || true"
"$PY" - "$pport" <<'PYEOF' || { tail -n 20 "$T/prom.log"; fail "prometheus did not start"; }
import sys, time, urllib.request
end = time.time() + 30
while True:
    try:
        urllib.request.urlopen("http://127.0.0.1:%s/-/ready" % sys.argv[1], timeout=2)
        break
    except Exception:
        assert time.time() < end
        time.sleep(0.2)
PYEOF
# slow=8: 8 ms a step at least, so the 1500 steps span several scrapes
# however fast the machine (an idle one ran them between two; with 3 ms
# over shared memory the first scrape of the new target came at step 1220).
"$HUNTER" run --json --metrics "127.0.0.1:$hport" --inject slow-data=4 --inject slow=8 "$T/j.yaml" \
	> "$T/out" 2>&1 || { rc=$?; tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
[ "$(jget "$T/out" summary state)" = finished ] || fail "not finished"
steps=$(jget "$T/out" summary steps)
"$PY" - "$pport" "$steps" <<'PYEOF' || { tail -n 20 "$T/prom.log"; fail "see above"; }
import json, sys, time, urllib.parse, urllib.request
port, steps = sys.argv[1], int(sys.argv[2])
def api(path, **q):
    u = "http://127.0.0.1:%s/api/v1/%s?%s" % (port, path, urllib.parse.urlencode(q))
    r = json.load(urllib.request.urlopen(u, timeout=5))
    assert r["status"] == "success", r
    return r["data"]["result"]
end = time.time() + 30
while True:
    now = time.time()
    # The target is gone: the series are stale now, so look back.
    last = api("query", query='last_over_time(hunter_rank_step{job="promsrv"}[5m])')
    got = {int(x["metric"]["rank"]): float(x["value"][1]) for x in last}
    if sorted(got) == [0, 1] and all(v == steps for v in got.values()):
        break
    assert time.time() < end, "after 30 s: %s (final step %d)" % (got, steps)
    time.sleep(0.5)
rng = api("query_range", query='hunter_rank_step{job="promsrv"}',
          start=now - 300, end=now, step=1)
for s in sorted(rng, key=lambda x: x["metric"]["rank"]):
    v = [float(p[1]) for p in s["values"]]
    print("rank %s: %d points, %g .. %g, on %s" % (s["metric"]["rank"], len(v),
          v[0], v[-1], s["metric"]["node"]))
    assert len(v) >= 3 and v == sorted(v) and v[-1] == steps, v
up = api("query", query='last_over_time(hunter_job_state{job="promsrv",state="finished"}[5m])')
print("job state finished: %s" % [x["value"][1] for x in up])
assert [x["value"][1] for x in up] == ["1"], up
print("last step of both ranks: %s = final step %d" % (got, steps))
PYEOF
pass "Prometheus scraped both ranks' step series to the final step $steps"
