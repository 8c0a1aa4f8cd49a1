#!/usr/bin/env bash
# Make sure a Docker engine answers `docker info`. On a machine that ships only the
# client (the development machines), install Debian's docker.io and start dockerd.
set -euo pipefail

if docker info >/dev/null 2>&1; then
    exit 0
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        echo "ensure-docker: no Docker engine and not root; install docker.io and debootstrap first" >&2
        exit 1
    fi
    echo "ensure-docker: installing docker.io and debootstrap from Debian" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
    echo "ensure-docker: starting dockerd (log: /tmp/srb-dockerd.log)" >&2
    nohup dockerd >/tmp/srb-dockerd.log 2>&1 &
    for _ in $(seq 1 60); do
        docker info >/dev/null 2>&1 && break
        sleep 1
    done
fi

docker info >/dev/null 2>&1 || { echo "ensure-docker: dockerd did not come up; see /tmp/srb-dockerd.log" >&2; exit 1; }
echo "ensure-docker: engine $(docker version --format '{{.Server.Version}}') ready" >&2
