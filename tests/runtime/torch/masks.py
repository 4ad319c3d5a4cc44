"""Generated programs' dropout masks in numpy (runtime/rng.h's counter hash), for the PyTorch
cross-checks: element `el` of image `img` is kept at `iteration` when
uniform(hash(mix(seed) ^ layer, iteration, image) ^ element) >= ratio."""
import numpy as np
import torch

M64 = 0xFFFFFFFFFFFFFFFF


def mix64(z):
    z = (z + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(M64)
    z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & np.uint64(M64)
    z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & np.uint64(M64)
    return z ^ (z >> np.uint64(31))


def hash3(a, b, c):
    return mix64(mix64(mix64(a) ^ b) ^ c)


def fnv1a(text):
    h = 14695981039346656037
    for ch in text.encode():
        h = ((h ^ ch) * 1099511628211) & M64
    return h


def dropout_keep(seed, layer_name, ratio, iteration, images, elements, first_image=0):
    """A bool tensor images x elements: which of the layer's outputs the program keeps."""
    with np.errstate(over="ignore"):
        layer = np.uint64(fnv1a(layer_name) >> 11)
        img = np.arange(first_image, first_image + images, dtype=np.uint64)[:, None]
        el = np.arange(elements, dtype=np.uint64)[None, :]
        h = mix64(hash3(mix64(np.uint64(seed)) ^ layer, np.uint64(iteration), img) ^ el)
    u = (h >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    return torch.from_numpy(u >= np.float32(ratio))
