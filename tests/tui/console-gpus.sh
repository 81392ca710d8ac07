#!/bin/sh
# Issue 29, checks 2 and 3: a node's detail view at 80x24, its GPUs from
# the NVML TEST DOUBLE (tests/unit/fake-nvml.c, loaded by the agent
# through $HUNTER_NVML_LIBRARY, as the real libnvidia-ml.so.1 is).  The
# node runs a 4-rank program job; the double's script gives two GPUs:
# GPU 0 with every field (in NVML's units: mW, KB/s, mJ, KiB/s of NVLink)
# and two ranks' processes, GPU 1 with some calls NOT_SUPPORTED and two
# processes that are no rank's.  The detail view must fit 80x24 and show
# both GPUs and the six processes; every GPU field on it with the
# scripted value in its own unit, "-" for one NOT_SUPPORTED; the same in
# the Prometheus scrape in base units, a NOT_SUPPORTED one absent; an
# XID error the double raises is an event naming the node and the GPU,
# and counted.  The overview's heat map colours by GPU memory ('v').
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
fake="$BUILDDIR/tests/unit/libfake-nvml.so"
[ -f "$fake" ] || fail "no NVML double at $fake (make check builds it)"
export HUNTER_NVML_LIBRARY="$fake" FAKE_NVML_SCRIPT="$T/nvml.script"
export PYTHONPATH="$SRCDIR/tests/integration"
echo "devices 0" > "$FAKE_NVML_SCRIPT"
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$XDG_CONFIG_HOME/hunter"
printf 'metrics:\n  listen: 127.0.0.1:%s\n' "$port" > "$XDG_CONFIG_HOME/hunter/config.yaml"
cat > "$T/cluster.yaml" <<YEOF
cluster: gpulab
nodes:
  - {name: gpunode, host: local, rack: r1, devices: {cpu: 6}}
YEOF
cat > "$T/rank.py" <<'PYEOF'
import os, time
open(os.environ["PIDS"] + "/rank%s.pid" % os.environ["RANK"], "w").write(str(os.getpid()))
time.sleep(600)
PYEOF
cat > "$T/gj.yaml" <<YEOF
name: gpujob
resources: {ranks: 4}
program:
  argv: [$PY, $T/rank.py]
  env: {PIDS: "$T"}
  stop_grace: 2s
YEOF
# Two processes on GPU 1 that are no rank's.
sleep 600 & o1=$!
sleep 600 & o2=$!
cleanup_hooks="kill $o1 $o2 2>/dev/null; $cleanup_hooks"
TUI_W=80 TUI_H=24 tui_start "\"$HUNTER\" --cluster \"$T/cluster.yaml\" \"$T/gj.yaml\""
ranks_up() { for r in 0 1 2 3; do [ -s "$T/rank$r.pid" ] || return 1; done; }
wait_until 30 "the four ranks" ranks_up
p0=$(cat "$T/rank0.pid") p1=$(cat "$T/rank1.pid")
p2=$(cat "$T/rank2.pid") p3=$(cat "$T/rank3.pid")
cat > "$FAKE_NVML_SCRIPT" <<SEOF
devices 2
0 name NVIDIA H200
0 util 93
0 mem_util 40
0 enc 3
0 dec 1
0 fb_total 161061273600
0 fb_used 85899345920
0 fb_free 75161927680
0 temp 61
0 mem_temp 70
0 power 612345
0 sm_clock 1980
0 mem_clock 2619
0 pcie_rx 2000
0 pcie_tx 1000
0 energy 123456789
0 replays 2
0 throttle 4
0 ecc_corr 5
0 ecc_uncorr 0
0 remap_corr 1
0 remap_uncorr 0
0 remap_pending 0
0 remap_failed 0
0 nvlink_rx 2048
0 nvlink_tx 1024
0 proc $p0 32212254720
0 proc $p1 21474836480
1 name NVIDIA H200
1 util 7
1 mem_util 2
1 fb_total 161061273600
1 fb_used 12884901888
1 fb_free 148176371712
1 temp 44
1 power ERR 999
1 sm_clock 345
1 mem_clock 2619
1 pcie_rx 10
1 pcie_tx 20
1 replays 0
1 throttle 1
1 remap_corr 0
1 remap_uncorr 0
1 remap_pending 0
1 remap_failed 1
1 proc $o1 8589934592
1 proc $o2 4294967296
SEOF
need 'gpujob +running' 30 "the job is not running"
keys 2
need 'gpunode r1 up' 10 "no node panel"
sleep 3		# an NVLink rate takes two samples
keys Enter
need 'GPU1' 15 "the detail view shows no GPU 1"
# Its rates settle over two samples more.
sleep 2
screen > "$T/detail"
cat "$T/detail"
"$PY" - "$T/detail" "$p0 $p1 $p2 $p3" "$o1 $o2" <<'PYEOF' || fail "see above"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
ranks, others = sys.argv[2].split(), sys.argv[3].split()
assert len(lines) <= 25 and max(len(l) for l in lines) <= 80, "not 80x24"
text = "\n".join(lines)
g0 = next(i for i, l in enumerate(lines) if l.startswith("GPU0"))
g1 = next(i for i, l in enumerate(lines) if l.startswith("GPU1"))
hdr = next(i for i, l in enumerate(lines) if re.match(r"\s+pid job", l))
gpu0, gpu1 = " ".join(lines[g0:g1]), " ".join(lines[g1:hdr])
dash = "\u2013"
want0 = ["NVIDIA H200", "util 93%", "copy 40%", "enc 3%", "dec 1%",
         "fb 80.0G/150G", "free 70.0G", "clk 1980/2619MHz", "temp 61C",
         "hbm 70C", "power 612W", "energy 123.5kJ", "pcie \u21932.0M \u21911.0M",
         "rpl 2", "ecc 5/0", "remap 1/0", "pend 0", "fail 0", "xid 0",
         "thr sw-power"]
