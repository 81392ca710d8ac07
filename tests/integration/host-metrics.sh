#!/bin/sh
# Issue 29, check 1: every host metric a real agent sends against a
# reading the test takes itself, with the load it makes.  One agent; the
# test is its backend (a hello on agent.sock) and reads its node frames,
# and right after each one arrives it reads /proc and /sys on its own.
# Rates are compared as totals over a window (the sum of rate x interval
# against the counter's growth between the same two frames); levels at
# each frame.  The load: a program rank (launched through the agent, as
# a program job's) burning one CPU pinned to CPU 1 with a sleeping thread
# and ten open files; a 200 MB write with fsync; a TCP transfer over a
# veth link into a network namespace shaped by tbf with a 6 kB queue,
# which drops, so the sender retransmits; pages read back through mmap
# after the page cache dropped them (major faults).  Tolerances are said
# beside each comparison.  Needs root (netns, tc).
. "$SRCDIR/tests/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for the network namespace"; exit 77; }
command -v tc > /dev/null && command -v ip > /dev/null ||
	{ echo "SKIP: iproute2 (ip, tc) is not installed"; exit 77; }
ns="hunter-hm-$$"
va="hm$$a"
vb="hm$$b"
netns_veth "$ns" "$va" "$vb" "10.79.$(( $$ % 250 ))"
# 8 Mbit/s with room for four packets: a bulk sender loses some.
tc qdisc add dev "$va" root tbf rate 8mbit burst 8kb limit 6kb

dir="$HUNTER_STATE_DIR/nodes/h1"
ckpt="$T/ckpt/hostjob"
mkdir -p "$ckpt"
head -c 3000000 /dev/zero > "$ckpt/step-000000010.safetensors"
head -c 1000 /dev/zero > "$ckpt/config.json"
# Haswell where the CPU has AVX2: the kernel the agent reports follows.
coretype=""
grep -qw avx2 /proc/cpuinfo && coretype=Haswell
OPENBLAS_CORETYPE=$coretype "$HUNTER" agent --node h1 --dir "$dir" --idle-exit 120
agent_up() { [ -S "$dir/agent.sock" ] && [ -s "$dir/agent.pid" ]; }
wait_until 5 "the agent's socket" agent_up
cat > "$T/burner.py" <<'PYEOF'
# A program rank: a thread burning CPU 1, one sleeping in 1 ms steps
# (voluntary switches), ten open files; it never speaks the protocol.
import os, threading, time
open(os.environ["PIDFILE"], "w").write(str(os.getpid()))
files = [open("/dev/null") for _ in range(10)]
def burn():
    os.sched_setaffinity(0, {int(os.environ["CPU"])})
    while True:
        pass
def nap():
    while True:
        time.sleep(0.001)
threading.Thread(target=burn, daemon=True).start()
threading.Thread(target=nap, daemon=True).start()
time.sleep(600)
PYEOF
ncpu=$(nproc)
cpu=$(( ncpu > 1 ? 1 : 0 ))
"$PY" - "$dir" "$(cat "$dir/agent.pid")" "$T" "$ckpt" "$ns" "$va" \
    "10.79.$(( $$ % 250 )).2" "$cpu" "$coretype" <<'PYEOF' || { tail -n 20 "$dir/agent.log"; fail "see above"; }
import ctypes, ctypes.util, json, mmap, os, socket, subprocess, sys, threading, time
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from frames import frame, conn, read_frame, launch
dir, apid, T, ckpt, ns, va, peer, cpu, coretype = sys.argv[1:10]
apid, cpu = int(apid), int(cpu)
bad = []

def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        bad.append(what)

def near(a, b, tol):
    return a is not None and b is not None and abs(a - b) <= tol

# --- The test's own readings of the machine ---------------------------
def cpu_lines():
    out = {}
    for l in open("/proc/stat"):
        if l.startswith("cpu") and l[3] != " ":
            f = l.split()
            out[int(f[0][3:])] = [int(x) for x in f[1:9]]
    return out

def busy(a, b):
    d = [y - x for x, y in zip(a, b)]
    tot = sum(d)
    return 100.0 * (tot - d[3] - d[4]) / tot if tot else None

def net_dev():
    out = {}
    for l in open("/proc/net/dev").readlines()[2:]:
        name, rest = l.split(":", 1)
        c = [int(x) for x in rest.split()]
        out[name.strip()] = [c[0], c[8], c[1], c[9], c[2], c[10], c[3], c[11]]
    return out

