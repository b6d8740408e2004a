#!/usr/bin/env bash
# A single-node Slurm with accounting, on this machine, for trying `--dask slurm` and `sacct` exports
# (and for the tests marked `slurm`): munge, MariaDB (a private data folder), slurmdbd, slurmctld and
# slurmd, each started in the foreground in the background, their PIDs recorded. Every file lives in
# a work folder, never the system's /etc/slurm; the ports are not Slurm's defaults, so a system Slurm
# is left alone. Needs root and apt-get (Debian 12: Slurm 22.05).
#
# usage: scripts/slurm-local.sh up [--cpus N]  start what is not running yet; prints the SLURM_CONF to export
#        scripts/slurm-local.sh down           cancel this cluster's jobs, stop exactly the PIDs `up` started
#        scripts/slurm-local.sh status         say what runs (exit 0 when the cluster answers)
#   --cpus N  the CPUs the node declares (default: this machine's); more than the cores lets sleep jobs
#             share them (tests run Dask workers beside a batch of sacct jobs)
# Work folder: $SCHEDLAB_SLURM_DIR, else ${XDG_CACHE_HOME:-~/.cache}/schedlab/slurm. Exit 3 (one line)
# where it cannot run: no root, no apt-get; exit 1 (one line) on a failure: a daemon that does not
# come up (its log is named).
set -euo pipefail

WORK=${SCHEDLAB_SLURM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/slurm}
CLUSTER=schedlab
NODE=$(hostname -s)
CTLD_PORT=${SCHEDLAB_SLURMCTLD_PORT:-16817}
SLURMD_PORT=${SCHEDLAB_SLURMD_PORT:-16818}
DBD_PORT=${SCHEDLAB_SLURMDBD_PORT:-16819}
DB_PORT=${SCHEDLAB_SLURM_DB_PORT:-16306}
PACKAGES="slurm-wlm slurmdbd munge mariadb-server"
PIDS=$WORK/pids  # "PID NAME" per daemon this script started, in start order

SERVICE=slurm-local
# shellcheck source=scripts/services-lib.sh
. "$(dirname "$0")/services-lib.sh"

action=${1:-}; shift || true
CPUS=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --cpus) CPUS=${2:?--cpus needs a number}; shift 2 ;;
    *) echo "slurm-local: unknown argument $1" >&2; exit 2 ;;
  esac
done
export SLURM_CONF=$WORK/etc/slurm.conf

answers() { timeout 10 sinfo -h -o %T >/dev/null 2>&1; }

