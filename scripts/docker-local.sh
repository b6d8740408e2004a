#!/usr/bin/env bash
# Docker on this machine for the compose services (docker/compose.yaml) and the tests marked
# `docker`: the engine (dockerd started here unless one already answers), base images (pulled, or
# made locally with mmdebstrap where no registry can be reached), and the project's two images
# `schedlab` and `schedlab-batsim` (Batsim from a prefix scripts/install-batsim.sh already built, so
# it is not compiled twice; else from the offline archives; else from upstream's git).
#
# usage: scripts/docker-local.sh up [--no-images]   start the engine, build what is missing (prints the
#                                                   environment to export for docker-compose)
#        scripts/docker-local.sh images             rebuild the project's images (after a change)
#        scripts/docker-local.sh down               stop exactly the dockerd `up` started (and remove Docker's
#                                                   bridges and iptables rules it leaves)
#        scripts/docker-local.sh status             say what runs (exit 0 when the engine answers)
# Work folder: $SCHEDLAB_DOCKER_DIR, else ${XDG_CACHE_HOME:-~/.cache}/schedlab/docker. With a
# registry, nothing local is made: `cd docker && docker compose up --build` is the plain path.
# Exit 3 (one line) where it cannot run: no root, no apt-get; exit 1 (one line) on a failure: an
# engine or a build that fails (its log is named).
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=${SCHEDLAB_DOCKER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/docker}
PIDS=$WORK/pids
DOCKER=/usr/bin/docker  # another `docker` client may come first on PATH
DEBIAN_LOCAL=schedlab-base/debian:bookworm
PYTHON_LOCAL=schedlab-base/python:3.11
PACKAGES="docker.io iptables docker-compose"

SERVICE=docker-local
# shellcheck source=scripts/services-lib.sh
. "$HERE/scripts/services-lib.sh"
answers() { timeout 20 "$DOCKER" info >/dev/null 2>&1; }
have_image() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

engine() {
  if answers; then say "the Docker engine answers"; return 0; fi
  mkdir -p "$WORK/log"
  # dockerd may set the FORWARD policy to DROP: `down` puts back what was there
  iptables -S FORWARD 2>/dev/null | awk '$1 == "-P" {print $3}' > "$WORK/forward-policy" || true
  start dockerd "$WORK/log/dockerd.log" dockerd --pidfile "$WORK/dockerd.pid"
  for _ in $(seq 120); do answers && return 0; sleep 0.25; done
  fail "dockerd did not answer within 30 s (log: $WORK/log/dockerd.log)"
}

pulled() {  # IMAGE: present, or pulled now (false where no registry answers)
  have_image "$1" && return 0
  timeout 120 "$DOCKER" pull -q "$1" >/dev/null 2>&1
}