def snmp_retrans():
    rows = [l.split() for l in open("/proc/net/snmp") if l.startswith("Tcp:")]
    return int(rows[1][rows[0].index("RetransSegs")])

def diskstats():
    out = {}
    for l in open("/proc/diskstats"):
        f = l.split()
        out[f[2]] = [int(f[5]) * 512, int(f[9]) * 512, int(f[12])]
    return out

def vmstat(key):
    for l in open("/proc/vmstat"):
        k, v = l.split()
        if k == key:
            return int(v)

def psi():
    out = {}
    for r in ("cpu", "memory", "io"):
        for l in open("/proc/pressure/" + r):
            kind, rest = l.split(" ", 1)
            out[r + " " + kind] = float(rest.split()[0].split("=")[1])
    return out

def meminfo():
    return {l.split(":")[0]: int(l.split()[1]) * 1024 for l in open("/proc/meminfo")}

def mhz():
    return [float(l.split(":")[1]) for l in open("/proc/cpuinfo")
            if l.startswith("cpu MHz")]

def task_ctx(pid):
    vol = inv = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            for l in open("/proc/%d/task/%s/status" % (pid, t)):
                if l.startswith("voluntary_ctxt_switches:"):
                    vol += int(l.split()[1])
                elif l.startswith("nonvoluntary_ctxt_switches:"):
                    inv += int(l.split()[1])
        except OSError:
            pass
    return vol, inv

def proc_ticks(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])

def reading(rank_pid):
    r = {"t": time.time(), "mono": time.monotonic(), "cpu": cpu_lines(),
         "net": net_dev(), "retr": snmp_retrans(), "disk": diskstats(),
         "majflt": vmstat("pgmajfault"), "psi": psi(), "mem": meminfo(),
         "mhz": mhz(), "agent_fds": len(os.listdir("/proc/%d/fd" % apid)),
         "state": os.statvfs(dir), "ckpt": os.statvfs(ckpt)}
    if rank_pid:
        r["rank"] = {"threads": len(os.listdir("/proc/%d/task" % rank_pid)),
                     "fds": len(os.listdir("/proc/%d/fd" % rank_pid)),
                     "ctx": task_ctx(rank_pid), "ticks": proc_ticks(rank_pid)}
    return r

# --- The agent's frames -----------------------------------------------
b = conn(dir + "/agent.sock", 10)
b.sendall(frame({"t": "hello", "role": "backend", "proto": 1}))
hello = read_frame(b)
assert hello["t"] == "hello", hello
blas = hello.get("blas") or {}
lib = ctypes.CDLL(ctypes.util.find_library("openblas"))
lib.openblas_get_corename.restype = ctypes.c_char_p
lib.openblas_get_config.restype = ctypes.c_char_p
print("agent: BLAS %s" % blas)
check(blas.get("library") == " ".join(lib.openblas_get_config().decode().split()[:2]),
      "BLAS library: the agent's %r, OpenBLAS says %r" % (blas.get("library"),
      lib.openblas_get_config().decode()))
if coretype:
    check(blas.get("coretype") == coretype and blas.get("kernel") == coretype,
          "OPENBLAS_CORETYPE=%s: kernel %r, coretype %r" % (coretype,
          blas.get("kernel"), blas.get("coretype")))
else:
    check(blas.get("kernel") == lib.openblas_get_corename().decode(),
          "BLAS kernel %r, OpenBLAS here %r" % (blas.get("kernel"),
          lib.openblas_get_corename().decode()))
pidfile = T + "/rank.pid"
b.sendall(frame(launch("hostjob", 0, 1, run=3, node="h1", checkpoint_dir=ckpt,
    program={"argv": [sys.executable, T + "/burner.py"],
             "env": {"PIDFILE": pidfile, "CPU": str(cpu)},
             "dir": T, "stop_grace_s": 1})))
deadline = time.monotonic() + 20
while not (os.path.exists(pidfile) and os.path.getsize(pidfile) > 0):
    assert time.monotonic() < deadline, "the program rank never started"
    time.sleep(0.1)
rank_pid = int(open(pidfile).read())

def next_node_frame():
    while True:
        m = read_frame(b)
        assert m is not None, "the agent closed the link"
        if m.get("t") == "metrics" and m.get("scope") == "node":
            return m

