#!/usr/bin/python3
"""Mutation fuzzing of every reader of untrusted files, through the commands users run:

  swn         swnc --emit=ir FILE.swn                       (.swn text)
  prototxt    swnc --emit=ir FILE.prototxt                  (Caffe network text)
  caffemodel  swnc import-caffe NET.prototxt --weights FILE (Caffe weights, protobuf binary)
  packed      PROGRAM --train DIR --iterations 1            (a swnc-data pack: shard, manifest, mean)
  checkpoint  PROGRAM --resume FILE --iterations 0          (a checkpoint)
  profile     swnc-sim --profile FILE                       (a --comm-profile)
  tuning      swnc --tune=FILE NET.swn --emit=ir            (a tuning file)

Seeds are made here, by the build under test (its programs write the checkpoint, profile and
tuning seeds; swnc-data packs images written here; caffemodel.py writes the weights). Each
input is a seed with 1 to 4 stacked mutations (bits and bytes flipped, ranges deleted,
duplicated or inserted, 32- and 64-bit boundary integers written over, numbers in text made
huge or negative, lines repeated, the file cut short); most checkpoints then get their checksum
made right, so that the mutation reaches the header and tables behind it. A run fails if it crashes (a signal, a
sanitizer report, an exit status other than 0, 1 or 2), runs over --timeout seconds, or prints
over 1 MB; failing inputs are kept in WORK/failures/. Deterministic for a --seed.

  mutate.py --build BUILD --root ROOT --work WORK [--count N] [--readers a,b] [--seed S]
            [--timeout SECONDS] [--jobs J]
"""
import argparse
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

OUTPUT_LIMIT = 1 << 20
BOUNDARY_INTS = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
                 2**53, 2**62, 2**63 - 1, 2**63, 2**64 - 1]
TEXT_NUMBERS = ["0", "-1", "2147483648", "9223372036854775808", "1e308", "-1e308", "nan", "inf",
                "4294967296", "99999999999999999999999999", "0.0000001"]


