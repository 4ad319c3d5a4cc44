#!/usr/bin/env bash
# The packed loader's throughput: decoded, cropped (224x224), flipped and centred images per
# second with 1 and 2 loader threads, read from a JPEG pack of ImageNet-like photographs
# (python3-skimage's, cut and scaled to 256 x 256..341 and saved as JPEG at quality 90), beside
#   - the training rate of alexnet and resnet50 here on the same pack (can the loader keep up?),
#   - PyTorch's DataLoader + ImageFolder on the same JPEG files with 1 and 2 workers (if Debian's
#     python3-torchvision is installed), the same crop, flip and normalisation.
# The loader figure is a network that does next to nothing (bench/loader_net.swn) trained with
# --threads 1; the pack stores the JPEG files byte for byte, so both sides decode the same bytes.
# Runs alternate swnc and PyTorch and each keeps its best of two. Peak RSS beside each.
#   bench/loader.sh [BUILD_DIR] [IMAGES]      (default: build, 512 images)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
images=${2:-512}
swnc=$build/driver/swnc
data=$build/tools/swnc-data
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# 8 classes of photographs, IMAGES in all
$py - "$images" <<'PY'
import os, sys
import numpy as np
import warnings
from PIL import Image
warnings.simplefilter("ignore")
src = "/usr/lib/python3/dist-packages/skimage/data"
photos = []
for f in sorted(os.listdir(src)):
    try:
        photos.append(Image.open(os.path.join(src, f)).convert("RGB"))
    except Exception:  # the package ships a truncated JPEG on purpose
        pass
photos = [p for p in photos if min(p.size) >= 256]
rng = np.random.default_rng(1)
n = int(sys.argv[1])
for i in range(n):
    p = photos[i % len(photos)]
    w, h = p.size
    s = int(rng.integers(256, min(w, h) + 1))
    x, y = int(rng.integers(0, w - s + 1)), int(rng.integers(0, h - s + 1))
    im = p.crop((x, y, x + s, y + s)).resize((int(rng.integers(256, 342)), 256), Image.BILINEAR)
    os.makedirs("photos/c%d" % (i % 8), exist_ok=True)
    im.save("photos/c%d/%05d.jpg" % (i % 8, i), quality=90)
PY
"$data" pack photos pack --store jpeg --quiet
"$data" info pack
"$swnc" "$root/bench/loader_net.swn" -o loader_net

rate() { grep '"train"' log.json | tail -1 | sed 's/.*"images_per_s":\([0-9.]*\).*/\1/'; }
swnc_loader() { # threads
  /usr/bin/time -f "%M" -o rss ./loader_net --train pack --epochs 3 --threads 1 \
    --loader-threads "$1" --quiet --log log.json --display 4 >/dev/null
  echo "$(rate) $(awk '{ print $1 / 1024 }' rss)"
}
torch_loader() { # workers
  /usr/bin/time -f "%M" -o rss $py "$root/bench/loader_torch.py" photos "$1" 32 3 >out
  echo "$(cat out) $(awk '{ print $1 / 1024 }' rss)"
}
best() { awk "BEGIN { print ($1 > $2) ? $1 : $2 }"; }
have_torch=$($py -c "import torchvision" 2>/dev/null && echo yes || echo no)

printf "\n%-22s %12s %9s %16s %9s %8s\n" "loader" "swnc img/s" "RSS MiB" "PyTorch img/s" "RSS MiB" "ratio"
for t in 1 2; do
  s=0 p=0
  for round in 1 2; do
    read -r r m < <(swnc_loader $t); s=$(best "$s" "$r"); sm=$m
    if [ "$have_torch" = yes ]; then read -r r m < <(torch_loader $t); p=$(best "$p" "$r"); pm=$m; fi
  done
  if [ "$have_torch" = yes ]; then
    printf "%-22s %12.1f %9.0f %16.1f %9.0f %7.2fx\n" "$t thread(s)/worker(s)" "$s" "$sm" "$p" "$pm" "$(awk "BEGIN { print $s / $p }")"
  else
    printf "%-22s %12.1f %9.0f %16s %9s %8s\n" "$t thread(s)" "$s" "$sm" "(no torchvision)" "-" "-"
  fi
  eval "loader_$t=$s"
done

# what training needs: alexnet and resnet50 on the same pack, 2 compute threads
printf "\n%-10s %6s %14s %s\n" "network" "batch" "train img/s" "loader (2 threads) keeps up?"
for net in alexnet resnet50; do
  "$swnc" "$root/examples/$net.swn" -o "$net"
  batch=16
  "./$net" --train pack --test pack --test-size 16 --iterations 6 --batch $batch --threads 2 \
    --quiet --log log.json --display 3 >/dev/null
  r=$(rate)
  printf "%-10s %6d %14.1f %s\n" "$net" "$batch" "$r" \
    "$(awk "BEGIN { print ($loader_2 >= $r) ? \"yes, \" $loader_2 / $r \"x its rate\" : \"no: it needs \" $r / $loader_2 \"x more\" }")"
done
echo "(OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; the loader itself does not use OpenBLAS)"
