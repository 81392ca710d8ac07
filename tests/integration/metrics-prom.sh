#!/bin/sh
# Metrics checks 1, 3 and 5's bad input (hunter(1), METRICS).  A 2-rank
# job trains with agents that see two fake GPUs (tests/unit/fake-nvml.c:
# the second has no temperature, power or PCIe counters):
#  1. promtool check metrics passes on a scrape taken while it trains,
#     with both ranks' series, and nothing unknown reads 0;
#  3. while the job is paused its ranks' series stay, at the paused step,
#     with hunter_rank_paused 1; while rank 1's node is silent (its agent
#     stopped) that node's series and rank 1's are gone but for their up
#     series at 0, rank 0's stay, and both come back with the node;
#  5. a malformed --metrics, one in config.yaml, and a port in use are
#     each a clear error at start.
. "$SRCDIR/tests/integration/lib.sh"
command -v promtool >/dev/null ||
	fail "promtool is not installed (Debian's prometheus; bootstrap installs it)"
export PYTHONPATH="$SRCDIR/tests/integration"
export XDG_CONFIG_HOME="$T/config"
mkdata "$T/data" 4000 64
small_job "$T/j.yaml" promjob "$T/data" "policy: {failover: {heartbeat_timeout: 90s, for: 10m}}"
sed -i 's/ranks: 1/ranks: 2, placement: spread/; s/epochs: 2/epochs: 40/; s/micro: 32/micro: 16/' "$T/j.yaml"

# 5: bad input, before anything starts.
set +e
"$HUNTER" run --metrics 127.0.0.1:99999 "$T/j.yaml" > "$T/bad1" 2>&1; rc1=$?
"$HUNTER" run --metrics example.org:80 "$T/j.yaml" > "$T/bad2" 2>&1; rc2=$?
set -e
[ "$rc1" = 1 ] && grep -q "metrics address '127.0.0.1:99999': expected ADDR:PORT" "$T/bad1" ||
	{ cat "$T/bad1"; fail "a bad port was not refused clearly"; }
[ "$rc2" = 1 ] && grep -q "metrics address 'example.org:80': expected ADDR:PORT" "$T/bad2" ||
	{ cat "$T/bad2"; fail "a host name was not refused clearly"; }
