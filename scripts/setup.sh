#!/usr/bin/env bash
# Installs the Debian packages tickgrad needs to build and test (the Python package too), only those missing.
set -euo pipefail

packages=(build-essential cmake libopenblas-dev pkg-config libzstd-dev libsnappy-dev zlib1g-dev libzip-dev libdeflate-dev tzdata libomp-dev
          clang libclang-rt-14-dev libopenmpi-dev openmpi-bin libdnnl-dev python3-dev python3-venv
          libvulkan-dev glslc mesa-vulkan-drivers protobuf-c-compiler libprotobuf-c-dev libonnx-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
