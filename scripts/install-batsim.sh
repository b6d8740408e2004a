#!/usr/bin/env bash
# Build real Batsim 4.2.1 and batsched 1.4.0 (the reference simulator and schedulers schedlab is
# checked against) into a prefix outside the repository. Idempotent: a finished build is reused.
#
# usage: scripts/install-batsim.sh [PREFIX] [--src DIR | --git]
#   PREFIX  default: $SCHEDLAB_BATSIM_PREFIX, else ${XDG_CACHE_HOME:-~/.cache}/schedlab/batsim-4.2.1
#   --src DIR  sources from DIR: NAME/ source trees or NAME.tar.xz archives for NAME in
#              batsim batsched intervalset loguru redox (e.g. an offline mirror)
#   --git      clone upstream's git repositories at the pinned revisions below (needs network)
#   default: $SCHEDLAB_BATSIM_SRC if set, else ../shared/tools/batsim/src beside the repository when it
#            exists (the project's offline archives, used by CI), else --git.
# Needs Debian/Ubuntu packages (SimGrid 3.32, boost, ZeroMQ, ...): installed with apt-get when run as
# root, otherwise the missing ones are listed. About 10 minutes on 2 cores the first time.
# Prints the prefix on stdout (everything else goes to stderr): PREFIX/bin/{batsim,batsched}.
set -euo pipefail

