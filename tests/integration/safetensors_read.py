#!/usr/bin/env python3
"""An independent safetensors reader, standard library only.

usage: safetensors_read.py FILE            print name dtype shape per tensor
       safetensors_read.py --dump FILE     also print a SHA-256 of each tensor

It checks the format's rules as the reference implementation does: an
8-byte little-endian header length, a JSON header whose metadata values
are strings, tensors whose data_offsets are contiguous, in bounds and
cover the whole data section, and sizes that match dtype and shape.
"""
import hashlib
import json
import struct
import sys

DTYPE_SIZE = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I64": 8, "I32": 4,
              "U8": 1, "I8": 1, "BOOL": 1}


def load(path):
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError("file shorter than 8 bytes")
    (hlen,) = struct.unpack("<Q", blob[:8])
    if 8 + hlen > len(blob):
        raise ValueError("header length past end of file")
    header = json.loads(blob[8:8 + hlen].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    for k, v in meta.items():
        if not isinstance(v, str):
            raise ValueError("metadata %s is not a string" % k)
    data = blob[8 + hlen:]
    spans = []
    tensors = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        n = 1
        for s in t["shape"]:
            n *= s
        if end - begin != n * DTYPE_SIZE[t["dtype"]]:
            raise ValueError("%s: size does not match shape" % name)
        if not 0 <= begin <= end <= len(data):
            raise ValueError("%s: offsets out of bounds" % name)
        spans.append((begin, end))
        tensors[name] = (t["dtype"], t["shape"], data[begin:end])
    spans.sort()
    pos = 0
    for b, e in spans:
        if b != pos:
            raise ValueError("tensor data is not contiguous at %d" % b)
        pos = e
    if pos != len(data):
        raise ValueError("data section has %d trailing bytes" % (len(data) - pos))
    return meta, tensors


def floats(raw):
    return struct.unpack("<%df" % (len(raw) // 4), raw)


def main():
    dump = sys.argv[1] == "--dump"
    path = sys.argv[-1]
    meta, tensors = load(path)
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        line = "%s %s %s" % (name, dtype, "x".join(map(str, shape)))
        if dump:
            line += " " + hashlib.sha256(raw).hexdigest()
        print(line)


if __name__ == "__main__":
    main()
