#!/usr/bin/env python3
"""Write a small Fashion-MNIST-shaped idx data set for tests.

usage: mkidx.py DIR N_TRAIN N_TEST [SEED]

Images are 28x28 bytes, labels 0..9.  Each class has its own pattern plus
noise, so a small model can learn it in a few epochs.  Files are gzipped,
as Debian's package ships them.  Standard library only.
"""
import gzip
import os
import random
import struct
import sys


def write_set(d, prefix, n, rng):
    labels = bytes(rng.randrange(10) for _ in range(n))
    pix = bytearray(n * 784)
    for i, c in enumerate(labels):
        base = i * 784
        for p in range(784):
            r, col = divmod(p, 28)
            on = (r // 4 + col // 4 + c) % 10 < 3 or (r % 7 == c % 7)
            if rng.random() < 0.35:
                on = not on
            v = (170 if on else 60) + rng.randrange(-90, 91)
            pix[base + p] = max(0, min(255, v))
    with gzip.open(os.path.join(d, prefix + "-images-idx3-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28))
        f.write(bytes(pix))
    with gzip.open(os.path.join(d, prefix + "-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n))
        f.write(labels)


def main():
    d, ntrain, ntest = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    os.makedirs(d, exist_ok=True)
    write_set(d, "train", ntrain, rng)
    write_set(d, "t10k", ntest, rng)


if __name__ == "__main__":
    main()
