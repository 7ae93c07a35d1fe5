#!/usr/bin/env bash
# Debian's Vulkan loader (libvulkan1) unpacked into build-deps/vulkan/ (git-ignored), for a GPU machine that has the
# NVIDIA driver's Vulkan ICD but no loader and no network: run this here (it needs apt), then carry build-deps/vulkan
# to that machine; tools/gpu-check.sh puts it on LD_LIBRARY_PATH when the system has no libvulkan.so.1.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=build-deps/vulkan
rm -rf "$dest" && mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download libvulkan1 >/dev/null)
dpkg-deb -x "$tmp"/libvulkan1_*.deb "$tmp/x"
find "$tmp/x" -name 'libvulkan.so.1*' -exec cp -a {} "$dest/" \;
ls "$dest"/libvulkan.so.1 >/dev/null
echo "$dest: $(ls "$dest" | tr '\n' ' ')(from $(basename "$tmp"/libvulkan1_*.deb))"