bases() {  # sets PYTHON_IMAGE and DEBIAN_IMAGE: the registry's where it answers, else made here
  if pulled debian:bookworm; then DEBIAN_IMAGE=debian:bookworm
  else
    DEBIAN_IMAGE=$DEBIAN_LOCAL
    if ! have_image "$DEBIAN_LOCAL"; then
      apt_install 20 mmdebstrap
      say "no registry: making $DEBIAN_LOCAL with mmdebstrap (1-2 minutes)"
      mkdir -p "$WORK"
      mmdebstrap --quiet --variant=minbase bookworm "$WORK/bookworm.tar" \
        "deb http://deb.debian.org/debian bookworm main" "deb http://deb.debian.org/debian bookworm-updates main" \
        "deb http://deb.debian.org/debian-security bookworm-security main" > "$WORK/log/mmdebstrap.log" 2>&1 \
        || fail "mmdebstrap failed (log: $WORK/log/mmdebstrap.log)"
      "$DOCKER" import --change 'CMD ["bash"]' "$WORK/bookworm.tar" "$DEBIAN_LOCAL" >/dev/null
      rm -f "$WORK/bookworm.tar"
    fi
  fi
  if pulled python:3.11-slim; then PYTHON_IMAGE=python:3.11-slim
  else
    PYTHON_IMAGE=$PYTHON_LOCAL
    if ! have_image "$PYTHON_LOCAL"; then
      say "no registry: building $PYTHON_LOCAL from $DEBIAN_IMAGE (Debian's Python 3.11 in a venv on PATH)"
      local context=$WORK/python-base
      rm -rf "$context" && mkdir -p "$context/ca"
      # certificates this machine trusts beyond Debian's bundle (a proxy's): pip in the image needs them
      cp /usr/local/share/ca-certificates/*.crt "$context/ca/" 2>/dev/null || true
      cat > "$context/Dockerfile" <<EOF
FROM $DEBIAN_IMAGE
COPY ca/ /usr/local/share/ca-certificates/
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
      ca-certificates python3 python3-venv python3-pip && update-ca-certificates \\
    && python3 -m venv /opt/python && rm -rf /var/lib/apt/lists/*
ENV PATH=/opt/python/bin:\$PATH PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1
CMD ["python3"]
EOF
      "$DOCKER" build -q -t "$PYTHON_LOCAL" "$context" > "$WORK/log/python-base.log" 2>&1 \
        || fail "building $PYTHON_LOCAL failed (log: $WORK/log/python-base.log)"
    fi
  fi
}

batsim_inputs() {  # fills docker/batsim-inputs: a built prefix, else the offline archives, else nothing (git)
  local inputs=$HERE/docker/batsim-inputs
  local prefix=${SCHEDLAB_BATSIM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/batsim-4.2.1}
  rm -rf "$inputs/prefix" "$inputs/src"
  if [ -x "$prefix/bin/batsim" ] && [ -f "$prefix/VERSIONS" ] && grep -q 'bookworm' /etc/os-release 2>/dev/null \
     && bash "$HERE/scripts/install-batsim.sh" "$prefix" >/dev/null 2>&1 && [ -s "$prefix/RUNTIME_PACKAGES" ]; then
    mkdir -p "$inputs/prefix"
    cp -a "$prefix/bin" "$prefix/VERSIONS" "$prefix/RUNTIME_PACKAGES" "$inputs/prefix/"
    say "schedlab-batsim from the prefix $prefix (no compile)"
  elif [ -d "$HERE/../shared/tools/batsim/src" ]; then
    cp -a "$HERE/../shared/tools/batsim/src" "$inputs/src"
    say "schedlab-batsim from the offline archives (a compile: about 20 minutes)"
  else
    say "schedlab-batsim from upstream's git repositories (a compile: about 20 minutes)"
  fi
}

images() {
  bases
  mkdir -p "$WORK/log"
  say "building schedlab (FROM $PYTHON_IMAGE; about 2 minutes the first time)"
  "$DOCKER" build -f "$HERE/docker/Dockerfile" --build-arg "PYTHON_IMAGE=$PYTHON_IMAGE" -t schedlab "$HERE" \
    > "$WORK/log/schedlab-image.log" 2>&1 || fail "building schedlab failed (log: $WORK/log/schedlab-image.log)"
  batsim_inputs
  say "building schedlab-batsim (FROM $DEBIAN_IMAGE)"
  local status=0
  "$DOCKER" build -f "$HERE/docker/batsim.Dockerfile" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" -t schedlab-batsim \
    "$HERE" > "$WORK/log/batsim-image.log" 2>&1 || status=$?
  rm -rf "$HERE/docker/batsim-inputs/prefix" "$HERE/docker/batsim-inputs/src"
  [ $status = 0 ] || fail "building schedlab-batsim failed (log: $WORK/log/batsim-image.log)"
  printf 'SCHEDLAB_PYTHON_IMAGE=%s\nSCHEDLAB_DEBIAN_IMAGE=%s\n' "$PYTHON_IMAGE" "$DEBIAN_IMAGE" > "$WORK/images.env"
}

up() {
  [ "$(id -u)" = 0 ] || cannot "needs root (it installs packages and starts the Docker engine)"
  apt_install 30 $PACKAGES
  engine
  if [ "${1:-}" != --no-images ]; then
    if have_image schedlab && have_image schedlab-batsim && [ -f "$WORK/images.env" ]; then
      say "images schedlab and schedlab-batsim present (scripts/docker-local.sh images rebuilds them)"
    else
      images
    fi
  fi
  say "up: export the lines on stdout for docker-compose (cd docker && docker-compose up --no-build)"
  [ -f "$WORK/images.env" ] && sed 's/^/export /' "$WORK/images.env"
  return 0
}

down() {
  if ! ours dockerd >/dev/null; then say "no dockerd started here ($WORK)"; rm -f "$PIDS"; return 0; fi
  stop dockerd  # it stops its containers and containerd, its child
  # what it leaves behind: its bridges (docker0, br-<12 hex digits> of networks), their iptables rules
  # and chains
  local table rule chain bridge
  for bridge in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' \
                  | grep -E '^(docker0|br-[0-9a-f]{12})$'); do
    ip link delete "$bridge" 2>/dev/null || true
  done
  for table in nat filter; do
    iptables -t "$table" -S 2>/dev/null | grep '^-A' | grep -E 'DOCKER|docker0|br-[0-9a-f]{12}' | sed 's/^-A/-D/' \
      | while read -r rule; do eval "iptables -t $table $rule" 2>/dev/null || true; done || true  # none: fine
    for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^DOCKER/ {print $2}'); do
      iptables -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
  if [ -s "$WORK/forward-policy" ]; then iptables -P FORWARD "$(cat "$WORK/forward-policy")" 2>/dev/null || true; fi
  rm -f "$PIDS" "$WORK/forward-policy"
}

status() {
  local pid
  if pid=$(ours dockerd); then say "dockerd: pid $pid (started here)"; fi
  if answers; then say "the Docker engine answers"
  else say "the Docker engine does not answer"; return 1; fi
  for image in schedlab schedlab-batsim "$DEBIAN_LOCAL" "$PYTHON_LOCAL"; do
    have_image "$image" && say "image $image present"
  done
  return 0
}

case "${1:-}" in
  up) shift; up "$@" ;;
  images) [ "$(id -u)" = 0 ] || cannot "needs root"; engine; images ;;
  down) down ;;
  status) status ;;
  *) sed -n '2,17p' "$0" >&2; exit 2 ;;
esac
