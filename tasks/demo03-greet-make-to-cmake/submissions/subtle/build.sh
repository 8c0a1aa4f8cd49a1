#!/bin/sh
# Build greet with CMake and install it under PREFIX (bin/greet, lib/libgreet.so.1,
# lib/libgreet.so, lib/libgreet.a, include/greet.h).
#   sh build.sh PREFIX
set -eu
mkdir -p "${1:?usage: sh build.sh PREFIX}"
prefix=$(cd "$1" && pwd)
cmake -S . -B _build -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build _build -j2
cmake --install _build >/dev/null
