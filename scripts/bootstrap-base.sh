#!/usr/bin/env bash
# Build srb's base image without a registry: debootstrap a minimal Debian bookworm
# into a folder, tar it (cached under $SRB_CACHE, default ~/.cache/srb) and
# `docker import` it as $SRB_BASE_IMAGE (default srb/base:bookworm).
# A second run finds the image (or the cached tarball) and does nothing more.
set -euo pipefail

image="${SRB_BASE_IMAGE:-srb/base:bookworm}"
cache="${SRB_CACHE:-$HOME/.cache/srb}"
tarball="$cache/base-bookworm-minbase.tar"
packages="ca-certificates"

if docker image inspect "$image" >/dev/null 2>&1 && [ "${1:-}" != "--force" ]; then
    echo "bootstrap-base: $image present" >&2
    exit 0
fi

mkdir -p "$cache"
if [ ! -s "$tarball" ]; then
    mirror="${SRB_DEBIAN_MIRROR:-}"
    if [ -z "$mirror" ]; then
        mirror=$( (cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true) \
            | grep -E '^(URIs:|deb )' | grep -v security | head -n1 | awk '{print $2}' || true)
    fi
    mirror="${mirror:-http://deb.debian.org/debian}"
    root=$(mktemp -d /tmp/srb-base.XXXXXX)
    trap 'rm -rf "$root"' EXIT
    echo "bootstrap-base: debootstrap bookworm from $mirror" >&2
    debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" >/tmp/srb-debootstrap.log 2>&1 \
        || { echo "bootstrap-base: debootstrap failed; see /tmp/srb-debootstrap.log" >&2; exit 1; }
    # point apt inside the image at the same mirror, drop caches
    echo "deb $mirror bookworm main" > "$root/etc/apt/sources.list"
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
fi

echo "bootstrap-base: importing $tarball as $image" >&2
docker import --change 'CMD ["/bin/bash"]' --change 'ENV LANG=C.UTF-8' "$tarball" "$image" >/dev/null
docker image inspect "$image" --format '{{.Id}}' >&2