def window(seconds, load=None):
    """Frames and readings for seconds, load running in a thread."""
    frames, reads = [next_node_frame()], []
    reads.append(reading(rank_pid))
    th = threading.Thread(target=load, daemon=True) if load else None
    if th:
        th.start()
    end = time.monotonic() + seconds
    while time.monotonic() < end or (th and th.is_alive()):
        frames.append(next_node_frame())
        reads.append(reading(rank_pid))
    return frames, reads

def total(frames, get):
    """The sum of rate x interval over frames[1:] (None if one is unknown)."""
    s = 0.0
    for a, c in zip(frames, frames[1:]):
        v = get(c)
        if v is None:
            return None
        s += v * (c["time"] - a["time"])
    return s

def iface(m, name):
    for i in m.get("ifaces", []):
        if i["name"] == name:
            return i

def disk(m, name):
    for d in m.get("disks", []):
        if d["name"] == name:
            return d

def rank_of(m):
    for r in m.get("ranks", []):
        if r["pid"] == rank_pid:
            return r
    return {}

# Warm up: the first frames have no rates, the rank's first none either.
for _ in range(3):
    next_node_frame()

# --- A steady window: levels at each frame, the CPUs, the rank -----------
frames, reads = window(5)
print("steady: %d frames over %.1f s" % (len(frames), frames[-1]["time"] -
      frames[0]["time"]))
core_diffs, per_core = [], []
for k in range(1, len(frames)):
    m, r0, r1 = frames[k], reads[k - 1], reads[k]
    util = m["cores"]["util"]
    if k == 1:
        check(len(util) == len(r1["cpu"]), "cores: %d listed, /proc/stat "
              "has %d" % (len(util), len(r1["cpu"])))
    for c, u in enumerate(util):
        t = busy(r0["cpu"][c], r1["cpu"][c])
        if u is not None and t is not None:
            core_diffs.append(abs(u - t))
    per_core.append(util[cpu])
