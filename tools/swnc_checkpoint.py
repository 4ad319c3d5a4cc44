#!/usr/bin/python3
"""Read and write swnc checkpoints (format: docs/runtime.md) as numpy arrays.

    import swnc_checkpoint as ck
    c = ck.load("lenet.ckpt")
    c.params["conv1.weight"]          # numpy float32, shape (20, 1, 5, 5)
    c.momentum["conv1.weight"]; c.state["bn1.running_mean"]; c.iteration; c.network
    c.second_moment["conv1.weight"]  # Adam's (c.momentum holds its first moment); {} for SGD
    ck.save("edited.ckpt", c)         # e.g. after replacing weights

Run as a command to list a checkpoint's contents:  swnc_checkpoint.py FILE
"""
import ctypes
import os
import struct
import sys
from dataclasses import dataclass, field

try:
    import numpy as np
except ImportError:
    sys.exit("swnc_checkpoint.py: needs numpy (apt-get install python3-numpy)")

MAGIC = b"SWNCCKPT"
VERSION = 2  # version 1 (read too) has one moment pool and a reserved 0 in its place
FNV_OFFSET, FNV_PRIME = 14695981039346656037, 1099511628211


def _runtime_checksum():
    """The runtime's own checksum (swn_checksum in its shared library), about a thousand times
    faster than Python's byte loop (VGG-16's 1.1 GB: a second, not minutes); None if no runtime
    is found: $SWNC_RUNTIME_DIR, an installed swnc beside this file, or a build tree."""
    here = os.path.dirname(os.path.realpath(__file__))
    dirs = [os.environ.get("SWNC_RUNTIME_DIR", ""), os.path.join(here, "../lib/swnc"),
            os.path.join(here, "../build/swnc-runtime")]
    for d in filter(None, dirs):
        try:
            lib = ctypes.CDLL(os.path.join(d, "lib/libswnc_host.so"))
        except OSError:
            continue
        fn = lib.swn_checksum
        fn.restype, fn.argtypes = ctypes.c_uint64, [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t]
        return fn
    return None


_checksum = _runtime_checksum()


def fnv1a(data: bytes) -> int:
    if _checksum:
        return _checksum(FNV_OFFSET, data, len(data))
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


@dataclass
class Checkpoint:
    network: str
    hash: int
    iteration: int
    seed: int
    param_words: int
    state_words: int
    # name -> (shape, offset) in the parameter pool; name -> (offset, count) in the state pool
    param_table: dict = field(default_factory=dict)
    state_table: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    momentum: dict = field(default_factory=dict)
    second_moment: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)
    moment_pools: int = 1


class Reader:
    def __init__(self, data: bytes, path: str):
        self.data, self.at, self.path = data, 0, path

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise ValueError(f"{self.path}: truncated")
        chunk = self.data[self.at:self.at + n]
        self.at += n
        return chunk

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]


def load(path: str) -> Checkpoint:
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != MAGIC:
        raise ValueError(f"{path}: not a swnc checkpoint")
    (stored,) = struct.unpack("<Q", data[-8:])
    if fnv1a(data[:-8]) != stored:
        raise ValueError(f"{path}: checksum mismatch (damaged)")
    r = Reader(data, path)
    r.take(8)
    version = r.u32()
    if version not in (1, VERSION):
        raise ValueError(f"{path}: version {version}, expected 1 or {VERSION}")
    word = r.u32()  # the moment pools; version 1 reserved it (0) and had one pool
    pools = word if version == VERSION else 1
    if pools not in (1, 2):
        raise ValueError(f"{path}: {pools} optimizer moment pools")
    net_hash = r.u64()
    name = r.take(64).split(b"\0", 1)[0].decode()
    c = Checkpoint(name, net_hash, r.u64(), r.u64(), r.u64(), r.u64(), moment_pools=pools)
    nparams, nstate = r.u32(), r.u32()
    for _ in range(nparams):
        pname = r.take(r.u32()).decode()
        dims = tuple(r.u64() for _ in range(r.u32()))
        c.param_table[pname] = (dims, r.u64())
    for _ in range(nstate):
        sname = r.take(r.u32()).decode()
        c.state_table[sname] = (r.u64(), r.u64())
    pool = lambda n: np.frombuffer(r.take(4 * n), dtype="<f4").copy()
    params, momentum = pool(c.param_words), pool(c.param_words)
    second = pool(c.param_words) if pools == 2 else None
    state = pool(c.state_words)
    for pname, (dims, off) in c.param_table.items():
        n = int(np.prod(dims))
        c.params[pname] = params[off:off + n].reshape(dims)
        c.momentum[pname] = momentum[off:off + n].reshape(dims)
        if second is not None:
            c.second_moment[pname] = second[off:off + n].reshape(dims)
    for sname, (off, n) in c.state_table.items():
        c.state[sname] = state[off:off + n]
    return c


