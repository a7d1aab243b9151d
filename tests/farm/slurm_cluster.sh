#!/usr/bin/env bash
# slurm_cluster.sh - a private, single-node Slurm cluster (slurm-wlm 22.05 + munge) for tests.
#
#   slurm_cluster.sh start DIR   Write DIR/slurm.conf, start munged, slurmctld and slurmd with
#                                every file (key, socket, state, spool, logs, pids) under DIR,
#                                wait until the node is idle, then print "export ..." lines
#                                for the caller to eval.  Exits 77 if slurm/munge are missing.
#   slurm_cluster.sh stop DIR    Cancel remaining jobs, stop the daemons started for DIR (by
#                                their pid files) and wait for them to exit.  Silent on success.
#
# Nothing is written outside DIR, and /etc/slurm, /etc/munge and systemd are not used: the
# daemons and the client commands find everything through SLURM_CONF=DIR/slurm.conf (munge via
# AuthInfo=socket=...).  Daemons listen on 127.0.0.1 only, on ports found free at start.
# Only stdout carries the export lines; diagnostics go to stderr.
set -euo pipefail

prog=slurm_cluster.sh
die() { echo "$prog: $*" >&2; exit 1; }
[[ $# -eq 2 && ($1 == start || $1 == stop) ]] || die "usage: $prog start|stop DIR"
dir=$(cd "$2" 2>/dev/null && pwd) || die "no such directory: $2"
export SLURM_CONF=$dir/slurm.conf
# Marker put into the daemons' environment; slurmstepd and slurmscriptd inherit it, which lets
# 'stop' find strays of this cluster (and of no other) after the daemons are gone.
tag="SLURM_CLUSTER_SH_DIR=$dir"

# Is the daemon of pid file $1 running?  (The marker check guards against a reused pid.)
alive() { [[ -s $1 ]] && grep -qzx -- "$tag" "/proc/$(<"$1")/environ" 2>/dev/null; }

# PIDs of processes carrying this cluster's marker (own processes only).
tagged() { grep -lzx -- "$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true; }

# The given PIDs plus all their descendants (job processes under a slurmstepd).
family() {
  ps -eo pid=,ppid= | awk -v r=" $* " '{ p[$1] = $2 }
    END { do { n = 0; for (c in p) if (!index(r, " " c " ") && index(r, " " p[c] " ")) { r = r c " "; n++ } } while (n); print r }'
}

stop() {
  local f pid i
  # Kill all jobs first and wait until none is running or completing, so that no job (or its
  # slurmstepd) outlives the cluster.
  if alive "$dir/run/slurmctld.pid"; then
    timeout 10 squeue --noheader --format=%A 2>/dev/null |
      xargs -r timeout 10 scancel --signal=KILL 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      [[ -z $(timeout 5 squeue --noheader --states=R,CG,CF,S --format=%A 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  # Then the daemons, by their pid files: SIGTERM, up to 15 s grace, then SIGKILL.
  for f in slurmd slurmctld munged; do
    f=$dir/run/$f.pid
    alive "$f" || continue
    pid=$(<"$f")
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do alive "$f" || break; sleep 0.1; done  # (not kill -0: zombies)
    if alive "$f"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  # Last resort: whatever of this cluster is left (slurmstepd, slurmscriptd, their children).
  pid=$(tagged)
  # shellcheck disable=SC2046,SC2086  # lists of pids: word splitting intended
  if [[ -n $pid ]]; then kill -KILL $(family $pid) 2>/dev/null || true; fi
  for ((i = 0; i < 50; i++)); do [[ -z $(tagged) ]] && return 0; sleep 0.1; done
  die "processes of $dir still running: $(tagged | xargs)"
}

if [[ $1 == stop ]]; then stop; exit 0; fi

# ---------------------------------------------------------------- start
for c in munged slurmctld slurmd sinfo squeue scancel; do
  command -v "$c" >/dev/null || { echo "$prog: slurm-wlm/munge not installed" >&2; exit 77; }
done
[[ -e $SLURM_CONF ]] && die "$dir already holds a cluster; give a fresh directory"
[[ $dir != *[[:space:]]* ]] || die "DIR must not contain whitespace: $dir"
node=$(hostname -s)
# slurmd/slurmstepd create Unix sockets DIR/spool/NODE_JOBID.STEPID (limit: 107 characters).
s="$dir/spool/${node}_4294967294.4294967294"
((${#s} <= 107)) || die "DIR is too long for Unix socket paths, use a shorter one: $dir"

# On any failure from here on: show the logs, stop what was started, and fail.
on_exit() {
  local rc=$?
  if ((rc)); then
    echo "$prog: start failed" >&2
    tail -n 20 "$dir"/log/*.log >&2 2>/dev/null || true
    stop || true
  fi
  exit "$rc"
}
trap on_exit EXIT

# A TCP port that nothing on 127.0.0.1 answers on (below the ephemeral range).
free_port() {
  local p
  while :; do
    p=$((10000 + RANDOM % 20000))
    [[ $p != "${1:-}" ]] && ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && { echo "$p"; return; }
  done
}
ctld_port=$(free_port)
slurmd_port=$(free_port "$ctld_port")
user=$(id -un)

mkdir -m 700 "$dir"/{munge,state,spool,log,run}
chmod 711 "$dir/munge"  # munged wants its socket's folder searchable by all
: >"$dir/plugstack.conf"  # keep /etc/slurm/plugstack.conf out of the picture

# munged: own key, socket, pid, log and seed.  --force accepts the caller's directory
# permissions (munged is picky about group/world-writable parents).
head -c 1024 /dev/urandom >"$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
sock=$dir/munge/munge.socket
env "$tag" munged --force --key-file="$dir/munge/munge.key" --socket="$sock" \
  --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munged.seed" </dev/null >>"$dir/log/munged.log" 2>&1

cat >"$SLURM_CONF" <<EOF
# Private single-node test cluster written by $prog.
ClusterName=eddy
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
# cred_expire (min 5, default 120) is also how long a requeued job waits before it may run again.
AuthInfo=socket=$sock,cred_expire=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobContainerType=job_container/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=1,sched_min_interval=0,bf_interval=1
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
MinJobAge=3600
InactiveLimit=0
MailProg=$(type -P true)
NodeName=$node NodeHostname=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1024 State=UNKNOWN
PartitionName=eddy Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

for ((i = 0; i < 100; i++)); do [[ -S $sock ]] && break; sleep 0.1; done
[[ -S $sock ]] || die "munged did not start"

env "$tag" slurmctld -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.log" 2>&1
env "$tag" slurmd -f "$SLURM_CONF" -N "$node" </dev/null >>"$dir/log/slurmd.log" 2>&1

# Wait (up to 30 s) for the node to come up idle; fail early if a daemon died.
SECONDS=0
until [[ $(timeout 5 sinfo --noheader --nodes="$node" --format=%t 2>/dev/null) == idle ]]; do
  ((SECONDS < 30)) || die "node $node not idle after 30 s"
  for d in munged slurmctld slurmd; do
    ((SECONDS < 3)) || alive "$dir/run/$d.pid" || die "$d is not running"
  done
  sleep 0.1
done

printf 'export SLURM_CONF=%q\n' "$SLURM_CONF"
