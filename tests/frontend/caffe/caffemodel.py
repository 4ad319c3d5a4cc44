#!/usr/bin/python3
"""Writes .caffemodel files with the reference protobuf implementation (python3-protobuf, the
.proto compiled by protoc here) and checks the checkpoints swnc makes of them.

  caffemodel.py write PROTO INIT.ckpt LAYERS OUT.caffemodel EXPECT.npz [--v1] [--wrong-shape]
      PROTO: Caffe's caffe.proto, or tests/frontend/caffe/caffe_subset.proto; INIT.ckpt: a checkpoint of
      the network (its parameter and state tables give the blob shapes); LAYERS: comma-separated
      NAME:TYPE, TYPE one of Convolution, InnerProduct, BatchNorm, Scale=BN (the Scale of the
      batch norm BN). Blob values are random; a BatchNorm's scale factor is 0.5, so its running
      sums are half the statistics. --v1 writes the legacy `layers` form with num/channels/
      height/width blob dims; --wrong-shape gives the first blob one output too many.
  caffemodel.py huge PROTO OUT.caffemodel
      A layer 'conv1' whose one blob claims dims 2^62 x 8 (their product overflows 64 bits).
  caffemodel.py check CKPT EXPECT.npz
      Every expected parameter equal, every running statistic within 1e-6 relative.
  caffemodel.py parse PROTO FILE.prototxt...
      Parses network prototxts with protobuf's own text_format (are they real Caffe files?).
"""
import importlib
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools"))
import swnc_checkpoint as ck  # noqa: E402


def compile_proto(proto):
    out = tempfile.mkdtemp()
    subprocess.run(["protoc", f"--proto_path={os.path.dirname(os.path.abspath(proto))}",
                    f"--python_out={out}", os.path.abspath(proto)], check=True)
    sys.path.insert(0, out)
    return importlib.import_module(os.path.basename(proto).replace(".proto", "_pb2"))


def add_blob(layer, values, v1):
    blob = layer.blobs.add()
    if v1:  # legacy dims: leading ones pad the shape to four
        dims = [1] * (4 - values.ndim) + list(values.shape)
        blob.num, blob.channels, blob.height, blob.width = dims
    else:
        blob.shape.dim.extend(values.shape)
    blob.data.extend(values.ravel().tolist())


def write(proto, init, layers, out, expect, v1=False, wrong_shape=False):
    pb = compile_proto(proto)
    c = ck.load(init)
    rng = np.random.default_rng(5)
    net, expected = pb.NetParameter(name=c.network), {}

    def rand(shape):
        return rng.standard_normal(shape).astype(np.float32)

    for item in layers.split(","):
        name, kind = item.split(":")
        if v1:
            layer = net.layers.add(name=name)
            layer.type = pb.V1LayerParameter.CONVOLUTION if kind == "Convolution" \
                else pb.V1LayerParameter.INNER_PRODUCT
        else:
            layer = net.layer.add(name=name, type=kind.split("=")[0])
        if kind in ("Convolution", "InnerProduct"):
            for role in ("weight", "bias"):
                key = f"{name}.{role}"
                if key not in c.params:
                    continue
                values = rand(c.params[key].shape)
                expected["param:" + key] = values
                if wrong_shape and role == "weight":
                    values = rand((values.shape[0] + 1,) + values.shape[1:])
                    wrong_shape = False
                add_blob(layer, values, v1)
        elif kind == "BatchNorm":
            mean = rand(c.state[f"{name}.running_mean"].shape)
            var = np.abs(rand(mean.shape)) + 0.5
            expected[f"state:{name}.running_mean"], expected[f"state:{name}.running_var"] = mean, var
            for values in (mean * 0.5, var * 0.5, np.array([0.5], np.float32)):
                add_blob(layer, values, v1)
        else:  # Scale=BN
            bn = kind.split("=")[1]
            for role in ("scale", "shift"):
                values = rand(c.params[f"{bn}.{role}"].shape)
                expected[f"param:{bn}.{role}"] = values
                add_blob(layer, values, v1)
    with open(out, "wb") as f:
        f.write(net.SerializeToString())
    np.savez(expect, **expected)


def check(ckpt, expect):
    c = ck.load(ckpt)
    bad = 0
    for key, want in np.load(expect).items():
        kind, name = key.split(":", 1)
        got = c.params[name] if kind == "param" else c.state[name]
        ok = np.array_equal(got, want) if kind == "param" else \
            np.allclose(got, want, rtol=1e-6, atol=0)
        if not ok:
            print(f"FAIL: {name}: differs from the caffemodel's blob (largest difference "
                  f"{np.max(np.abs(got - want))})")
            bad += 1
    if c.iteration != 0 or any(np.any(m != 0) for m in c.momentum.values()):
        print("FAIL: the checkpoint is not at iteration 0 with zero momentum")
        bad += 1
    return bad == 0


def huge(proto, out):
    pb = compile_proto(proto)
    net = pb.NetParameter(name="huge")
    net.layer.add(name="conv1", type="Convolution").blobs.add().shape.dim.extend([1 << 62, 8])
    with open(out, "wb") as f:
        f.write(net.SerializeToString())


def parse(proto, files):
    from google.protobuf import text_format
    pb = compile_proto(proto)
    for path in files:
        with open(path) as f:
            text_format.Parse(f.read(), pb.NetParameter())
    return True


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "write":
        flags = [a for a in args if a.startswith("--")]
        write(*[a for a in args if not a.startswith("--")], v1="--v1" in flags,
              wrong_shape="--wrong-shape" in flags)
    elif mode == "check":
        sys.exit(0 if check(*args) else 1)
    elif mode == "huge":
        huge(*args)
    elif mode == "parse":
        sys.exit(0 if parse(args[0], args[1:]) else 1)
    else:
        sys.exit(__doc__)
