#!/usr/bin/env python3
"""Recompute hunter's test accuracy and loss from its checkpoint.

usage: forward_check.py CKPT DATADIR ACC LOSS

Reads the checkpoint with safetensors_read (standard library only), runs
the MLP forward pass in double precision over the t10k set in DATADIR and
compares accuracy and mean cross-entropy with what hunter reported.
"""
import gzip
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_read  # noqa: E402

MEAN, STD = 0.2860, 0.3530


def main():
    ck, d, acc, loss = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    meta, t = safetensors_read.load(ck)
    assert meta["format"] == "hunter/2", meta
    names = sorted(n for n in t if not n.startswith("optim."))
    assert names == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"], names
    assert t["fc1.weight"][1] == [32, 784] and t["fc2.weight"][1] == [10, 32]
    assert "optim.m.fc1.weight" in t, "momentum state missing"
    w1 = safetensors_read.floats(t["fc1.weight"][2])
    b1 = safetensors_read.floats(t["fc1.bias"][2])
    w2 = safetensors_read.floats(t["fc2.weight"][2])
    b2 = safetensors_read.floats(t["fc2.bias"][2])
    with gzip.open(os.path.join(d, "t10k-images-idx3-ubyte.gz")) as f:
        _, n, _, _ = struct.unpack(">IIII", f.read(16))
        pix = f.read()
    with gzip.open(os.path.join(d, "t10k-labels-idx1-ubyte.gz")) as f:
        f.read(8)
        labels = f.read()
    correct, total = 0, 0.0
    for i in range(n):
        x = [(p / 255.0 - MEAN) / STD for p in pix[i * 784:(i + 1) * 784]]
        h = []
        for j in range(32):
            row = w1[j * 784:(j + 1) * 784]
            h.append(max(0.0, b1[j] + sum(a * b for a, b in zip(row, x))))
        z = [b2[k] + sum(a * b for a, b in zip(w2[k * 32:(k + 1) * 32], h))
             for k in range(10)]
        m = max(z)
        lse = m + math.log(sum(math.exp(v - m) for v in z))
        total += lse - z[labels[i]]
        correct += z.index(m) == labels[i]
    my_acc, my_loss = correct / n, total / n
    print("reader: acc %.4f loss %.6f; hunter: acc %.4f loss %.6f" %
          (my_acc, my_loss, acc, loss))
    assert abs(my_acc - acc) <= 1.0 / n + 1e-9, "accuracy differs"
    assert abs(my_loss - loss) <= 1e-4 * abs(loss) + 1e-6, "loss differs"


if __name__ == "__main__":
    main()