wait_for() {  # WHAT SECONDS CMD...: until CMD succeeds
  local what=$1 seconds=$2; shift 2
  local i
  for ((i = 0; i < seconds * 4; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  fail "$what did not come up within $seconds s"
}

up() {
  [ "$(id -u)" = 0 ] || cannot "needs root (it installs packages and starts munge, MariaDB and Slurm's daemons)"
  if [ -f "$SLURM_CONF" ] && ours slurmctld >/dev/null && ours slurmd >/dev/null && answers; then
    say "already running ($WORK)"; echo "$SLURM_CONF"; return 0
  fi
  apt_install 80 $PACKAGES
  mkdir -p "$WORK"/{etc,state,spool,log,run}
  chmod 755 "$WORK"
  touch "$PIDS"

  # munge: the system's key and socket; a running munged (ours or not) is used as it is
  if ! pgrep -x munged >/dev/null; then
    [ -f /etc/munge/munge.key ] || { mungekey --create --keyfile=/etc/munge/munge.key >&2 && chown munge: /etc/munge/munge.key; }
    mkdir -p /run/munge && chown munge: /run/munge
    start munged "$WORK/log/munged.log" setpriv --reuid=munge --regid=munge --init-groups munged -F
    wait_for munge 10 sh -c 'munge -n | unmunge'
  fi

  # MariaDB in a private data folder, on loopback
  if ! ours mariadbd >/dev/null; then
    if [ ! -d "$WORK/db/mysql" ]; then
      say "mariadb-install-db into $WORK/db"
      mariadb-install-db --user=root --datadir="$WORK/db" --auth-root-authentication-method=normal \
        > "$WORK/log/mariadb-install.log" 2>&1 || fail "mariadb-install-db failed (log: $WORK/log/mariadb-install.log)"
    fi
    start mariadbd "$WORK/log/mariadbd.log" mariadbd --no-defaults --user=root --datadir="$WORK/db" \
      --socket="$WORK/run/mysql.sock" --port="$DB_PORT" --bind-address=127.0.0.1 --pid-file="$WORK/run/mariadbd.pid" \
      --skip-name-resolve
    wait_for MariaDB 30 mariadb --no-defaults --socket="$WORK/run/mysql.sock" -e 'SELECT 1'
    mariadb --no-defaults --socket="$WORK/run/mysql.sock" -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1'
      IDENTIFIED BY 'slurm'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;"
  fi

  local memory_mb
  memory_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  cat > "$WORK/etc/slurm.conf" <<EOF
# written by scripts/slurm-local.sh: one node, accounting through slurmdbd
ClusterName=$CLUSTER
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=30
KillWait=30
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$WORK/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  cat > "$WORK/etc/slurmdbd.conf" <<EOF
# written by scripts/slurm-local.sh
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
AuthType=auth/munge
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
PidFile=$WORK/run/slurmdbd.pid
LogFile=$WORK/log/slurmdbd.log
EOF
  chmod 600 "$WORK/etc/slurmdbd.conf"

  if ! ours slurmdbd >/dev/null; then
    start slurmdbd "$WORK/log/slurmdbd.out" slurmdbd -D
    wait_for "slurmdbd (log: $WORK/log/slurmdbd.log)" 60 sacctmgr -n list cluster
  fi
  sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER" || sacctmgr -i add cluster "$CLUSTER" >&2
  if ! ours slurmctld >/dev/null; then
    start slurmctld "$WORK/log/slurmctld.out" slurmctld -D -i
    wait_for "slurmctld (log: $WORK/log/slurmctld.log)" 30 answers
  fi
  if ! ours slurmd >/dev/null; then
    start slurmd "$WORK/log/slurmd.out" slurmd -D -N "$NODE"
  fi
  wait_for "the node (log: $WORK/log/slurmd.log)" 60 sh -c "sinfo -h -N -o %T | grep -qx idle"
  say "up: $CPUS CPUs on $NODE; export SLURM_CONF=$SLURM_CONF"
  echo "$SLURM_CONF"
}

down() {
  [ -f "$PIDS" ] || { say "nothing started here ($WORK)"; return 0; }
  if ours slurmctld >/dev/null; then  # this cluster's jobs first: no job step outlives its daemons
    local jobs
    jobs=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ') || jobs=""  # a controller that does not answer: none
    if [ -n "${jobs// /}" ]; then
      say "scancel $jobs"
      scancel $jobs 2>/dev/null || true
      for _ in $(seq 60); do [ -z "$(squeue -h -o %i 2>/dev/null || true)" ] && break; sleep 0.5; done
    fi
  fi
  local name
  for name in slurmd slurmctld slurmdbd mariadbd munged; do stop "$name"; done  # the reverse of the start order
  rm -f "$PIDS"
}

status() {
  local pid name up=1
  [ -f "$PIDS" ] && while read -r pid name; do
    if alive "$pid" "$name"; then say "$name: pid $pid"; else say "$name: not running (pid $pid)"; up=0; fi
  done < "$PIDS"
  if answers; then say "the cluster answers (SLURM_CONF=$SLURM_CONF)"; [ $up = 1 ]; else say "the cluster does not answer"; return 1; fi
}

case "$action" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) sed -n '2,14p' "$0" >&2; exit 2 ;;
esac