ls "$HUNTER_STATE_DIR"/nodes/*/agent.pid >/dev/null 2>&1 &&
	fail "agents were started for a run refused at start"
"$PY" - "$T/port" <<'PYEOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(60)
PYEOF
holder=$!
cleanup_hooks="kill $holder 2>/dev/null || true"
wait_until 5 "the port holder's port" test -s "$T/port"
port=$(cat "$T/port")
set +e
"$HUNTER" run --metrics "127.0.0.1:$port" "$T/j.yaml" > "$T/bad3" 2>&1; rc3=$?
set -e
kill $holder
[ "$rc3" = 1 ] && grep -q "metrics endpoint 127.0.0.1:$port: Address already in use" "$T/bad3" ||
	{ cat "$T/bad3"; fail "a port in use was not refused clearly"; }
mkdir -p "$XDG_CONFIG_HOME/hunter"
printf 'metrics:\n  listen: 127.0.0.1:port\n' > "$XDG_CONFIG_HOME/hunter/config.yaml"
set +e
"$HUNTER" run --stop-after-epochs 1 "$T/j.yaml" > "$T/bad4" 2>&1; rc4=$?
set -e
grep -q "config.yaml:2:11: metrics.listen '127.0.0.1:port': expected ADDR:PORT" "$T/bad4" ||
	{ cat "$T/bad4"; fail "a bad metrics.listen in config.yaml was not named"; }
[ "$rc4" = 0 ] || { tail -n 5 "$T/bad4"; fail "the run with a bad config exited $rc4"; }
stop_agents
rm -rf "$HUNTER_STATE_DIR"
echo "5: bad addresses refused: $(head -n 1 "$T/bad1")"
echo "5: a port in use refused: $(head -n 1 "$T/bad3")"

# The endpoint from config.yaml; the agents see the fake GPUs.
printf 'metrics: {listen: "127.0.0.1:0"}\n' > "$XDG_CONFIG_HOME/hunter/config.yaml"
HUNTER_NVML_LIBRARY="$BUILDDIR/tests/unit/libfake-nvml.so" \
	"$HUNTER" run --json --inject slow-data=4 "$T/j.yaml" > "$T/out" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
url=$("$PY" -c 'import promtext, sys; print(promtext.url_of(sys.argv[1]))' "$T/out")
case $url in http://127.0.0.1:*) ;; *) fail "not on 127.0.0.1: $url" ;; esac

"$PY" - "$url" "$T/scrape1" <<'PYEOF' || fail "see above"
import promtext, sys, time
end = time.time() + 30
while True:
    text = promtext.fetch(sys.argv[1])
    s = promtext.parse(text)
    if all(promtext.pick(s, "hunter_rank_step", rank=r) >= [10] for r in (0, 1)) and \
       promtext.pick(s, "hunter_gpu_info"):
        break
    assert time.time() < end, "no step series for both ranks in 30 s"
    time.sleep(0.3)
open(sys.argv[2], "w").write(text)
print("1: scrape of %d samples, steps %s" % (len(s), [promtext.pick(s, "hunter_rank_step", rank=r)[0] for r in (0, 1)]))
# Unknown is absent: fake GPU 1 has no temperature or power; no rank of a
# job without adaptive has a noise scale; the per-step dense bytes are
# never reported.
assert promtext.pick(s, "hunter_gpu_temperature_celsius", gpu=0)
assert not promtext.pick(s, "hunter_gpu_temperature_celsius", gpu=1)
assert not promtext.pick(s, "hunter_gpu_power_watts", gpu=1)
assert promtext.pick(s, "hunter_gpu_sm_clock_hertz", gpu=1)
assert not promtext.pick(s, "hunter_rank_gradient_noise_scale_samples")
assert not promtext.pick(s, "hunter_rank_step_dense_bytes")
for name in ("hunter_rank_loss", "hunter_rank_samples_per_second",
             "hunter_rank_step_seconds", "hunter_rank_compute_seconds",
             "hunter_rank_comm_seconds", "hunter_rank_data_wait_seconds",
             "hunter_rank_resident_memory_bytes", "hunter_rank_compression_ratio"):
    assert len(promtext.pick(s, name, job="promjob")) == 2, name
assert promtext.pick(s, "hunter_job_state", job="promjob", state="running") == [1]
assert promtext.pick(s, "hunter_job_sent_bytes_total", job="promjob")[0] > 0
PYEOF
promtool check metrics < "$T/scrape1" > "$T/lint" 2>&1 || { cat "$T/lint"; fail "promtool check metrics"; }
echo "1: promtool check metrics: ok"

# 3: paused.
"$HUNTER" ctl promjob pause > /dev/null || fail "ctl pause"
"$PY" - "$url" <<'PYEOF' || fail "see above"
import promtext, sys, time
end = time.time() + 30
while True:
    s = promtext.parse(promtext.fetch(sys.argv[1]))
    if promtext.pick(s, "hunter_rank_paused") == [1, 1]:
        break
    assert time.time() < end, "the ranks never read paused"
    time.sleep(0.3)
step = [promtext.pick(s, "hunter_rank_step", rank=r) for r in (0, 1)]
time.sleep(2)
s = promtext.parse(promtext.fetch(sys.argv[1]))
assert promtext.pick(s, "hunter_job_paused", job="promjob") == [1]
assert promtext.pick(s, "hunter_rank_up") == [1, 1]
again = [promtext.pick(s, "hunter_rank_step", rank=r) for r in (0, 1)]
assert step == again and all(len(x) == 1 for x in step), (step, again)
assert len(promtext.pick(s, "hunter_rank_loss")) == 2
print("3: paused at steps %s, 2 s later %s; loss and the rest stay" % (step, again))
PYEOF
"$HUNTER" ctl promjob resume > /dev/null || fail "ctl resume"

# 3: rank 1's node silent.
node=$("$PY" -c 'import promtext, sys
s = promtext.parse(promtext.fetch(sys.argv[1]))
print([l["node"] for n, l, v in s if n == "hunter_rank_up" and l["rank"] == "1"][0])' "$url")
other=$("$PY" -c 'import promtext, sys
s = promtext.parse(promtext.fetch(sys.argv[1]))
print([l["node"] for n, l, v in s if n == "hunter_rank_up" and l["rank"] == "0"][0])' "$url")
[ "$node" != "$other" ] || fail "both ranks on $node: spread placement expected"
apid=$(cat "$HUNTER_STATE_DIR/nodes/$node/agent.pid")
kill -STOP "$apid"
cleanup_hooks="kill -CONT $apid 2>/dev/null || true; kill -9 $run 2>/dev/null || true"
"$PY" - "$url" "$node" "$other" <<'PYEOF' || { kill -CONT "$apid"; fail "see above"; }
import promtext, sys, time
url, node, other = sys.argv[1:]
end = time.time() + 30
while True:
    s = promtext.parse(promtext.fetch(url))
    if promtext.pick(s, "hunter_node_up", node=node) == [0]:
        break
    assert time.time() < end, "node %s never read down" % node
    time.sleep(0.3)
left = [(n, l) for n, l, v in s if l.get("node") == node]
print("3: node %s silent: what is left of it: %s" % (node, sorted(set(n for n, l in left))))
assert sorted(set(n for n, l in left)) == ["hunter_node_up", "hunter_rank_up"], left
assert promtext.pick(s, "hunter_rank_up", rank=1) == [0]
assert promtext.pick(s, "hunter_rank_up", rank=0) == [1]
assert promtext.pick(s, "hunter_rank_step", rank=0)
assert not promtext.pick(s, "hunter_rank_step", rank=1)
assert promtext.pick(s, "hunter_node_cpu_util_ratio", node=other)
zero = [(n, l) for n, l, v in s if v == 0 and l.get("node") == node and not n.endswith("_up")]
assert not zero, zero
PYEOF
kill -CONT "$apid"
cleanup_hooks="kill -9 $run 2>/dev/null || true"
"$PY" - "$url" "$node" <<'PYEOF' || fail "see above"
import promtext, sys, time
url, node = sys.argv[1:]
end = time.time() + 30
while True:
    s = promtext.parse(promtext.fetch(url))
    if promtext.pick(s, "hunter_node_up", node=node) == [1] and \
       promtext.pick(s, "hunter_rank_step", rank=1):
        break
    assert time.time() < end, "node %s and rank 1 never came back" % node
    time.sleep(0.3)
print("3: node %s back, rank 1 at step %d" % (node, promtext.pick(s, "hunter_rank_step", rank=1)[0]))
PYEOF
"$HUNTER" ctl promjob stop > /dev/null || fail "ctl stop"
wait $run || true
[ "$(jget "$T/out" summary state)" = stopped ] || fail "the job did not stop"
pass "promtool on a live scrape; paused and silent-node series as documented; bad addresses refused"
