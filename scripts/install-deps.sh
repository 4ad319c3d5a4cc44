#!/usr/bin/env bash
# Installs the Debian packages swnc needs, and only those that are missing.
# Idempotent: a second run installs nothing and touches no package list.
#   scripts/install-deps.sh          build + run dependencies
#   scripts/install-deps.sh --test   also the test oracles (python3-torch, python3-torchvision)
#                                    and clang-format
set -euo pipefail

packages=(flex bison cmake make gcc clang libclang-rt-14-dev llvm-dev
          libopenmpi-dev openmpi-bin zlib1g-dev libturbojpeg0-dev libpng-dev
          dataset-fashion-mnist graphviz python3-matplotlib python3-numpy)
if [[ "${1:-}" == "--test" ]]; then
  packages+=(python3-torch python3-torchvision clang-format python3-protobuf protobuf-compiler
            python3-pil python3-skimage)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
