#!/usr/bin/python3
"""PyTorch's loader on the same JPEG files as bench/loader.sh: torchvision's ImageFolder with
RandomCrop(224) + RandomHorizontalFlip + ToTensor + Normalize (Caffe's crop and mirror), a
DataLoader of WORKERS processes (each at one torch thread), BATCH images a batch. Prints the
images per second over EPOCHS passes after one warm-up batch.

    loader_torch.py FOLDER WORKERS BATCH EPOCHS"""
import sys
import time

import torch
import torchvision.transforms as T
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder


def one_thread(_):
    torch.set_num_threads(1)


def main():
    folder, workers, batch, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(1)
    transform = T.Compose([T.RandomCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                           T.Normalize([0.485, 0.456, 0.406], [1 / 255.0] * 3)])
    loader = DataLoader(ImageFolder(folder, transform), batch_size=batch, shuffle=True,
                        num_workers=workers, worker_init_fn=one_thread, drop_last=True,
                        persistent_workers=True, prefetch_factor=2)
    next(iter(loader))  # workers started, files cached
    images, start = 0, time.perf_counter()
    for _ in range(epochs):
        for x, _ in loader:
            images += x.shape[0]
    print("%.1f" % (images / (time.perf_counter() - start)))


main()
