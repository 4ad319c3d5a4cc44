#!/usr/bin/env python3
"""examples/mobilenet_v2.swn against torchvision's mobilenet_v2: two full training steps on the
same weights and images. swnc initialises the network and trains 2 iterations of 4 images of
224 x 224 (random PNGs packed by swnc-data, no mirroring, in file order); torchvision's model,
given swnc's initial weights (the parameter tables agree tensor by tensor in order and shape),
repeats them in float64 with the same dropout masks and Caffe's SGD (equal to PyTorch's on a
first step). The first iteration's loss must agree to a relative 1e-5 (forward through all 53
layers, batch norm on batch statistics; measured 3.6e-8). The second's, after backward and the
update of all 158 tensors, to 2e-3: with batch norm over 4 images and ReLU6 after it, float32
rounding moves pre-activations within rounding of 0 across it, and each such flip changes a
channel's gradient (measured: swnc 3.0e-4 from float64; PyTorch's own float32 run 5.6e-4).

usage: mobilenet_v2.py SWNC SWNC_DATA PROJECT_DIR WORKDIR"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))
import swnc_checkpoint as ck  # noqa: E402
import masks  # noqa: E402

IMAGES, BATCH, ITERATIONS, SEED = 8, 4, 2, 1
LR, MOMENTUM, DECAY = 0.045, 0.9, 0.00004  # the example's train section
MEAN = [123.68, 116.78, 103.94]


def write_images(root, rng):
    """One image per class folder c0..c7: the pack's order, and image i's label, is i."""
    pixels = rng.integers(0, 256, (IMAGES, 224, 224, 3), dtype=np.uint8)
    for i in range(IMAGES):
        os.makedirs(os.path.join(root, f"c{i}"), exist_ok=True)
        Image.fromarray(pixels[i]).save(os.path.join(root, f"c{i}", "image.png"))
    return pixels


def reference(init, pixels):
    model = torchvision.models.mobilenet_v2(num_classes=1000).double().train()
    params = list(model.parameters())
    with torch.no_grad():
        for p, (name, value) in zip(params, init.params.items()):
            assert tuple(p.shape) == value.shape, name
            p.copy_(torch.from_numpy(value.astype(np.float64)))
    mean = torch.tensor(MEAN, dtype=torch.float64).reshape(1, 3, 1, 1)
    x_all = torch.from_numpy(pixels.astype(np.float64)).permute(0, 3, 1, 2) - mean
    losses, velocity = [], [torch.zeros_like(p) for p in params]
    for it in range(ITERATIONS):
        first = it * BATCH % IMAGES
        x, y = x_all[first:first + BATCH], torch.arange(first, first + BATCH)
        pooled = F.adaptive_avg_pool2d(model.features(x), 1).flatten(1)
        keep = masks.dropout_keep(SEED, "drop", np.float32(0.2), it, BATCH, pooled.shape[1])
        dropped = pooled * keep.to(pooled.dtype) * float(np.float32(1) / np.float32(0.8))
        loss = F.cross_entropy(model.classifier[1](dropped), y)
        model.zero_grad()
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():  # Caffe's SGD: v = momentum v + lr (g + decay w); w -= v
            for p, v in zip(params, velocity):
                v.mul_(MOMENTUM).add_(LR * (p.grad + DECAY * p))
                p.sub_(v)
    return losses


def main():
    swnc, swnc_data, root, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    run = lambda *args: subprocess.run(args, check=True, cwd=work, stdout=subprocess.DEVNULL)
    pixels = write_images(os.path.join(work, "images"), np.random.default_rng(5))
    run(swnc_data, "pack", "images", "packed", "--quiet")
    exe = os.path.join(work, "mobilenet_v2")
    run(swnc, os.path.join(root, "examples", "mobilenet_v2.swn"), "-D", "data.mirror=false",
        "-D", "train.eval_interval=0", "-o", exe)
    common = ["--train", "packed", "--test", "packed", "--batch", str(BATCH), "--no-shuffle",
              "--seed", str(SEED)]
    run(exe, *common, "--epochs", "0", "--checkpoint", "init.ckpt")
    run(exe, *common, "--iterations", str(ITERATIONS), "--display", "1", "--init-weights", "init.ckpt",
        "--log", "log.json")
    with open(os.path.join(work, "log.json")) as f:
        ours = [e["loss"] for e in map(json.loads, f) if e["event"] == "train"]
    theirs = reference(ck.load(os.path.join(work, "init.ckpt")), pixels)
    errors = [abs(a - b) / abs(b) for a, b in zip(ours, theirs)]
    print("losses: swnc", ["%.7f" % l for l in ours], "pytorch", ["%.7f" % l for l in theirs])
    print("relative errors", ["%.1e" % e for e in errors])
    ok = len(ours) == ITERATIONS and errors[0] <= 1e-5 and errors[1] <= 2e-3
    print("ok" if ok else "FAIL: the losses differ")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
