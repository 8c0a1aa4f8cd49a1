#!/bin/sh
# Build greet and install it under PREFIX (bin/greet, lib/libgreet.so.1, lib/libgreet.so,
# lib/libgreet.a, include/greet.h).
#   sh build.sh PREFIX
set -eu
mkdir -p "${1:?usage: sh build.sh PREFIX}"
prefix=$(cd "$1" && pwd)
make -j2
make install PREFIX="$prefix"
