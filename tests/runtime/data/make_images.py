#!/usr/bin/python3
"""Real image files for the packed-data tests, made here: Fashion-MNIST images upscaled to
SIZE x SIZE, in one folder per class, every other one PNG (lossless) and the rest JPEG.

    make_images.py OUT PER_CLASS [--size N] [--test] [--gray]

--test draws from the test set. Files are written as OUT/<class>/<index>.png|jpg, and
OUT.list lists 'path label' lines (relative to OUT's parent) in the same order."""
import gzip
import os
import sys

import numpy as np
from PIL import Image

DATA = "/usr/share/datasets/fashion-mnist"
CLASSES = ["0_tshirt", "1_trouser", "2_pullover", "3_dress", "4_coat", "5_sandal", "6_shirt",
           "7_sneaker", "8_bag", "9_boot"]


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * dims).reshape(shape)


def main():
    out, per_class = sys.argv[1], int(sys.argv[2])
    size = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 64
    part = "t10k" if "--test" in sys.argv else "train"
    images = idx(f"{DATA}/{part}-images-idx3-ubyte.gz")
    labels = idx(f"{DATA}/{part}-labels-idx1-ubyte.gz")
    taken = [0] * 10
    lines = []
    for i in range(len(labels)):
        c = int(labels[i])
        if taken[c] >= per_class:
            continue
        taken[c] += 1
        folder = os.path.join(out, CLASSES[c])
        os.makedirs(folder, exist_ok=True)
        img = Image.fromarray(images[i]).resize((size, size), Image.BILINEAR)
        if "--gray" not in sys.argv:  # colour: channels that differ
            rgb = np.stack([np.asarray(img)] * 3, -1).astype(np.float32)
            t = i % 5  # a tint that says nothing of the class
            rgb *= np.array([1.0, 0.6 + 0.08 * t, 1.0 - 0.1 * t], np.float32)
            img = Image.fromarray(rgb.clip(0, 255).astype(np.uint8))
        name = f"{i:05d}." + ("png" if i % 2 == 0 else "jpg")
        img.save(os.path.join(folder, name), quality=95)
        lines.append(f"{os.path.basename(out)}/{CLASSES[c]}/{name} {c}")
        if min(taken) >= per_class:
            break
    with open(out.rstrip("/") + ".list", "w") as f:
        f.write("\n".join(lines) + "\n")


main()
