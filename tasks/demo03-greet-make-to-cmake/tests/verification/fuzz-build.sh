#!/bin/sh
# The probe's fuzz_build: srb runs `sh fuzz-build.sh TREE` with the working folder TREE
# (as the submission's uid, no network) before the tree is fuzzed, and every fuzz candidate
# runs it the same way first. Both trees install greet under stage/ with their own build.sh
# (make for State A, CMake for the port); fuzz_entry names the product, stage/bin/greet.
set -eu
cd "${1:?usage: sh fuzz-build.sh TREE}"
sh build.sh stage
test -x stage/bin/greet
