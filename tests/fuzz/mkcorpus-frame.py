#!/usr/bin/env python3
# Writes the seed corpus of fuzz-frame into corpus/frame/.  Each input is
# a selector byte (fuzz-frame.c: the chunk size the stream is fed in)
# followed by the stream.  Rerun after changing the frame format.
import json, os, struct

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "frame")
os.makedirs(here, exist_ok=True)

def frame(body):
    if isinstance(body, str):
        body = body.encode()
    return struct.pack(">I", len(body)) + body

def msg(**kw):
    return frame(json.dumps(kw, separators=(",", ":")))

hello = msg(t="hello", proto=1, role="agent", node="n1",
            versions={"hunter": "0.1.0", "gloo": "libgloo-dev"})
epoch = msg(t="epoch", job="mnist", epoch=3, loss=0.25, test_acc=0.9)
deep_ok = frame('{"t":"x","v":' + "[" * 500 + "]" * 500 + "}")
deep_bad = frame('{"t":"x","v":' + "[" * 5000 + "]" * 5000 + "}")

inputs = {
    "valid-hello": b"\0" + hello,
    "valid-bytewise": b"\1" + hello + epoch,
    "valid-chunk3": b"\3" + epoch + hello + epoch,
    "valid-deep": b"\6" + deep_ok,
    "truncated-header": b"\0" + hello + b"\0\0",
    "truncated-body": b"\2" + epoch[:-3],
    "oversized-1gib": b"\0" + b"\x40\0\0\0" + b"{}",
    "oversized-by-one": b"\4" + struct.pack(">I", (1 << 20) + 1) + b"{",
    "zero-length": b"\0" + hello + b"\0\0\0\0",
    "bad-json": b"\0" + frame('{"t":"log",'),
    "array": b"\0" + frame('[{"t":"log"}]'),
    "no-t": b"\5" + frame('{"type":"log"}'),
    "t-number": b"\0" + frame('{"t":42}'),
    "t-empty": b"\0" + frame('{"t":""}'),
    "duplicate-key": b"\0" + frame('{"t":"log","t":"cmd"}'),
    "nul-raw": b"\0" + frame(b'{"t":"lo\0g"}'),
    "nul-escaped": b"\0" + frame('{"t":"a\\u0000b"}'),
    "nested-too-deep": b"\7" + deep_bad,
    "bad-utf8": b"\0" + frame(b'{"t":"\xff\xfe"}'),
    "good-then-garbage": b"\1" + hello + b"\xff\xff\xff\xff",
}
for name, data in inputs.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