def png(path, width, height, seed):
    """A gray PNG of noise, written with zlib alone."""
    rng = random.Random(seed)
    rows = b"".join(b"\0" + bytes(rng.randrange(256) for _ in range(width)) for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def with_checksum(data):
    """A checkpoint's bytes with its trailing FNV-1a checksum made right again."""
    h = 14695981039346656037
    for byte in data[:-8]:
        h = ((h ^ byte) * 1099511628211) & (2**64 - 1)
    return data[:-8] + struct.pack("<Q", h)


def run(cmd, cwd, timeout, env=None):
    """(status or None if it timed out, output bytes up to the limit + 1, seconds)."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    out = b""
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.communicate()
        return None, out, time.monotonic() - start
    return p.returncode, out[:OUTPUT_LIMIT + 1], time.monotonic() - start


class Fuzzer:
    def __init__(self, args):
        self.a = args
        self.build, self.root, self.work = args.build, args.root, args.work
        self.swnc = os.path.join(self.build, "driver/swnc")
        self.sim = os.path.join(self.build, "tools/swnc-sim")
        self.data = os.path.join(self.build, "tools/swnc-data")
        self.env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
                        UBSAN_OPTIONS="print_stacktrace=1", OMPI_MCA_rmaps_base_oversubscribe="1",
                        OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        self.seeds = {}

    def must(self, cmd, what):
        status, out, _ = run(cmd, self.work, 600, self.env)
        if status != 0:
            sys.exit(f"mutate.py: cannot make the {what} seed: {' '.join(cmd)}\n{out.decode(errors='replace')}")

    # ------------------------------------------------------------------ seeds

    def make_seeds(self):
        w, r = self.work, self.root
        texts = lambda d, ext: sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(ext))
        errors = os.path.join(r, "tests/frontend/errors")
        self.seeds["swn"] = texts(os.path.join(r, "examples"), ".swn") + texts(os.path.join(r, "tests/lib/nets"), ".swn")
        self.seeds["prototxt"] = [os.path.join(r, "tests/frontend/caffe/small_bn.prototxt")] + \
            [f for f in texts(errors, ".prototxt") if "many_errors" not in f]
        small_proto = os.path.join(r, "tests/frontend/caffe/small_bn.prototxt")
        solver = os.path.join(r, "tests/frontend/caffe/small_solver.prototxt")
        self.must([self.swnc, small_proto, "--solver", solver, "-o", "small"], "program")
        self.must(["./small", "--iterations", "2", "--checkpoint", "small.ckpt", "--comm-profile", "small.prof",
                   "--quiet", "--threads", "1"], "checkpoint")
        self.seeds["checkpoint"] = [os.path.join(w, "small.ckpt")]
        with open(os.path.join(w, "hand.prof"), "w") as f:
            f.write("swnc-profile 1\nnetwork n\nbatch 8\nforward 0.01\nbackward 0.02\nupdate 0.001\n"
                    "buckets 2\nbucket 0 bytes 4096 ready 0.005\nbucket 1 bytes 1048576 ready 0.02\n")
        self.seeds["profile"] = [os.path.join(w, "small.prof"), os.path.join(w, "hand.prof")]
        self.must([self.swnc, "tune", "--repeat=1", "--limit=12", small_proto, "--solver", solver, "-o", "small.tune"],
                  "tuning")
        self.seeds["tuning"] = [os.path.join(w, "small.tune")]
        self.make_caffemodel(small_proto)
        self.make_pack()

    def make_caffemodel(self, proto_net):
        proto = os.path.join(self.root, "tests/frontend/caffe/caffe_subset.proto")
        models = os.path.join(self.root, "tests/frontend/caffe/caffemodel.py")
        self.must(["./small", "--iterations", "0", "--epochs", "0", "--checkpoint", "init.ckpt", "--quiet"], "init")
        layers = "conv1:Convolution,bn1:BatchNorm,scale1:Scale=bn1,conv2:Convolution,fc:InnerProduct"
        self.must(["/usr/bin/python3", models, "write", proto, "init.ckpt", layers, "m.caffemodel", "m.npz"],
                  "caffemodel")
        self.seeds["caffemodel"] = [os.path.join(self.work, "m.caffemodel")]
        self.caffe_net = proto_net

    def make_pack(self):
        tree = os.path.join(self.work, "images")
        for c in range(2):
            os.makedirs(os.path.join(tree, f"{c}_class"), exist_ok=True)
            for i in range(3):
                png(os.path.join(tree, f"{c}_class/{i}.png"), 64, 64, 10 * c + i)
        self.must([self.data, "pack", tree, "pack", "--shard-size", "4", "--threads", "1", "--quiet"], "pack")
        self.must([self.swnc, os.path.join(self.root, "tests/lib/nets/packed_small.swn"), "-D", "train.batch=2",
                   "-o", "packed"], "packed program")
        self.seeds["packed"] = [os.path.join(self.work, "pack")]

    # ------------------------------------------------------------------ mutations

    def mutate(self, data, rng, text):
        data = bytearray(data)
        for _ in range(rng.choice((1, 1, 1, 2, 3, 4))):
            n = len(data)
            kind = rng.randrange(9 if text else 7)
            if n == 0 or kind == 0:  # insert random bytes
                at = rng.randint(0, n)
                data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
            elif kind == 1:  # flip a bit
                data[rng.randrange(n)] ^= 1 << rng.randrange(8)
            elif kind == 2:  # set a byte
                data[rng.randrange(n)] = rng.randrange(256)
            elif kind == 3:  # delete a range
                at = rng.randrange(n)
                del data[at:at + rng.randint(1, max(1, n // 8))]
            elif kind == 4:  # duplicate a range
                at = rng.randrange(n)
                data[at:at] = data[at:at + rng.randint(1, max(1, min(4096, n // 4)))]
            elif kind == 5:  # a boundary integer over 4 or 8 bytes
                size = rng.choice((4, 8))
                at = rng.randrange(max(1, n - size + 1))
                data[at:at + size] = struct.pack("<Q", rng.choice(BOUNDARY_INTS))[:size]
            elif kind == 6:  # cut short
                del data[rng.randrange(n):]
            elif kind == 7:  # a number in the text made extreme
                spans = [m.span() for m in re.finditer(rb"-?\d+(\.\d+)?", bytes(data))]
                if spans:
                    s, e = rng.choice(spans)
                    data[s:e] = rng.choice(TEXT_NUMBERS).encode()
            else:  # a line repeated
                lines = bytes(data).split(b"\n")
                i = rng.randrange(len(lines))
                lines[i:i] = [lines[i]] * rng.randint(1, 50)
                data = bytearray(b"\n".join(lines))
        return bytes(data)

    # ------------------------------------------------------------------ one input

    def command(self, reader, path):
        if reader in ("swn", "prototxt"):
            return [self.swnc, "--emit=ir", path]
        if reader == "caffemodel":
            return [self.swnc, "import-caffe", self.caffe_net, "--weights", path, "-o", path + ".swn"]
        if reader == "packed":
            return ["./packed", "--train", path, "--test", path, "--iterations", "1", "--test-size", "2",
                    "--threads", "1", "--quiet"]
        if reader == "checkpoint":
            return ["./small", "--resume", path, "--iterations", "0", "--quiet", "--threads", "1"]
        if reader == "profile":
            return [self.sim, "--profile", path, "--nodes", "1..64"]
        return [self.swnc, "--tune=" + path, os.path.join(self.root, "tests/frontend/caffe/small_bn.prototxt"),
                "--solver", os.path.join(self.root, "tests/frontend/caffe/small_solver.prototxt"), "--emit=ir"]

    def one(self, reader, k):
        rng = random.Random(f"{self.a.seed}:{reader}:{k}")
        seed = rng.choice(self.seeds[reader])
        case = os.path.join(self.work, "cases", f"{reader}-{k}")
        if reader == "packed":  # a pack directory: one of its files mutated
            shutil.copytree(seed, case)
            name = rng.choice(sorted(os.listdir(case)))
            target = os.path.join(case, name)
        else:
            target = case + os.path.splitext(seed)[1]
        with open(seed if reader != "packed" else target, "rb") as f:
            original = f.read()
        text = reader in ("swn", "prototxt", "profile", "tuning") or target.endswith(".txt")
        mutated = self.mutate(original, rng, text)
        if reader == "checkpoint" and len(mutated) >= 8 and rng.random() < 0.7:
            mutated = with_checksum(mutated)  # past the checksum, into the header and tables
        with open(target, "wb") as f:
            f.write(mutated)
        status, out, seconds = run(self.command(reader, case if reader == "packed" else target), self.work,
                                   self.a.timeout, self.env)
        problem = None
        if status is None:
            problem = f"ran over {self.a.timeout} s"
        elif len(out) > OUTPUT_LIMIT:
            problem = "printed over 1 MB"
        elif status not in (0, 1, 2) or b"Sanitizer" in out or b"runtime error:" in out:
            problem = f"crashed (exit {status})"
        if problem:
            keep = os.path.join(self.work, "failures", os.path.basename(case))
            (shutil.copytree if os.path.isdir(case) else shutil.copy)(case if reader == "packed" else target, keep)
            with open(keep + ".log", "wb") as f:
                f.write(out[:65536])
        if reader == "packed":
            shutil.rmtree(case, ignore_errors=True)
        else:
            for leftover in (target, target + ".swn", target + ".ckpt"):
                if os.path.exists(leftover):
                    os.remove(leftover)
        return reader, status, problem, seconds


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--count", type=int, default=500, help="inputs per reader (default 500)")
    p.add_argument("--readers", default="swn,prototxt,caffemodel,packed,checkpoint,profile,tuning")
    p.add_argument("--seed", default="1")
    p.add_argument("--timeout", type=float, default=10)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = p.parse_args()
    a.build, a.root, a.work = (os.path.abspath(x) for x in (a.build, a.root, a.work))
    shutil.rmtree(a.work, ignore_errors=True)
    for d in ("", "cases", "failures"):
        os.makedirs(os.path.join(a.work, d), exist_ok=True)
    fuzzer = Fuzzer(a)
    fuzzer.make_seeds()
    readers = a.readers.split(",")
    jobs = [(r, k) for k in range(a.count) for r in readers]
    stats = {r: {"runs": 0, "accepted": 0, "refused": 0, "failed": 0, "slowest": 0.0} for r in readers}
    failures = []
    with ThreadPoolExecutor(a.jobs) as pool:
        for reader, status, problem, seconds in pool.map(lambda j: fuzzer.one(*j), jobs):
            s = stats[reader]
            s["runs"] += 1
            s["slowest"] = max(s["slowest"], seconds)
            if problem:
                s["failed"] += 1
                failures.append(f"{reader}: {problem}")
            elif status == 0:
                s["accepted"] += 1
            else:
                s["refused"] += 1
    print(f"{'reader':12s} {'inputs':>7s} {'accepted':>9s} {'refused':>8s} {'failed':>7s} {'slowest':>8s}")
    for r in readers:
        s = stats[r]
        print(f"{r:12s} {s['runs']:7d} {s['accepted']:9d} {s['refused']:8d} {s['failed']:7d} {s['slowest']:7.1f}s")
    for f in failures:
        print("FAIL:", f)
    if failures:
        print(f"failing inputs and their output: {os.path.join(a.work, 'failures')}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