# ------------------------------------------------------------------ pinned upstream revisions
# (each URL and revision can be overridden through the variable of the same name, e.g. a mirror)
BATSIM_GIT=${BATSIM_GIT:-https://framagit.org/batsim/batsim.git}
BATSIM_REV=${BATSIM_REV:-v4.2.1}                        # commit b5463dba818d
BATSCHED_GIT=${BATSCHED_GIT:-https://framagit.org/batsim/batsched.git}
BATSCHED_REV=${BATSCHED_REV:-17072778995100fc90214ea4910bf5b171adfd0d}   # batsched 1.4.0
INTERVALSET_GIT=${INTERVALSET_GIT:-https://framagit.org/batsim/intervalset.git}
INTERVALSET_REV=${INTERVALSET_REV:-v1.2.0}
LOGURU_GIT=${LOGURU_GIT:-https://github.com/emilk/loguru.git}
LOGURU_REV=${LOGURU_REV:-v2.1.0}
REDOX_GIT=${REDOX_GIT:-https://github.com/hmartiro/redox.git}
REDOX_REV=${REDOX_REV:-b5b9fa31a6fb}
APT_PACKAGES="build-essential pkg-config git cmake meson ninja-build xz-utils libsimgrid-dev libboost-all-dev
  libzmq3-dev cppzmq-dev rapidjson-dev libpugixml-dev libdocopt-dev libgmp-dev libhiredis-dev libev-dev"

HERE=$(cd "$(dirname "$0")/.." && pwd)
PREFIX="" SOURCE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --src) SOURCE=${2:?--src needs a directory}; shift 2 ;;
    --git) SOURCE=git; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "install-batsim: unknown option $1" >&2; exit 2 ;;
    *) PREFIX=$1; shift ;;
  esac
done
PREFIX=${PREFIX:-${SCHEDLAB_BATSIM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/batsim-4.2.1}}
if [ -z "$SOURCE" ]; then
  if [ -n "${SCHEDLAB_BATSIM_SRC:-}" ]; then SOURCE=$SCHEDLAB_BATSIM_SRC
  elif [ -d "$HERE/../shared/tools/batsim/src" ]; then SOURCE=$HERE/../shared/tools/batsim/src
  else SOURCE=git; fi
fi
say() { echo "[install-batsim $(date +%H:%M:%S)] $*" >&2; }

runtime_packages() {  # PREFIX/RUNTIME_PACKAGES: the Debian packages the binaries load (docker/batsim.Dockerfile
  # installs these to run a prefix built here in an image, without compiling it again)
  local lib
  for lib in $(ldd "$PREFIX/bin/batsim" "$PREFIX/bin/batsched" | awk '/=> \// {print $3}' | sort -u); do
    dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null || true
  done | cut -d: -f1 | sort -u | tr '\n' ' ' > "$PREFIX/RUNTIME_PACKAGES"
}
if [ -x "$PREFIX/bin/batsim" ] && [ -x "$PREFIX/bin/batsched" ] && [ -f "$PREFIX/VERSIONS" ]; then
  [ -s "$PREFIX/RUNTIME_PACKAGES" ] || runtime_packages
  say "already built in $PREFIX"; echo "$PREFIX"; exit 0
fi
mkdir -p "$PREFIX"/{bin,lib/pkgconfig,include,src}
PREFIX=$(cd "$PREFIX" && pwd)
SRC=$PREFIX/src
JOBS=${JOBS:-$(nproc)}
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}

# ------------------------------------------------------------------ 1. system packages
missing=$(for p in $APT_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done | tr '\n' ' ')
if [ -n "${missing// /}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "apt-get install $missing"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2
  else
    echo "install-batsim: missing system packages (Debian 12 / Ubuntu 24.04 names): $missing" >&2
    echo "install-batsim: install them as root (apt-get install ...) and run this again" >&2
    exit 2
  fi
fi
say "SimGrid $(pkg-config --modversion simgrid), libzmq $(pkg-config --modversion libzmq); sources: $SOURCE"

# ------------------------------------------------------------------ 2. sources
fetch() {  # NAME URL REV -> $SRC/NAME holds the source tree
  local name=$1 url=$2 rev=$3 dir=$SRC/$1
  [ "$(cat "$dir/.schedlab-source" 2>/dev/null)" = "$SOURCE $rev" ] && return 0
  rm -rf "$dir"
  if [ "$SOURCE" = git ]; then
    say "git clone $url @ $rev"
    git clone -q "$url" "$dir" >&2
    git -C "$dir" -c advice.detachedHead=false checkout -q "$rev" >&2
  elif [ -d "$SOURCE/$name" ]; then
    say "copy $SOURCE/$name"
    cp -a "$SOURCE/$name" "$dir"
  elif [ -f "$SOURCE/$name.tar.xz" ]; then
    say "unpack $SOURCE/$name.tar.xz"
    tar -xJf "$SOURCE/$name.tar.xz" -C "$SRC"
    [ -d "$dir" ] || { echo "install-batsim: $name.tar.xz must unpack to a folder named $name/" >&2; exit 2; }
  else
    echo "install-batsim: $SOURCE has neither $name/ nor $name.tar.xz" >&2; exit 2
  fi
  echo "$SOURCE $rev" > "$dir/.schedlab-source"
}
fetch batsim "$BATSIM_GIT" "$BATSIM_REV"
fetch batsched "$BATSCHED_GIT" "$BATSCHED_REV"
fetch intervalset "$INTERVALSET_GIT" "$INTERVALSET_REV"
fetch loguru "$LOGURU_GIT" "$LOGURU_REV"
fetch redox "$REDOX_GIT" "$REDOX_REV"

pc() {  # NAME VERSION LIBS CFLAGS: a pkg-config file in the prefix
  printf 'prefix=%s\nName: %s\nDescription: %s (built by schedlab)\nVersion: %s\nLibs: %s\nCflags: %s\n' \
    "$PREFIX" "$1" "$1" "$2" "$3" "$4" > "$PREFIX/lib/pkgconfig/$1.pc"
}

# ------------------------------------------------------------------ 3. small libraries (static)
# Debian packages none of these (and no docopt.pc): compile them directly, one object each.
pc docopt "$(dpkg-query -W -f='${Version}' libdocopt-dev)" "-ldocopt" ""
if [ ! -f "$PREFIX/lib/libintervalset.a" ]; then
  say "build intervalset"
  cpp=$(find "$SRC/intervalset" -name intervalset.cpp | head -n1)
  hpp=$(find "$SRC/intervalset" -name intervalset.hpp | head -n1)
  g++ -std=c++17 -O2 -fPIC -I"$(dirname "$hpp")" -c "$cpp" -o "$SRC/intervalset.o"
  ar rcs "$PREFIX/lib/libintervalset.a" "$SRC/intervalset.o"
  cp "$hpp" "$PREFIX/include/"
fi
pc intervalset 1.2.0 "-L\${prefix}/lib -lintervalset" "-I\${prefix}/include"
if [ ! -f "$PREFIX/lib/libloguru.a" ]; then
  say "build loguru"
  g++ -std=c++11 -O2 -fPIC -DLOGURU_WITH_STREAMS=1 -c "$SRC/loguru/loguru.cpp" -o "$SRC/loguru.o"
  ar rcs "$PREFIX/lib/libloguru.a" "$SRC/loguru.o"
  cp "$SRC/loguru/loguru.hpp" "$PREFIX/include/"
fi
pc loguru 2.1.0 "-L\${prefix}/lib -lloguru -pthread -ldl" "-I\${prefix}/include -DLOGURU_WITH_STREAMS=1"
if [ ! -f "$PREFIX/lib/libredox_static.a" ]; then
  say "build redox (cmake)"
  cmake -S "$SRC/redox" -B "$SRC/redox/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -Dlib=OFF -Dstatic_lib=ON > "$SRC/redox.log" 2>&1
  cmake --build "$SRC/redox/build" -j "$JOBS" >> "$SRC/redox.log" 2>&1
  cmake --install "$SRC/redox/build" >> "$SRC/redox.log" 2>&1
  cp "$SRC/redox/build/libredox_static.a" "$PREFIX/lib/"
fi
pc redox 0.3 "-L\${prefix}/lib -lredox_static -lhiredis -lev -pthread" "-I\${prefix}/include"

# ------------------------------------------------------------------ 4. batsim and batsched (meson)
meson_build() {  # NAME: configure, build and install $SRC/NAME
  local name=$1
  say "build $name (meson + ninja, release; log in $SRC/$name.log)"
  rm -rf "$SRC/$name/build"
  if ! ( cd "$SRC/$name" && meson setup build --prefix="$PREFIX" --buildtype=release \
         && ninja -C build -j "$JOBS" && ninja -C build install ) > "$SRC/$name.log" 2>&1; then
    tail -n 30 "$SRC/$name.log" >&2
    echo "install-batsim: $name failed to build (log: $SRC/$name.log)" >&2
    exit 1
  fi
}
# Without .git, meson would label outputs "4.2.1" where a checkout says "v4.2.1" (schedule.csv's
# batsim_version column): pin the label so both routes write the same files.
sed -i "s/^batversion = meson.project_version()$/batversion = '$BATSIM_REV'/" "$SRC/batsim/meson.build"
[ -x "$PREFIX/bin/batsim" ] || meson_build batsim
[ -x "$PREFIX/bin/batsched" ] || meson_build batsched

{
  echo "built $(date -u +%FT%TZ) from $SOURCE"
  echo "batsim $BATSIM_REV: $("$PREFIX/bin/batsim" --version 2>&1 | head -n1)"
  echo "batsched $BATSCHED_REV: $("$PREFIX/bin/batsched" --version 2>&1 | head -n1)"
  echo "simgrid $(pkg-config --modversion simgrid); intervalset $INTERVALSET_REV; loguru $LOGURU_REV; redox $REDOX_REV"
} > "$PREFIX/VERSIONS"
runtime_packages
say "done: $(tr '\n' ';' < "$PREFIX/VERSIONS")"
echo "$PREFIX"
