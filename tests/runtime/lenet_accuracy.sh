#!/bin/sh
# The main job: LeNet on Fashion-MNIST for 5 epochs must reach at least 89% test accuracy
# (PyTorch reaches 89.9% with the same net and solver). Usage: lenet_accuracy.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
"$swnc" "$root/examples/lenet.swn" -o lenet || exit 1
./lenet --threads 2 --display 500 --log lenet.json || exit 1
accuracy=$(grep '"test"' lenet.json | tail -1 | sed 's/.*"accuracy":\([0-9.]*\).*/\1/')
echo "final test accuracy: $accuracy"
python3 -c "import sys; sys.exit(0 if $accuracy >= 0.89 else 1)" || { echo "FAIL: below 89%"; exit 1; }
