#!/usr/bin/env python3
"""Write a token shard in llm.c's format (256 little-endian int32 of
header: magic 20240520, version 1, the token count, zeros; then the
tokens as little-endian uint16), or a hostile variant of one.

usage: mkshard.py OUT N VOCAB SEED [KIND]
KIND: good (default), magic, version, beyond (a count past the file),
      vocab (a token >= VOCAB), empty.
The good tokens are a small language, the same in every shard: words of
a few tokens each, drawn one after another, so that a model has
something to learn.
"""
import random
import struct
import sys


def main():
    out, n, vocab, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    kind = sys.argv[5] if len(sys.argv) > 5 else "good"
    w = random.Random(0)        # one language for every shard
    words = [[w.randrange(vocab) for _ in range(w.randint(2, 5))] for _ in range(40)]
    r = random.Random(seed)
    toks = []
    while len(toks) < n:
        toks += words[int(r.paretovariate(1.2)) % len(words)]
    toks = toks[:n]
    magic, version, count = 20240520, 1, n
    if kind == "magic":
        magic = 20240521
    elif kind == "version":
        version = 2
    elif kind == "beyond":
        count = n + 1000
    elif kind == "vocab":
        toks[n // 2] = vocab
    elif kind == "empty":
        toks, count = [], 0
    header = struct.pack("<256i", magic, version, count, *([0] * 253))
    with open(out, "wb") as f:
        f.write(header + struct.pack("<%dH" % len(toks), *toks))


if __name__ == "__main__":
    main()
