# Shared by scripts/docker-local.sh and scripts/slurm-local.sh (sourced, not run): what a script that
# starts daemons needs to stop exactly those again. The sourcing script sets SERVICE (its name in
# messages) and PIDS (its file of "PID NAME" lines, one per daemon it started, in start order).

say() { echo "[$SERVICE $(date +%H:%M:%S)] $*" >&2; }
fail() { echo "$SERVICE: $*" >&2; exit 1; }
cannot() { echo "$SERVICE: cannot here: $*" >&2; exit 3; }  # the tests skip with this line

alive() {  # PID NAME: that PID runs NAME (not a reused PID)
  [ -r "/proc/$1/comm" ] && [ "$(cat "/proc/$1/comm")" = "$2" ]
}

ours() {  # NAME: the PID of NAME if this script started it and it still runs
  local pid name
  [ -f "$PIDS" ] || return 1
  while read -r pid name; do
    if [ "$name" = "$1" ] && alive "$pid" "$name"; then echo "$pid"; return 0; fi
  done < "$PIDS"
  return 1
}

start() {  # NAME LOG CMD...: CMD started in the background, its output appended to LOG, its PID recorded
  local name=$1 log=$2; shift 2
  mkdir -p "$(dirname "$log")" "$(dirname "$PIDS")"
  "$@" >> "$log" 2>&1 &
  echo "$! $name" >> "$PIDS"
  say "started $name (pid $!, log $log)"
}

stop() {  # NAME: SIGTERM to the daemon this script started, SIGKILL after 20 s
  local pid
  pid=$(ours "$1") || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 80); do alive "$pid" "$1" || break; sleep 0.25; done
  if alive "$pid" "$1"; then kill -KILL "$pid" 2>/dev/null || true; fi
  say "stopped $1 (pid $pid)"
}

apt_install() {  # SECONDS PACKAGE...: those not installed yet (SECONDS: how long it usually takes)
  local usual=$1 missing; shift
  missing=$(for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done | tr '\n' ' ')
  [ -n "${missing// /}" ] || return 0
  command -v apt-get >/dev/null || cannot "needs apt-get to install $missing"
  say "apt-get install $missing (about $usual s)"
  # shellcheck disable=SC2086  # one word a package
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing; }; } >&2 \
    || fail "apt-get install $missing failed"
}
