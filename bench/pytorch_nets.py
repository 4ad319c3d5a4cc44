#!/usr/bin/env python3
"""PyTorch CPU baseline for bench/train_vs_pytorch.sh: the same networks, batch and solver as
the examples (lenet, cifar10_quick, Caffe's AlexNet with LRN and groups, VGG-16, ResNet-50 v1.5
as examples/resnet50.swn builds it, bvlc GoogLeNet without its auxiliary classifiers;
MobileNetV2, EfficientNet-B0 and DenseNet-121 from torchvision, as the examples are), on in-memory random tensors (no data loading, which favours PyTorch slightly). Pooling rounds up
as Caffe's does (ceil_mode), so every tensor has the example's shape. Prints images/s of the
timed iterations and the peak RSS in MiB.

usage: pytorch_nets.py NET TORCH_THREADS ITERATIONS [BATCH]
The thread count of OpenBLAS's own pool is the caller's: OPENBLAS_NUM_THREADS in the
environment, read when torch is imported."""
import resource
import sys
import time

import torch
import torch.nn as nn


def conv_relu(ci, co, k, s=1, p=0, g=1):
    return [nn.Conv2d(ci, co, k, s, p, groups=g), nn.ReLU(inplace=True)]


def lrn():
    return nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)


def maxpool(k, s, p=0):
    return nn.MaxPool2d(k, s, p, ceil_mode=True)


def lenet():
    return nn.Sequential(nn.Conv2d(1, 20, 5), maxpool(2, 2), nn.Conv2d(20, 50, 5), maxpool(2, 2),
                         nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10)), (1, 28, 28), 10, 64, 0.0005


def cifar10_quick():
    return nn.Sequential(nn.Conv2d(3, 32, 5, padding=2), maxpool(3, 2), nn.ReLU(),
                         nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(), nn.AvgPool2d(3, 2, ceil_mode=True),
                         nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.AvgPool2d(3, 2, ceil_mode=True),
                         nn.Flatten(), nn.Linear(1024, 64), nn.Linear(64, 10)), (3, 32, 32), 10, 100, 0.004


def alexnet():
    layers = conv_relu(3, 96, 11, 4) + [lrn(), maxpool(3, 2)]
    layers += conv_relu(96, 256, 5, 1, 2, 2) + [lrn(), maxpool(3, 2)]
    layers += conv_relu(256, 384, 3, 1, 1) + conv_relu(384, 384, 3, 1, 1, 2) + conv_relu(384, 256, 3, 1, 1, 2)
    layers += [maxpool(3, 2), nn.Flatten(), nn.Linear(9216, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5),
               nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5), nn.Linear(4096, 1000)]
    return nn.Sequential(*layers), (3, 227, 227), 1000, 32, 0.0005


def vgg16():
    layers, ci = [], 3
    for width, convs in ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)):
        for _ in range(convs):
            layers += conv_relu(ci, width, 3, 1, 1)
            ci = width
        layers.append(maxpool(2, 2))
    layers += [nn.Flatten(), nn.Linear(25088, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5),
               nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5), nn.Linear(4096, 1000)]
    return nn.Sequential(*layers), (3, 224, 224), 1000, 8, 0.0005


def conv_bn(ci, co, k, s=1, p=0):
    return nn.Sequential(nn.Conv2d(ci, co, k, s, p, bias=False), nn.BatchNorm2d(co))


class Bottleneck(nn.Module):
    """ResNet v1.5: the stride on the 3x3 convolution."""

    def __init__(self, ci, width, stride, project):
        super().__init__()
        self.a, self.b = conv_bn(ci, width, 1), conv_bn(width, width, 3, stride, 1)
        self.c = conv_bn(width, width * 4, 1)
        self.project = conv_bn(ci, width * 4, 1, stride) if project else None
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        shortcut = self.project(x) if self.project is not None else x
        y = self.relu(self.b(self.relu(self.a(x))))
        return self.relu(self.c(y) + shortcut)


def resnet50():
    layers, ci = [conv_bn(3, 64, 7, 2, 3), nn.ReLU(inplace=True), maxpool(3, 2)], 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(ci, width, stride if i == 0 else 1, i == 0))
            ci = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
    return nn.Sequential(*layers), (3, 224, 224), 1000, 8, 0.0001


class Inception(nn.Module):
    def __init__(self, ci, n1, n3r, n3, n5r, n5, npool):
        super().__init__()
        self.b1 = nn.Sequential(*conv_relu(ci, n1, 1))
        self.b3 = nn.Sequential(*conv_relu(ci, n3r, 1), *conv_relu(n3r, n3, 3, 1, 1))
        self.b5 = nn.Sequential(*conv_relu(ci, n5r, 1), *conv_relu(n5r, n5, 5, 1, 2))
        self.bp = nn.Sequential(maxpool(3, 1, 1), *conv_relu(ci, npool, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b3(x), self.b5(x), self.bp(x)], 1)


def googlenet():
    layers = conv_relu(3, 64, 7, 2, 3) + [maxpool(3, 2), lrn()] + conv_relu(64, 64, 1)
    layers += conv_relu(64, 192, 3, 1, 1) + [lrn(), maxpool(3, 2)]
    ci = 192
    for stage, widths in enumerate((((64, 96, 128, 16, 32, 32), (128, 128, 192, 32, 96, 64)),
                                    ((192, 96, 208, 16, 48, 64), (160, 112, 224, 24, 64, 64),
                                     (128, 128, 256, 24, 64, 64), (112, 144, 288, 32, 64, 64),
                                     (256, 160, 320, 32, 128, 128)),
                                    ((256, 160, 320, 32, 128, 128), (384, 192, 384, 48, 128, 128)))):
        for w in widths:
            layers.append(Inception(ci, *w))
            ci = w[0] + w[2] + w[4] + w[5]
        layers.append(maxpool(3, 2) if stage < 2 else nn.AvgPool2d(7, 1))
    layers += [nn.Dropout(0.4), nn.Flatten(), nn.Linear(1024, 1000)]
    return nn.Sequential(*layers), (3, 224, 224), 1000, 8, 0.0002


def torchvision_model(name, decay):
    """torchvision's model (Debian's python3-torchvision): the networks written after Caffe's."""
    import torchvision

    return getattr(torchvision.models, name)(), (3, 224, 224), 1000, 16, decay


def mobilenet_v2():
    return torchvision_model("mobilenet_v2", 0.00004)


def efficientnet_b0():
    return torchvision_model("efficientnet_b0", 0.00001)


def densenet121():
    return torchvision_model("densenet121", 0.0001)


NETS = {
    f.__name__: f
    for f in (lenet, cifar10_quick, alexnet, vgg16, resnet50, googlenet, mobilenet_v2,
              efficientnet_b0, densenet121)
}


def main():
    name, threads, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    model, shape, classes, batch, decay = NETS[name]()
    if len(sys.argv) > 4:
        batch = int(sys.argv[4])
    opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=decay)
    x, y = torch.randn(batch, *shape), torch.randint(0, classes, (batch,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    for _ in range(max(2, iterations // 10)):
        step()
    start = time.perf_counter()
    for _ in range(iterations):
        step()
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{iterations * batch / seconds:.1f} {rss:.0f}")


if __name__ == "__main__":
    main()
