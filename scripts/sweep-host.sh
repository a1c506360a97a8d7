#!/usr/bin/env bash
# sweep-host.sh [--remove]: lists (and with --remove deletes) what runs left
# on this Docker host: containers of kind and CAPD clusters (label
# io.x-k8s.kind.cluster), containers the harness made (labels tkg-e2e.run,
# tkg-e2e.vcsim) or a script did (named tkg-e2e-*: image builds, decoys),
# the vcsim servers' networks (tkg-e2e-vsim-*), and anonymous volumes no
# container uses any more (a node's /var, GBs each).
#
# Why CI needs it: a machine keeps its disk between a session, the CI run
# after it and the next session. A run killed with its session (no Ctrl-C,
# so no cleanup) leaves its clusters; the Docker daemon restarts them when
# it next starts, and a dozen CAPD nodes then share the 2 cores with every
# CI section (seen 2026-11-28: the second half took 1262 s instead of 246,
# 13 sections failed on timeouts; 27 GB of volumes were orphaned). A run's
# own cleanup acts only on what it recorded (make clean-run ARTIFACTS=...);
# this is for a host nobody else uses, which is why it needs --remove.
#
# Exit status: 0 when the host is clean (or was cleaned with --remove),
# 1 when something is left (listed), 2 when Docker cannot be reached.
set -euo pipefail
. "$(dirname "$0")/lib-script.sh" sweep-host
remove=
case ${1:-} in
  --remove) remove=1 ;;
  "") ;;
  *) die "usage: $0 [--remove]" ;;
esac
docker info >/dev/null 2>&1 || { echo "sweep-host: Docker is not reachable (is the daemon up? make testbed starts it)" >&2; exit 2; }

say "load average: $(cut -d' ' -f1-3 /proc/loadavg) (2 cores: above 2 means sections will wait for CPU)"
containers=$( { docker ps -aq --filter label=io.x-k8s.kind.cluster
  docker ps -aq --filter label=tkg-e2e.run
  docker ps -aq --filter label=tkg-e2e.vcsim
  docker ps -aq --filter name=^tkg-e2e-; } | sort -u)
networks=$(docker network ls --format '{{.Name}}' | grep -E '^tkg-e2e-vsim-' || true)
left=0
if [ -n "$containers" ]; then
  n=$(wc -w <<<"$containers"); left=$((left + n))
  say "$n container(s) left by earlier runs:"
  # shellcheck disable=SC2086
  docker inspect -f '  {{.Name}}  {{.State.Status}}  created {{.Created}}  cluster={{index .Config.Labels "io.x-k8s.kind.cluster"}}' $containers | sed 's|  /|  |'
fi
if [ -n "$networks" ]; then
  left=$((left + $(wc -w <<<"$networks")))
  say "network(s) of vcsim servers: $(tr '\n' ' ' <<<"$networks")"
fi
if [ -z "$remove" ]; then
  # Dangling volumes are only counted here: without --remove, the containers
  # above still hold theirs.
  vols=$(docker volume ls -q --filter dangling=true | grep -cE '^[0-9a-f]{64}$' || true)
  say "anonymous volumes no container uses: $vols"
  [ "$left" -eq 0 ] && { say "clean"; exit 0; }
  say "left: $left; remove them (only on a host no one else runs on) with: bash scripts/sweep-host.sh --remove"
  exit 1
fi
free_gib() { df -BG --output=avail "$(docker info -f '{{.DockerRootDir}}')" | tail -1 | tr -dc 0-9; }
before=$(free_gib)
# shellcheck disable=SC2086
[ -z "$containers" ] || docker rm -f -v $containers >/dev/null
for net in $networks; do docker network rm "$net" >/dev/null; done
vols=$(docker volume ls -q --filter dangling=true | grep -E '^[0-9a-f]{64}$' || true)
# shellcheck disable=SC2086
[ -z "$vols" ] || docker volume rm $vols >/dev/null
say "removed $left container(s) and network(s), $(wc -w <<<"$vols") anonymous volume(s); free disk ${before} -> $(free_gib) GiB"
