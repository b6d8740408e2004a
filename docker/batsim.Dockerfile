# Real Batsim 4.2.1 + batsched 1.4.0, by the project's own build script (the one CI runs).
#   docker build -f docker/batsim.Dockerfile -t schedlab-batsim .
# Where the build takes them from (docker/batsim-inputs/README.md):
#   - by default, upstream's git repositories at the revisions pinned in scripts/install-batsim.sh;
#   - docker/batsim-inputs/src/: local source trees or NAME.tar.xz archives (install-batsim.sh --src);
#   - docker/batsim-inputs/prefix/: a prefix install-batsim.sh already built on a Debian 12 machine
#     (its bin/, VERSIONS and RUNTIME_PACKAGES): no second compile, only its run-time packages.
# scripts/docker-local.sh fills docker/batsim-inputs/ and builds this image.
ARG DEBIAN_IMAGE=debian:bookworm
FROM ${DEBIAN_IMAGE}
COPY scripts/install-batsim.sh /build/install-batsim.sh
COPY docker/batsim-inputs /build/inputs
RUN set -e; apt-get update; export DEBIAN_FRONTEND=noninteractive; \
    if [ -x /build/inputs/prefix/bin/batsim ]; then \
      apt-get install -y --no-install-recommends $(cat /build/inputs/prefix/RUNTIME_PACKAGES); \
      mkdir -p /opt/batsim && cp -a /build/inputs/prefix/bin /build/inputs/prefix/VERSIONS /opt/batsim/; \
    elif [ -d /build/inputs/src ]; then \
      apt-get install -y --no-install-recommends ca-certificates xz-utils; \
      bash /build/install-batsim.sh /opt/batsim --src /build/inputs/src; \
    else \
      apt-get install -y --no-install-recommends ca-certificates git xz-utils; \
      bash /build/install-batsim.sh /opt/batsim --git; \
    fi; \
    rm -rf /opt/batsim/src /build /var/lib/apt/lists/*; \
    useradd --create-home --uid 10001 --user-group schedlab && mkdir -p /data && chown schedlab:schedlab /data; \
    /opt/batsim/bin/batsim --version
ENV PATH=/opt/batsim/bin:$PATH
USER schedlab
WORKDIR /data
CMD ["batsim", "--version"]
