# frames.py: raw frames on a unix socket, for the shell tests that play a
# peer (bad-frames.sh, tests/faults/hello-first.sh): a big-endian u32
# length, then one JSON object.
import json, socket, struct

def frame(obj):
    b = json.dumps(obj).encode()
    return struct.pack(">I", len(b)) + b

def conn(path, timeout=3):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.settimeout(timeout)
    return s

def closed(s):
    """Whether the peer hung up (within the socket's timeout)."""
    try:
        return s.recv(1 << 16) == b""
    except socket.timeout:
        return False

def read_frame(s):
    """The next frame as an object; None at EOF."""
    hdr = b""
    while len(hdr) < 4:
        got = s.recv(4 - len(hdr))
        if not got:
            return None
        hdr += got
    n = struct.unpack(">I", hdr)[0]
    body = b""
    while len(body) < n:
        body += s.recv(n - len(body))
    return json.loads(body)

def launch(job, rank, world, **fields):
    """A whole launch order (backend/proto/launch.h: every field but
    program is required), with fields over the defaults."""
    o = {"t": "cmd", "cmd": "launch", "job": job, "rank": rank,
         "world": world, "generation": 0, "run": 1, "node": "n",
         "addr": "127.0.0.1", "local_rank": 0, "host_slots": 2,
         "spec_file": job + ".yaml",
         "spec_yaml": "", "checkpoint_dir": "", "resume": False,
         "timeout_ms": 10000, "stop_after_epochs": 0, "trace_steps": 0,
         "slow_data_ms": 0, "slow_sample_us": 0, "slow_ms": 0, "log_flood": 0, "leak_bytes": 0,
         "crash_at": 0}
    o.update(fields)
    return o