def save(path: str, c: Checkpoint) -> None:
    out = bytearray()
    out += MAGIC + struct.pack("<II", VERSION, c.moment_pools) + struct.pack("<Q", c.hash)
    out += c.network.encode()[:63].ljust(64, b"\0")
    out += struct.pack("<QQQQII", c.iteration, c.seed, c.param_words, c.state_words, len(c.param_table),
                       len(c.state_table))
    for pname, (dims, off) in c.param_table.items():
        out += struct.pack("<I", len(pname)) + pname.encode() + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<Q", off)
    for sname, (off, n) in c.state_table.items():
        out += struct.pack("<I", len(sname)) + sname.encode() + struct.pack("<QQ", off, n)
    params, momentum = np.zeros(c.param_words, "<f4"), np.zeros(c.param_words, "<f4")
    second = np.zeros(c.param_words if c.moment_pools == 2 else 0, "<f4")
    state = np.zeros(c.state_words, "<f4")
    for pname, (dims, off) in c.param_table.items():
        n = int(np.prod(dims))
        params[off:off + n] = np.asarray(c.params[pname], "<f4").reshape(-1)
        momentum[off:off + n] = np.asarray(c.momentum.get(pname, np.zeros(n)), "<f4").reshape(-1)
        if c.moment_pools == 2:
            second[off:off + n] = np.asarray(c.second_moment.get(pname, np.zeros(n)), "<f4").reshape(-1)
    for sname, (off, n) in c.state_table.items():
        state[off:off + n] = np.asarray(c.state[sname], "<f4").reshape(-1)
    out += params.tobytes() + momentum.tobytes() + second.tobytes() + state.tobytes()
    out += struct.pack("<Q", fnv1a(bytes(out)))
    with open(path, "wb") as f:
        f.write(out)


def main():
    import argparse
    parser = argparse.ArgumentParser(
        prog=os.path.basename(sys.argv[0]),
        description="Lists a swnc checkpoint: its network, iteration and seed, and each "
                    "parameter tensor's shape and mean magnitude. As a Python module it reads "
                    "and writes checkpoints as numpy arrays (import swnc_checkpoint).")
    parser.add_argument("checkpoint", help="a checkpoint written by a generated program")
    args = parser.parse_args()
    try:
        ck = load(args.checkpoint)
    except (OSError, ValueError) as e:
        sys.exit(f"{parser.prog}: error: {e}")
    print(f"network {ck.network} (hash {ck.hash:016x}), iteration {ck.iteration}, seed {ck.seed}")
    for pname, arr in ck.params.items():
        print(f"  {pname:32s} {'x'.join(map(str, arr.shape)):>16s}  |w| {np.abs(arr).mean():.4g}")
    for sname, arr in ck.state.items():
        print(f"  {sname:32s} {arr.size:>16d}  mean {arr.mean():.4g}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # `swnc_checkpoint.py F | head`: the reader stopped; so do we
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
