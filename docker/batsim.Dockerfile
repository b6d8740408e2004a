# Real Batsim 4.2.1 + batsched 1.4.0 built from the upstream sources, the way
# ../shared/tools/batsim/build.sh builds them (Debian 12's SimGrid 3.32, meson/ninja).
#   docker build -f docker/batsim.Dockerfile -t schedlab-batsim docker
FROM debian:bookworm
ARG BATSIM_REF=v4.2.1
ARG BATSCHED_REF=17072778995100fc90214ea4910bf5b171adfd0d
ARG LOGURU_REF=v2.1.0
ARG REDOX_REF=b5b9fa31a6fb
ENV PREFIX=/opt/batsim PKG_CONFIG_PATH=/opt/batsim/lib/pkgconfig
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential pkg-config git ca-certificates cmake meson ninja-build libsimgrid-dev \
      libboost-all-dev libzmq3-dev cppzmq-dev rapidjson-dev libpugixml-dev libdocopt-dev libgmp-dev \
      libhiredis-dev libev-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
RUN mkdir -p $PREFIX/lib/pkgconfig $PREFIX/include $PREFIX/bin \
    && printf 'Name: docopt\nDescription: docopt.cpp\nVersion: 0.6.3\nLibs: -ldocopt\nCflags:\n' \
         > $PREFIX/lib/pkgconfig/docopt.pc
# intervalset (upstream's own meson build; installs intervalset.pc)
RUN git clone https://framagit.org/batsim/intervalset.git \
    && cd intervalset && meson setup build --prefix=$PREFIX --buildtype=release && ninja -C build install
# redox (static)
RUN git clone https://github.com/hmartiro/redox.git && cd redox && git checkout $REDOX_REF \
    && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$PREFIX \
         -DCMAKE_POSITION_INDEPENDENT_CODE=ON -Dlib=OFF -Dstatic_lib=ON \
    && cmake --build build -j && cmake --install build && cp build/libredox_static.a $PREFIX/lib/ \
    && printf 'prefix=%s\nName: redox\nDescription: redox\nVersion: 0.3\nLibs: -L${prefix}/lib -lredox_static -lhiredis -lev -pthread\nCflags: -I${prefix}/include\n' \
         $PREFIX > $PREFIX/lib/pkgconfig/redox.pc
# loguru (static)
RUN git clone --branch $LOGURU_REF --depth 1 https://github.com/emilk/loguru.git \
    && cd loguru && g++ -std=c++11 -O2 -fPIC -DLOGURU_WITH_STREAMS=1 -c loguru.cpp -o loguru.o \
    && ar rcs $PREFIX/lib/libloguru.a loguru.o && cp loguru.hpp $PREFIX/include/ \
    && printf 'prefix=%s\nName: loguru\nDescription: loguru\nVersion: 2.1.0\nLibs: -L${prefix}/lib -lloguru -pthread -ldl\nCflags: -I${prefix}/include -DLOGURU_WITH_STREAMS=1\n' \
         $PREFIX > $PREFIX/lib/pkgconfig/loguru.pc
# Batsim and batsched
RUN git clone --branch $BATSIM_REF --depth 1 https://framagit.org/batsim/batsim.git \
    && cd batsim && meson setup build --prefix=$PREFIX --buildtype=release && ninja -C build install
RUN git clone https://framagit.org/batsim/batsched.git && cd batsched && git checkout $BATSCHED_REF \
    && meson setup build --prefix=$PREFIX --buildtype=release && ninja -C build install
ENV PATH=/opt/batsim/bin:$PATH LD_LIBRARY_PATH=/opt/batsim/lib
WORKDIR /data
CMD ["batsim", "--version"]
