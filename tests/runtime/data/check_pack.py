#!/usr/bin/python3
"""An independent reader of swnc-data's format (docs/runtime.md, "Packed datasets"), to check
a pack against its source images.

    check_pack.py pixels DIR        every record of a pixel pack equals its source image decoded
                                    by PIL: exactly for PNG, within 1 level for JPEG
    check_pack.py jpeg DIR          every JPEG record of a pack of JPEG files is the file itself
    check_pack.py shapes DIR H W    every record is H x W (0 0: report the shapes seen)
    check_pack.py labels DIR        the records' labels match their class folders, in order
    check_pack.py offset DIR IMAGE  the byte offset of record IMAGE's first byte, and its shard

Sources are found through DIR/../<source>.list ('path label' lines, in packing order) or a
class-folder tree in sorted order (SOURCE given as the third argument)."""
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image


def manifest(d):
    m = {}
    for line in open(os.path.join(d, "dataset.txt")):
        k, _, v = line.strip().partition(" ")
        m[k] = v
    return m


def shard(path):
    data = open(path, "rb").read()
    assert data[:8] == b"SWNSHARD", path
    version, storage, count, first, index_off, stats_off, index_crc, header_crc = struct.unpack(
        "<IIQQQQI4xI", data[8:60])
    assert header_crc == zlib.crc32(data[:56]), path
    index = data[index_off:index_off + 32 * count]
    assert zlib.crc32(index) == index_crc, path
    records = []
    for i in range(count):
        off, length, crc, label, h, w, c = struct.unpack("<QIIiHHB", index[32 * i:32 * i + 25])
        body = data[off:off + length]
        assert zlib.crc32(body) == crc, (path, i)
        records.append(dict(label=label, h=h, w=w, c=c, body=body, offset=off, storage=storage))
    return records


def records(d):
    m = manifest(d)
    out = []
    for k in range(int(m["shards"])):
        for r in shard(os.path.join(d, "shard-%05d.swd" % k)):
            r["shard"] = k
            out.append(r)
    assert len(out) == int(m["images"]), (len(out), m["images"])
    return m, out


def sources(tree):
    folders = sorted(f for f in os.listdir(tree) if not f.startswith("."))
    for label, f in enumerate(folders):
        names = sorted(n for n in os.listdir(os.path.join(tree, f))
                       if n.lower().endswith((".png", ".jpg", ".jpeg")))
        for n in names:
            yield os.path.join(tree, f, n), label


def main():
    mode, d = sys.argv[1], sys.argv[2]
    m, recs = records(d)
    if mode == "offset":
        r = recs[int(sys.argv[3])]
        print(r["offset"], r["shard"])
        return
    if mode == "shapes":
        want = (int(sys.argv[3]), int(sys.argv[4]))
        shapes = sorted({(r["h"], r["w"]) for r in recs})
        if want == (0, 0):
            print(" ".join("%dx%d" % s for s in shapes))
        else:
            assert shapes == [want], shapes
        return
    src = list(sources(sys.argv[3]))
    assert len(src) == len(recs), (len(src), len(recs))
    worst = 0
    for (path, label), r in zip(src, recs):
        assert r["label"] == label, (path, r["label"], label)
        if mode == "jpeg":
            if path.lower().endswith((".jpg", ".jpeg")):
                assert r["body"] == open(path, "rb").read(), path
        elif mode == "pixels":
            want = np.asarray(Image.open(path).convert("RGB" if r["c"] == 3 else "L"))
            got = np.frombuffer(r["body"], np.uint8).reshape(want.shape)
            diff = int(np.abs(want.astype(int) - got).max())
            if path.endswith(".png"):
                assert diff == 0, (path, diff)
            worst = max(worst, diff)
    assert worst <= 1, worst
    print("ok: %d records (largest JPEG decoding difference %d)" % (len(recs), worst))


main()
