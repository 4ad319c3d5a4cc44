#!/usr/bin/env python3
"""PyTorch CPU baseline for bench/train_vs_pytorch.sh: the same networks, batch and solver as
examples/lenet.swn and examples/cifar10_quick.swn, on in-memory random tensors (no data
loading, which favours PyTorch slightly). Prints images/s and peak RSS.

usage: pytorch_nets.py NET THREADS ITERATIONS"""
import resource
import sys
import time

import torch
import torch.nn as nn


def lenet():
    return nn.Sequential(nn.Conv2d(1, 20, 5), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5), nn.MaxPool2d(2, 2),
                         nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10)), (1, 28, 28), 64, 0.0005


def cifar10_quick():
    return nn.Sequential(nn.Conv2d(3, 32, 5, padding=2), nn.MaxPool2d(3, 2, ceil_mode=True), nn.ReLU(),
                         nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(), nn.AvgPool2d(3, 2, ceil_mode=True),
                         nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.AvgPool2d(3, 2, ceil_mode=True),
                         nn.Flatten(), nn.Linear(1024, 64), nn.Linear(64, 10)), (3, 32, 32), 100, 0.004


def main():
    name, threads, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    model, shape, batch, decay = {"lenet": lenet, "cifar10_quick": cifar10_quick}[name]()
    opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=decay)
    x, y = torch.randn(batch, *shape), torch.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    for _ in range(max(5, iterations // 10)):
        step()
    start = time.perf_counter()
    for _ in range(iterations):
        step()
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{iterations * batch / seconds:.0f} {rss:.0f}")


if __name__ == "__main__":
    main()
