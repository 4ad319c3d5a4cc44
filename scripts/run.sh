#!/usr/bin/env bash
# The main job: builds swnc and compiles the LeNet example. Installs missing packages first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
"$root/build/driver/swnc" --stats "$root/examples/lenet.swn"
