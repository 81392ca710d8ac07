#!/usr/bin/env python3
"""Write the seed corpora of fuzz-spec, fuzz-idx, fuzz-checkpoint,
fuzz-theme and fuzz-policy into corpus/NAME/ (fuzz-frame has
mkcorpus-frame.py).

Inputs named valid-* must be accepted by the code under test and bad-*
refused: replay-lib.sh checks that in make check.  The layout of each
input (selector bytes, then the file) is described at the top of the
target's .c file.  Standard library only; rerun after changing a format,
and commit what changed.

usage: mkcorpus.py [NAME...]     (default: all five)
"""
import gzip
import io
import json
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def write(corpus, inputs):
    d = os.path.join(HERE, "corpus", corpus)
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        os.unlink(os.path.join(d, name))
    for name, data in inputs.items():
        assert name.startswith(("valid-", "bad-")), name
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def read(rel):
    with open(os.path.join(TOP, rel), "rb") as f:
        return f.read()


# ---- spec: byte 0 even = job, odd = cluster -------------------------------
def spec():
    job, cluster = b"\0", b"\1"
    inputs = {}
    for d, sel in (("examples/jobs", job), ("examples/clusters", cluster)):
        for name in sorted(os.listdir(os.path.join(TOP, d))):
            if name.endswith(".yaml"):
                inputs["valid-" + name[:-5]] = sel + read(os.path.join(d, name))
    small = b"""name: small
resources: {ranks: 2, placement: pack}
model: {type: mlp, hidden: [32]}
data: {path: /tmp/data, prefetch: 4}
train:
  epochs: 2
  seed: 7
  optimizer: {type: adamw, beta1: 0.9, beta2: 0.999, eps: 1e-8}
  lr: {base: 0.05, schedule: constant, warmup_steps: 0}
  batch: {global: 32, micro: 16}
compression: {method: topk, density: 0.01, error_feedback: false}
checkpoint: {every_steps: 8, keep: 2, dir: /tmp/ck}
policy:
  failover: {low_util: 50%, for: 1m, heartbeat_timeout: 500ms}
  leak: {check_every: 10, growth_limit: 1GiB}
"""
    inputs["valid-job-full"] = job + small
    inputs["valid-job-minimal"] = job + b"name: x\n"
    inputs["valid-job-cnn"] = job + b"name: c\nmodel: {type: cnn, channels: [4, 8]}\n"
    inputs["valid-cluster-ssh"] = cluster + b"""cluster: lab
ssh: {config: /dev/null, identity: /tmp/id, known_hosts: /tmp/kh}
nodes:
  - {name: n0, host: 127.0.0.1, port: 2222, user: u, state_dir: ~/st, addr: 10.0.0.1}
  - {name: n1, host: "::1", rack: r2, devices: {cpu: 0, cuda: 8}, spare: true}
"""
    inputs["valid-cluster-simulate"] = cluster + b"simulate: 64\nracks: 8\n"
    bad = {
        "bad-job-empty": job,
        "bad-job-no-name": job + b"resources: {ranks: 2}\n",
        "bad-job-unknown-key": job + b"name: x\ntrian: {epochs: 1}\n",
        "bad-job-tab": job + b"name: x\nresources:\n\tranks: 2\n",
        "bad-job-alias": job + b"name: &a x\npriority: *a\n",
        "bad-job-duplicate": job + b"name: x\nname: y\n",
        "bad-job-two-docs": job + b"name: x\n---\nname: y\n",
        "bad-job-deep": job + b"name: x\nz: " + b"[" * 200 + b"]" * 200 + b"\n",
        "bad-job-not-utf8": job + b"name: \xff\xfe\n",
        "bad-job-nul": job + b"name: x\0y\n",
        "bad-job-sequence": job + b"- name: x\n",
        "bad-job-units": job + b"name: x\nresources: {memory_per_rank: 2XiB}\npolicy: {failover: {heartbeat_timeout: -3s, low_util: 150%}}\n",
        "bad-job-ranges": job + b"name: x\nresources: {ranks: 0}\ntrain: {epochs: -1, lr: {base: 0}}\ncompression: {density: 2}\n",
        "bad-job-micro": job + b"name: x\nresources: {ranks: 3}\ntrain: {batch: {global: 32, micro: 16}}\n",
        "bad-job-overflow": job + b"name: x\ntrain: {seed: 99999999999999999999999, epochs: 9999999999999}\n",
        "bad-job-name-meta": job + b"name: \"x$(touch /tmp/X)\"\n",
        "bad-job-path-meta": job + b"name: x\ndata: {path: \"/tmp/$(touch X)\"}\ncheckpoint: {dir: \"/tmp/`id`\"}\n",
        "bad-job-hidden-many": job + b"name: x\nmodel: {hidden: [1,2,3,4,5,6,7,8,9,10]}\n",
        "bad-job-long-name": job + b"name: " + b"a" * 300 + b"\n",
        "bad-job-key-map": job + b"name: x\n? {a: 1}\n: 2\n",
        "bad-cluster-empty-nodes": cluster + b"cluster: c\nnodes: []\n",
        "bad-cluster-no-host": cluster + b"cluster: c\nnodes:\n  - {name: n0}\n",
        "bad-cluster-host-meta": cluster + b"cluster: c\nnodes:\n  - {name: n0, host: \"h;touch X\"}\n",
        "bad-cluster-dup-node": cluster + b"cluster: c\nnodes:\n  - {name: a, host: h}\n  - {name: a, host: h}\n",
        "bad-cluster-port": cluster + b"cluster: c\nnodes:\n  - {name: a, host: h, port: 70000}\n",
        "bad-cluster-racks": cluster + b"simulate: 2\nracks: 5\n",
        "bad-cluster-nodes-map": cluster + b"cluster: c\nnodes: {name: a}\n",
    }
    inputs.update(bad)
    write("spec", inputs)


