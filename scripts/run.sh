#!/usr/bin/env bash
# The main job: builds swnc, compiles the LeNet example and trains it on Fashion-MNIST for
# 5 epochs (about a minute on 2 cores), showing progress and test accuracy after each epoch.
# Installs missing packages first. Extra arguments go to the training program (see --help).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
mkdir -p "$root/out"
"$root/build/driver/swnc" "$root/examples/lenet.swn" -o "$root/out/lenet"
cd "$root/out"
./lenet --checkpoint lenet.ckpt --log lenet.json "$@"