want1 = ["util 7%", "copy 2%", "enc " + dash, "dec " + dash, "fb 12.0G/150G",
         "free 138G", "clk 345/2619MHz", "temp 44C", "hbm " + dash,
         "power " + dash, "energy " + dash, "pcie \u219310.2k \u219120.5k",
         "rpl 0", "nvlink \u2193%s \u2191%s" % (dash, dash), "ecc %s/%s" % (dash, dash),
         "remap 0/0", "fail 1", "thr idle"]
for w in want0:
    assert w in gpu0, "GPU 0: no %r in %r" % (w, gpu0)
for w in want1:
    assert w in gpu1, "GPU 1: no %r in %r" % (w, gpu1)
# NVLink: 2048 and 1024 KiB/s as rates of the double's counters.
m = re.search(r"nvlink \u2193([\d.]+)M \u2191([\d.]+)M", gpu0)
assert m and abs(float(m.group(1)) - 2.1) <= 0.15 and \
    abs(float(m.group(2)) - 1.05) <= 0.1, "GPU 0 nvlink: %r" % gpu0
print("GPU 0: every field as scripted; GPU 1: NOT_SUPPORTED as dashes")
rows = [l for l in lines[hdr + 1:] if re.match(r"\s+\d+ ", l)]
pids = [l.split()[0] for l in rows]
assert sorted(pids) == sorted(ranks + others), "processes %s" % pids
for l in rows:
    f = l.split()
    if f[0] in ranks:
        assert f[1] == "gpujob" and f[2] == str(ranks.index(f[0])), l
        gm = {ranks[0]: "30.0G", ranks[1]: "20.0G"}.get(f[0], "0B")
        assert f[-1] == gm, "rank %s GPU memory %s, not %s" % (f[2], f[-1], gm)
    else:
        assert "(gpu" in l and f[-1] in ("8.0G", "4.0G"), l
print("6 processes: 4 ranks with their job, rank and GPU memory, 2 others")
PYEOF
"$PY" - "http://127.0.0.1:$port/metrics" <<'PYEOF' || fail "see above"
import promtext, sys, time
end = time.time() + 20
while True:
    s = promtext.parse(promtext.fetch(sys.argv[1]))
    if promtext.pick(s, "hunter_gpu_nvlink_receive_bytes_per_second", gpu=0):
        break
    assert time.time() < end, "no GPU series"
    time.sleep(0.5)
def one(name, gpu):
    v = promtext.pick(s, "hunter_gpu_" + name, node="gpunode", gpu=gpu)
    return v[0] if v else None