# ---- idx: flags byte, u16 BE split, images bytes, labels bytes ------------
def idx_file(magic, dims, payload):
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload


def idx_input(images, labels, flags=0):
    return bytes([flags]) + struct.pack(">H", len(images)) + images + labels


def gz(b):
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as f:
        f.write(b)
    return out.getvalue()


def idx():
    n, r, c = 3, 4, 5
    pix = bytes((i * 37) % 256 for i in range(n * r * c))
    imgs = idx_file(0x803, (n, r, c), pix)
    labs = idx_file(0x801, (n,), bytes([0, 9, 4]))
    inputs = {
        "valid-raw": idx_input(imgs, labs),
        "valid-gz-by-target": idx_input(imgs, labs, flags=3),
        "valid-gz-in-input": idx_input(gz(imgs), gz(labs)),
        "valid-one": idx_input(idx_file(0x803, (1, 1, 1), b"\xff"), idx_file(0x801, (1,), b"\5")),
        "valid-28x28": idx_input(idx_file(0x803, (2, 28, 28), bytes(range(256)) * 6 + bytes(32)),
                                 idx_file(0x801, (2,), b"\1\2")),
        "bad-empty": idx_input(b"", b""),
        "bad-magic": idx_input(idx_file(0x801, (n, r, c), pix), labs),
        "bad-label-magic": idx_input(imgs, idx_file(0x803, (n,), bytes([0, 1, 2]))),
        "bad-header-short": idx_input(imgs[:10], labs),
        "bad-truncated-images": idx_input(imgs[:-1], labs),
        "bad-truncated-labels": idx_input(imgs, labs[:-1]),
        "bad-extra-byte": idx_input(imgs + b"\0", labs),
        "bad-label-10": idx_input(imgs, idx_file(0x801, (n,), bytes([0, 10, 1]))),
        "bad-count-mismatch": idx_input(imgs, idx_file(0x801, (2,), bytes([0, 1]))),
        "bad-zero-dim": idx_input(idx_file(0x803, (n, 0, c), b""), labs),
        "bad-side-too-big": idx_input(idx_file(0x803, (1, 1025, 1), b"\0" * 1025), idx_file(0x801, (1,), b"\0")),
        "bad-samples-too-many": idx_input(idx_file(0x803, ((1 << 24) + 1, 1, 1), b""), labs),
        "bad-gz-corrupt": idx_input(gz(imgs)[:20] + b"\0" * 20 + gz(imgs)[40:], labs),
        "bad-gz-truncated": idx_input(gz(imgs)[:-12], labs),
        # a plausible but short header: 1000 x 28 x 28 claimed, 10 bytes given
        "bad-claims-more": idx_input(idx_file(0x803, (1000, 28, 28), b"\0" * 10), idx_file(0x801, (1000,), b"")),
    }
    write("idx", inputs)


# ---- checkpoint: byte 0 even = sgd, odd = adamw; then the file ------------
# The model of fuzz-checkpoint.c: mlp 1x2x2 -> [3] -> 2.
TENSORS = [("fc1.weight", [3, 4]), ("fc1.bias", [3]), ("fc2.weight", [2, 3]), ("fc2.bias", [2])]
NPARAMS = sum(s[0] * (s[1] if len(s) > 1 else 1) for _, s in TENSORS)  # 23