core_diffs.sort()
# The agent's second and the test's second are the same but for the
# milliseconds between its read and ours: 10 points at the median.
check(core_diffs and core_diffs[len(core_diffs) // 2] <= 10,
      "per-CPU busy against /proc/stat: median difference %.1f points"
      % (core_diffs[len(core_diffs) // 2] if core_diffs else -1))
check(min(per_core) >= 80, "CPU %d, the burner's: %s%% busy each second"
      % (cpu, [round(x) for x in per_core]))
m, r = frames[-1], reads[-1]
check(m["cpus"] == len(r["cpu"]), "cpus %s, /proc/stat %d" % (m["cpus"], len(r["cpu"])))
want = sum(r["mhz"]) / len(r["mhz"]) if r["mhz"] else None
check(want is None and m["cpu_freq"] is None or near(m["cpu_freq"], want, 0.05 * (want or 1)),
      "clock %s MHz, /proc/cpuinfo's mean %s (5%%)" % (m["cpu_freq"], want))
thr = os.path.exists("/sys/devices/system/cpu/cpu0/thermal_throttle")
check((m["cpu_throttle"] is not None) == thr, "throttling %s where the "
      "kernel %s thermal_throttle" % (m["cpu_throttle"], "has" if thr else "has no"))
for key, row in (("cpu some", "psi_cpu"), ("cpu full", "psi_cpu_full"),
                 ("memory some", "psi_mem"), ("memory full", "psi_mem_full"),
                 ("io some", "psi_io"), ("io full", "psi_io_full")):
    # avg10 moves every 2 s: read a few ms apart, 3 points at most.
    check(near(m[row], r["psi"][key], 3), "%s %s, /proc/pressure %s (3 points)"
          % (row, m[row], r["psi"][key]))
mi, gib = r["mem"], 1 << 30
tol = 0.02 * mi["MemTotal"]   # others allocate between the two reads: 2%
check(near(m["mem_available"], mi["MemAvailable"], tol),
      "available %.2f GiB, meminfo %.2f GiB" % (m["mem_available"] / gib, mi["MemAvailable"] / gib))
check(near(m["mem_used"], mi["MemTotal"] - mi["MemAvailable"], tol),
      "used %.2f GiB, meminfo %.2f GiB" % (m["mem_used"] / gib, (mi["MemTotal"] - mi["MemAvailable"]) / gib))
cache = mi["Buffers"] + mi["Cached"] + mi["SReclaimable"]
check(near(m["mem_cache"], cache, tol), "cache %.2f GiB, meminfo buff/cache %.2f GiB"
      % (m["mem_cache"] / gib, cache / gib))
for key, st in (("state", r["state"]), ("ckpt", r["ckpt"])):
    size, free = st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize
    check(m[key + "_size"] == size and near(m[key + "_free"], free, 0.01 * size),
          "%s fs: %.1f of %.1f GiB free, statvfs %.1f of %.1f (1%%)" % (key,
          m[key + "_free"] / gib, m[key + "_size"] / gib, free / gib, size / gib))
    check(m[key + "_inodes"] == st.f_files and near(m[key + "_inodes_free"], st.f_favail, 1000),
          "%s fs: %s of %s inodes free, statvfs %d of %d" % (key, m[key + "_inodes_free"],
          m[key + "_inodes"], st.f_favail, st.f_files))
check(m["ckpt_bytes"] == 3000000, "a checkpoint %s bytes: the largest file of %s"
      % (m["ckpt_bytes"], ckpt))
check(near(m["agent_fds"], r["agent_fds"], 2), "agent fds %s, /proc/%d/fd %d (2)"
      % (m["agent_fds"], apid, r["agent_fds"]))
rk = rank_of(m)
check(rk.get("threads") == r["rank"]["threads"], "rank threads %s, /proc/%d/task %d"
      % (rk.get("threads"), rank_pid, r["rank"]["threads"]))
check(near(rk.get("fds"), r["rank"]["fds"], 1), "rank fds %s, /proc/%d/fd %d (1)"
      % (rk.get("fds"), rank_pid, r["rank"]["fds"]))
tck = os.sysconf("SC_CLK_TCK")
span = reads[-1]["mono"] - reads[0]["mono"]
cpu_t = 100.0 * (reads[-1]["rank"]["ticks"] - reads[0]["rank"]["ticks"]) / tck / span
cpu_a = total(frames, lambda f: rank_of(f).get("proc_cpu"))
cpu_a = cpu_a / (frames[-1]["time"] - frames[0]["time"]) if cpu_a is not None else None
check(near(cpu_a, cpu_t, 15), "rank CPU %.0f%% of a core, /proc/%d/stat %.0f%% (15 points)"
      % (cpu_a or -1, rank_pid, cpu_t))
for i, key in enumerate(("ctx_voluntary", "ctx_involuntary")):
    got = total(frames, lambda f: rank_of(f).get(key))
    want = reads[-1]["rank"]["ctx"][i] - reads[0]["rank"]["ctx"][i]
    check(got is not None and abs(got - want) <= 0.15 * want + 50,
          "rank %s: %s over the window, its threads' status %d (15%% + 50)"
          % (key, got if got is None else round(got), want))
check((total(frames, lambda f: rank_of(f).get("ctx_voluntary")) or 0) > 500,
      "the sleeping thread switches voluntarily")

# --- A 200 MB write with fsync: the disk and its share of busy time --------
def write_big():
    with open(T + "/big", "wb") as f:
        for _ in range(200):
            f.write(b"\0" * (1 << 20))
        f.flush()
        os.fsync(f.fileno())
    time.sleep(1.5)
frames, reads = window(1, write_big)
dev = os.stat(T).st_dev
name = open("/sys/dev/block/%d:%d/uevent" % (os.major(dev), os.minor(dev))).read()
name = [l.split("=")[1] for l in name.split() if l.startswith("DEVNAME=")][0]
if not os.path.exists("/sys/block/" + name):       # a partition: its disk
    name = os.path.basename(os.path.dirname(os.path.realpath("/sys/class/block/" + name)))
d0, d1 = reads[0]["disk"][name], reads[-1]["disk"][name]
for i, (row, what) in enumerate((("read", "read"), ("write", "written"))):
    got = total(frames, lambda f: (disk(f, name) or {}).get(row))
    want = d1[i] - d0[i]
    # Others write to the same disk: the same counter, 5% + 1 MiB.
    check(got is not None and abs(got - want) <= 0.05 * want + (1 << 20),
          "disk %s %s: %.1f MiB over the window, /proc/diskstats %.1f MiB"
          % (name, what, (got or 0) / (1 << 20), want / (1 << 20)))
check(d1[1] - d0[1] >= 200 << 20, "the 200 MB write moved disk %s (%.0f MiB written)"
      % (name, (d1[1] - d0[1]) / (1 << 20)))
got = total(frames, lambda f: (disk(f, name) or {}).get("util"))
want = 100.0 * (d1[2] - d0[2]) / 1000
check(got is not None and abs(got - want) <= 10 * (frames[-1]["time"] - frames[0]["time"]),
      "disk %s busy %.1f%%-seconds, io_ticks %.1f (10 points a second)" % (name, got or -1, want))
got = total(frames, lambda f: f["disk_write"])
want = sum(v[1] - reads[0]["disk"].get(k, v)[1] for k, v in reads[-1]["disk"].items()
           if os.path.exists("/sys/block/" + k) and not k.startswith(("loop", "ram", "zram", "dm-", "md")))
check(abs(got - want) <= 0.05 * want + (1 << 20), "all disks written: %.1f MiB, "
      "diskstats %.1f MiB" % (got / (1 << 20), want / (1 << 20)))

# --- TCP over the lossy link: the interface, and retransmits ---------------
srv = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c",
    "import socket\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
    "s.bind((%r,5999));s.listen(1);c,_=s.accept()\nwhile c.recv(65536):pass" % peer])
time.sleep(0.5)
def send():
    for _ in range(50):
        try:
            s = socket.create_connection((peer, 5999), 2)
            break
        except OSError:
            time.sleep(0.1)
    s.settimeout(None)     # 8 Mbit/s: the 2 MiB take two seconds and more
    s.sendall(b"x" * (2 << 20))
    s.close()
    time.sleep(1.5)
frames, reads = window(1, send)
srv.wait(10)
names = ("rx", "tx", "rx_packets", "tx_packets", "rx_errors", "tx_errors",
         "rx_drops", "tx_drops")
listed = iface(frames[-1], va) is not None
check(listed or len(frames[-1]["ifaces"]) == 32, "interface %s listed" % va)
n0, n1 = reads[0]["net"][va], reads[-1]["net"][va]
for i, row in enumerate(names):
    got = total(frames, lambda f: (iface(f, va) or {}).get(row))
    want = n1[i] - n0[i]
    # Only our transfer uses it: 2% + 4 packets' worth (ARP, the edges).
    slack = 6000 if i < 2 else 4
    check(got is not None and abs(got - want) <= 0.02 * want + slack,
          "%s %s: %s over the window, /proc/net/dev %d" % (va, row,
          got if got is None else "%.0f" % got, want))
check(n1[1] - n0[1] >= 2 << 20, "the transfer moved %s (%d bytes sent)" % (va, n1[1] - n0[1]))
got = total(frames, lambda f: f["tcp_retrans"])
want = reads[-1]["retr"] - reads[0]["retr"]
check(abs(got - want) <= 0.05 * want + 5, "TCP retransmits: %.0f over the window, "
      "/proc/net/snmp %d (5%% + 5)" % (got, want))
check(want >= 20, "the lossy link made %d retransmits" % want)
for row, cols in (("net_rx", (0,)), ("net_tx", (1,)), ("net_errors", (4, 5)), ("net_drops", (6, 7))):
    got = total(frames, lambda f: f[row])
    want = sum(v[c] - reads[0]["net"].get(k, v)[c] for k, v in reads[-1]["net"].items()
               if k != "lo" for c in cols)
    check(abs(got - want) <= 0.05 * want + (60000 if row in ("net_rx", "net_tx") else 5),
          "%s: %.0f over the window, /proc/net/dev %d" % (row, got, want))

# --- Major faults: a file's pages dropped from the cache, then mapped -----
with open(T + "/big", "rb") as f:
    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
def fault():
    with open(T + "/big", "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        mm.madvise(mmap.MADV_RANDOM)
        for off in range(0, len(mm), 4096 * 16):
            mm[off]
        mm.close()
    time.sleep(1.5)
frames, reads = window(1, fault)
got = total(frames, lambda f: f["major_faults"])
want = reads[-1]["majflt"] - reads[0]["majflt"]
check(abs(got - want) <= 0.05 * want + 20, "major faults: %.0f over the window, "
      "/proc/vmstat %d (5%% + 20)" % (got, want))
check(want >= 100, "reading through mmap made %d major faults" % want)
assert not bad, "%d checks failed: %s" % (len(bad), "; ".join(bad))
PYEOF
pass "every host metric agrees with the test's own readings"