want = {"util_ratio": 0.93, "memory_copy_util_ratio": 0.40,
        "encoder_util_ratio": 0.03, "decoder_util_ratio": 0.01,
        "memory_total_bytes": 161061273600, "memory_used_bytes": 85899345920,
        "memory_free_bytes": 75161927680, "temperature_celsius": 61,
        "memory_temperature_celsius": 70, "power_watts": 612.345,
        "sm_clock_hertz": 1.98e9, "memory_clock_hertz": 2.619e9,
        "pcie_receive_bytes_per_second": 2048000,
        "pcie_transmit_bytes_per_second": 1024000,
        "energy_joules_total": 123456.789, "pcie_replays_total": 2,
        "clock_throttle_reasons": 4, "ecc_corrected_errors_total": 5,
        "ecc_uncorrected_errors_total": 0, "remapped_rows_correctable": 1,
        "remapped_rows_uncorrectable": 0, "row_remap_pending": 0,
        "row_remap_failure": 0, "xid_errors_total": 0}
for name, v in want.items():
    got = one(name, 0)
    assert got is not None and abs(got - v) <= 1e-9 * abs(v), \
        "hunter_gpu_%s{gpu=0} %s, scripted %s" % (name, got, v)
for name, v in (("nvlink_receive_bytes_per_second", 2097152),
                ("nvlink_transmit_bytes_per_second", 1048576)):
    got = one(name, 0)
    assert got is not None and abs(got - v) <= 0.05 * v, "%s %s" % (name, got)
for name in ("power_watts", "energy_joules_total", "encoder_util_ratio",
             "memory_temperature_celsius", "ecc_corrected_errors_total",
             "nvlink_receive_bytes_per_second", "xid_last_code"):
    assert one(name, 1) is None, "hunter_gpu_%s{gpu=1}: NOT_SUPPORTED, yet %s" \
        % (name, one(name, 1))
assert one("row_remap_failure", 1) == 1 and one("util_ratio", 1) == 0.07
info = [l for n, l, v in s if n == "hunter_gpu_info" and l.get("gpu") == "0"]
assert len(info) == 1 and info[0].get("name") == "NVIDIA H200", info
gm = sorted(v for v in (promtext.pick(s, "hunter_rank_gpu_memory_bytes", job="gpujob",
            rank=r) for r in range(4)) for v in v)
assert gm == [0, 0, 21474836480, 32212254720], gm
print("the scrape: %d GPU 0 series as scripted, GPU 1's NOT_SUPPORTED absent, "
      "ranks' GPU memory %s" % (len(want) + 2, gm))
PYEOF
# The heat map by the busiest GPU's memory: 80 of 150 GiB on GPU 0.
keys 1
need 'nodes: cpu \(v: next\)' 10 "the overview's heat map"
keys v v v
need 'nodes: gpu memory \(v: next\)' 10 "'v' does not cycle the heat map's metric"
need 'gpunode 53%' 10 "the heat map does not colour by GPU memory"
echo "xid 1 79" >> "$FAKE_NVML_SCRIPT"
need 'xid +gpunode: GPU 1 \(NVIDIA H200\): XID error 79' 20 "no XID event naming the node and the GPU"
grep -q '"kind":"xid".*"gpu":1' "$HUNTER_STATE_DIR/journal.jsonl" 2>/dev/null ||
	grep -q '"gpu":1.*"kind":"xid"' "$HUNTER_STATE_DIR/journal.jsonl" ||
	fail "the XID event is not in the journal"
keys 2		# the nodes screen keeps its detail view open
need 'xid 1 \(last 79\)' 15 "the detail view does not count the XID"
"$PY" - "http://127.0.0.1:$port/metrics" <<'PYEOF' || fail "see above"
import promtext, sys, time
end = time.time() + 10
while True:
    s = promtext.parse(promtext.fetch(sys.argv[1]))
    if promtext.pick(s, "hunter_gpu_xid_errors_total", gpu=1) == [1]:
        break
    assert time.time() < end, "xid_errors_total{gpu=1} never 1"
    time.sleep(0.5)
assert promtext.pick(s, "hunter_gpu_xid_last_code", gpu=1) == [79]
assert promtext.pick(s, "hunter_gpu_xid_errors_total", gpu=0) == [0]
print("xid_errors_total{gpu=1} 1, xid_last_code 79")
PYEOF
pass "the NVML double's every field on the detail view (80x24, 2 GPUs, 6 processes) and in the scrape; NOT_SUPPORTED is a dash and absent; an XID is an event naming node and GPU"