def ckpt(optim, step=16, tweak=None, data_tweak=None, blobs=()):
    """blobs: (name, bytes) pairs stored as "extra.NAME" U8 tensors after
    the floats, as the compressor state is."""
    parts = ["", "optim.m."] + (["optim.v."] if optim == "adamw" else [])
    data = b"".join(struct.pack("<%df" % NPARAMS, *[(i * 0.125 - 1.0) * (p + 1) for i in range(NPARAMS)])
                    for p in range(len(parts)))
    floats = len(data)
    data += b"".join(b for _, b in blobs)
    meta = {"format": "hunter/2", "job": "fuzz", "model": "mlp", "optimizer": optim,
            "step": str(step), "epoch": "1", "step_in_epoch": "3", "seed": "7",
            "world": "2", "micro": "16", "accum": "1", "global": "32", "samples": "64",
            "adam_t": str(step if optim == "adamw" else 0), "crc32": "00000000"}
    hdr = {"__metadata__": meta}
    off = 0
    for prefix in parts:
        for name, shape in TENSORS:
            n = 1
            for s in shape:
                n *= s
            hdr[prefix + name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + 4 * n]}
            off += 4 * n
    assert off == floats
    for name, b in blobs:
        hdr["extra." + name] = {"dtype": "U8", "shape": [len(b)], "data_offsets": [off, off + len(b)]}
        off += len(b)
    if tweak:
        tweak(hdr)
    text = json.dumps(hdr, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return sign(struct.pack("<Q", len(text)) + text + data, data_tweak)


def sign(blob, data_tweak=None, after=None):
    """The file's crc32 (checkpoint-file.c): CRC-32 of the whole file
    with the eight digits of "crc32":"..." read as zeros, written into
    them.  data_tweak changes the data after the hash, after(blob) the
    whole file."""
    key = b'"crc32":"'
    at = blob.find(key)
    if at >= 0 and blob[at + len(key):at + len(key) + 8] == b"00000000":
        at += len(key)
        crc = b"%08x" % zlib.crc32(blob)
        blob = blob[:at] + crc + blob[at + 8:]
    if data_tweak:
        hlen = struct.unpack("<Q", blob[:8])[0]
        blob = blob[:8 + hlen] + data_tweak(blob[8 + hlen:])
    return after(blob) if after else blob


def checkpoint():
    sgd, adam = b"\0", b"\1"
    good = ckpt("sgd")
    hlen = struct.unpack("<Q", good[:8])[0]

    def flip(b, i):
        b = bytearray(b)
        b[i] ^= 0xFF
        return bytes(b)

    def set_(path, value):
        def f(h):
            o = h
            for k in path[:-1]:
                o = o[k]
            o[path[-1]] = value
        return f

    def drop(key):
        return lambda h: h.pop(key)

    def edit(b, old, new):
        assert b.count(old) == 1 and len(old) == len(new)
        return b.replace(old, new)

    inputs = {
        "valid-sgd": sgd + good,
        "valid-adamw": adam + ckpt("adamw", step=40),
        "valid-step0": sgd + ckpt("sgd", step=0),
        "bad-format-old": sgd + ckpt("sgd", tweak=set_(["__metadata__", "format"], "hunter/1")),
        "bad-header-edited": sgd + edit(good, b'"step_in_epoch":"3"', b'"step_in_epoch":"9"'),
        "bad-crc-twice": sgd + ckpt("sgd", tweak=set_(["fc1.bias", "crc32"], "00000000")),
        "bad-meta-not-number": sgd + ckpt("sgd", tweak=set_(["__metadata__", "step"], "16x")),
        "bad-meta-missing": sgd + ckpt("sgd", tweak=lambda h: h["__metadata__"].pop("global")),
        "bad-meta-negative": sgd + ckpt("sgd", tweak=set_(["__metadata__", "epoch"], "-1")),
        "bad-blob-larger-than-model": sgd + ckpt("sgd", blobs=[("c", bytes(4 * 23 * 2 + 4097))]),
        "bad-empty": sgd,
        "bad-short-length": sgd + good[:5],
        "bad-header-length-huge": sgd + struct.pack("<Q", 1 << 62) + good[8:],
        "bad-header-length-past-end": sgd + struct.pack("<Q", len(good)) + good[8:],
        "bad-header-not-json": sgd + struct.pack("<Q", 8) + b"{nonsens" + good[8 + hlen:],
        "bad-header-array": sgd + struct.pack("<Q", 8) + b"[1,2,3] " + good[8 + hlen:],
        "bad-crc": sgd + flip(good, len(good) - 7),
        "bad-truncated-data": sgd + good[:-4],
        "bad-extra-data": sgd + good + b"\0\0\0\0",
        "bad-sgd-into-adamw": adam + good,
        "bad-adamw-into-sgd": sgd + ckpt("adamw"),
        "bad-format": sgd + ckpt("sgd", tweak=set_(["__metadata__", "format"], "safetensors")),
        "bad-no-metadata": sgd + ckpt("sgd", tweak=drop("__metadata__")),
        "bad-model-cnn": sgd + ckpt("sgd", tweak=set_(["__metadata__", "model"], "cnn")),
        "bad-dtype": sgd + ckpt("sgd", tweak=set_(["fc1.bias", "dtype"], "F16")),
        "bad-shape": sgd + ckpt("sgd", tweak=set_(["fc1.weight", "shape"], [4, 3])),
        "bad-shape-rank": sgd + ckpt("sgd", tweak=set_(["fc2.bias", "shape"], [2, 1])),
        "bad-offsets": sgd + ckpt("sgd", tweak=set_(["fc1.bias", "data_offsets"], [0, 12])),
        "bad-offsets-huge": sgd + ckpt("sgd", tweak=set_(["fc2.bias", "data_offsets"], [2 ** 62, 2 ** 63 - 1])),
        "bad-missing-tensor": sgd + ckpt("sgd", tweak=drop("optim.m.fc2.weight")),
        "bad-tensor-not-object": sgd + ckpt("sgd", tweak=set_(["fc1.weight"], "F32")),
        "bad-crc-not-string": sgd + ckpt("sgd", tweak=set_(["__metadata__", "crc32"], 12345)),
        "bad-nan-data": sgd + ckpt("sgd", data_tweak=lambda d: b"\xff\xff\xff\x7f" * (len(d) // 4)),
        "valid-blobs": sgd + ckpt("sgd", blobs=[("compressor.rank0", bytes(range(40))),
                                                 ("compressor.rank1", b"\1\2\3")]),
        "valid-blob-empty": adam + ckpt("adamw", blobs=[("compressor.rank0", b"")]),
        "bad-blob-dtype": sgd + ckpt("sgd", blobs=[("c", b"abcd")],
                                     tweak=set_(["extra.c", "dtype"], "F32")),
        "bad-blob-gap": sgd + ckpt("sgd", blobs=[("c", b"abcd")],
                                   tweak=set_(["extra.c", "data_offsets"], [4 * 23 * 2 + 1, 4 * 23 * 2 + 4])),
        "bad-blob-overlap": sgd + ckpt("sgd", blobs=[("a", b"abcd"), ("b", b"efgh")],
                                       tweak=set_(["extra.b", "data_offsets"], [4 * 23 * 2 + 2, 4 * 23 * 2 + 6])),
        "bad-blob-backwards": sgd + ckpt("sgd", blobs=[("c", b"abcd")],
                                         tweak=set_(["extra.c", "data_offsets"], [4 * 23 * 2 + 4, 4 * 23 * 2])),
        "bad-blob-huge": sgd + ckpt("sgd", blobs=[("c", b"abcd")],
                                    tweak=set_(["extra.c", "data_offsets"], [4 * 23 * 2, 2 ** 63 - 1])),
        "bad-blob-name-long": sgd + ckpt("sgd", blobs=[("n" * 60, b"abcd")]),
    }
    write("checkpoint", inputs)


# ---- theme: the whole input is the file -----------------------------------
def theme():
    inputs = {}
    for name in sorted(os.listdir(os.path.join(TOP, "themes"))):
        if name.endswith(".yaml"):
            inputs["valid-" + name[:-5]] = read(os.path.join("themes", name))
    inputs.update({
        "valid-minimal": b"name: t\nelements:\n  text: {fg: default}\n",
        "valid-every-form": b"name: t\nelements:\n  text: {fg: bright-white, bg: 0, fg8: white, bg8: black, attr: [bold, dim, reverse, underline, standout, italic, normal]}\n  header: {fg: 255, attr: bold}\n  match: {}\n",
        "bad-empty": b"",
        "bad-no-elements": b"name: t\n",
        "bad-elements-list": b"name: t\nelements: [text]\n",
        "bad-unknown-element": b"name: t\nelements:\n  txet: {fg: red}\n",
        "bad-unknown-key": b"name: t\nelements:\n  text: {fgg: red}\n",
        "bad-colour-256": b"name: t\nelements:\n  text: {fg: 256}\n",
        "bad-colour-negative": b"name: t\nelements:\n  text: {fg: -1}\n",
        "bad-colour-word": b"name: t\nelements:\n  text: {fg: purple}\n",
        "bad-colour-map": b"name: t\nelements:\n  text: {fg: {r: 1}}\n",
        "bad-attr": b"name: t\nelements:\n  text: {attr: [bold, blink]}\n",
        "bad-attr-nested": b"name: t\nelements:\n  text: {attr: [[bold]]}\n",
        "bad-element-scalar": b"name: t\nelements:\n  text: red\n",
        "bad-top-key": b"name: t\ncolours: {}\nelements:\n  text: {}\n",
        "bad-duplicate": b"name: t\nelements:\n  text: {fg: red}\n  text: {fg: blue}\n",
        "bad-top-list": b"- name: t\n",
        "bad-name-map": b"name: {a: b}\nelements:\n  text: {fg: red, fg: blue}\n",
        "bad-not-utf8": b"name: \xc3\x28\nelements: {}\n",
        "bad-tab": b"name: t\nelements:\n\ttext: {}\n",
    })
    write("theme", inputs)


# ---- policy: the whole input is one request line ---------------------------
def policy():
    nodes = [{"name": "n%d" % i, "slots": 4, "rack": "r%d" % (i // 2)}
             for i in range(4)]

    def rows(top, f):
        return [[n, k, f(k)] for k in range(1, top + 1)
                for n in range((k + 3) // 4, min(k, 4) + 1)]

    def req(jobs, current=None, **kw):
        r = {"time": 600, "interval_s": 60, "restart_s": 30, "nodes": nodes,
             "jobs": jobs, "current": current or {}}
        r.update(kw)
        return json.dumps(r).encode()

    lin = {"name": "lin", "age": 600, "min_ranks": 1, "max_ranks": 12,
           "speedup": rows(12, float)}
    flat = {"name": "flat", "speedup": rows(4, lambda k: 1.0)}
    pinned = {"name": "pin", "preemptible": False, "age": 60,
              "speedup": rows(2, float)}
    inputs = {
        "valid-two": req([lin, flat]),
        "valid-current": req([lin, flat], {"lin": ["n0", "n0", "n1"]}),
        "valid-pinned": req([lin, pinned], {"pin": ["n3", "n3"]}),
        "valid-minimal": b'{"nodes": [{"name": "a", "slots": 1}], "jobs": [{"name": "j", "speedup": [[1, 1, 1]]}]}',
        "valid-empty": b'{"nodes": [], "jobs": []}',
        # A table offering more ranks than the cluster holds (the job
        # waits; fuzz-policy found fifo allocating for them all).
        "valid-huge-row": b'{"nodes": [{"name": "a", "slots": 1}], "jobs": [{"name": "j", "speedup": [[1, 1555555555, 1]]}]}',
        "bad-not-json": b"{nodes",
        "bad-array": b"[]",
        "bad-no-jobs": b'{"nodes": []}',
        "bad-unknown-node": req([lin], {"lin": ["n9"]}),
        "bad-unknown-job": req([lin], {"nope": ["n0"]}),
        "bad-negative-slots": b'{"nodes": [{"name": "a", "slots": -1}], "jobs": []}',
        "bad-row-ranks-below-nodes": b'{"nodes": [], "jobs": [{"name": "j", "speedup": [[2, 1, 1]]}]}',
        "bad-row-short": b'{"nodes": [], "jobs": [{"name": "j", "speedup": [[1, 1]]}]}',
        "bad-min-over-max": b'{"nodes": [], "jobs": [{"name": "j", "min_ranks": 3, "max_ranks": 2, "speedup": [[1, 1, 1]]}]}',
        "bad-over-slots": req([lin], {"lin": ["n0"] * 5}),
        "bad-dup-node": b'{"nodes": [{"name": "a", "slots": 1}, {"name": "a", "slots": 1}], "jobs": []}',
        "bad-dup-key": b'{"nodes": [], "nodes": [], "jobs": []}',
        "bad-nan": b'{"nodes": [], "jobs": [{"name": "j", "speedup": [[1, 1, NaN]]}]}',
        "bad-huge-int": b'{"nodes": [{"name": "a", "slots": 99999999999999}], "jobs": []}',
        "bad-many-objects": b'{"nodes": [], "jobs": [' + b",".join([b"{}"] * 140000) + b"]}",
    }
    write("policy", inputs)


def main():
    table = {"spec": spec, "idx": idx, "checkpoint": checkpoint, "theme": theme,
             "policy": policy}
    for name in sys.argv[1:] or table:
        table[name]()


if __name__ == "__main__":
    main()
