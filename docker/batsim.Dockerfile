# Real Batsim 4.2.1 + batsched 1.4.0 built from upstream's git repositories at the pinned revisions,
# by the project's own build script (the same one CI runs on the offline archives).
#   docker build -f docker/batsim.Dockerfile -t schedlab-batsim .
FROM debian:bookworm
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates git xz-utils && rm -rf /var/lib/apt/lists/*
COPY scripts/install-batsim.sh /build/install-batsim.sh
RUN bash /build/install-batsim.sh /opt/batsim --git && rm -rf /opt/batsim/src /var/lib/apt/lists/*
ENV PATH=/opt/batsim/bin:$PATH
WORKDIR /data
CMD ["batsim", "--version"]
