# Shared by the real-SLURM tests (sourced, not run): tests/batch/slurm_cluster.sh (one node) and
# tests/batch/slurm_multinode.sh (three nodes in network namespaces, via netns_cluster.sh).
#
# Set SB_LOG_TAG before sourcing. Provides:
#   sb_log / sb_skip (exit 77) / sb_fail (exit 1)
#   sb_require_slurm            root, and slurm-wlm + munge + PMIx plugin (installed when missing)
#   sb_stop_pids PID... / sb_stop_pidfile FILE...   TERM, then KILL after 5 s; only the given ones
#   sb_start_munged DIR         a private munged (key, socket, pid, log under DIR); sets MUNGE_SOCKET
#   sb_free_port                a TCP port nobody listens on at 127.0.0.1
#   sb_slurm_conf_common DIR    the slurm.conf lines both clusters share (auth, plugins, state)
#   sb_wait_node_states STATE NODE... / sb_wait_job ID TIMEOUT_S
#   sb_check_report REPORT SCHEDULER JOB_ID [HOST...]   every case ok/skipped and validated,
#                               the report's scheduler and job_id; with hosts: the nodes attribute
#                               is their count and every multi-cpu case ran a worker on each

sb_log() { printf '[%s] %s\n' "${SB_LOG_TAG:-slurm}" "$*"; }
sb_skip() {
  sb_log "SKIPPED: $*"
  exit 77
}
sb_fail() {
  sb_log "FAILED: $*"
  exit 1
}

sb_require_slurm() {
  if [ "$(id -u)" != 0 ]; then
    sb_skip "running the SLURM daemons needs root (this is uid $(id -u))"
  fi
  local need_install=() exe
  for exe in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge \
    mungekey:munge; do
    command -v "${exe%%:*}" >/dev/null 2>&1 || need_install+=("${exe##*:}")
  done
  if [ ! -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so ] &&
    [ ! -e /usr/lib/slurm-wlm/mpi_pmix.so ] &&
    [ -z "$(find /usr/lib -name mpi_pmix.so 2>/dev/null | head -1)" ]; then
    need_install+=(slurm-wlm-basic-plugins)
  fi
  [ ${#need_install[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || sb_skip "no SLURM here and no apt-get to install it"
  sb_log "installing slurm-wlm munge (missing: ${need_install[*]})"
  export DEBIAN_FRONTEND=noninteractive
  local apt_log=${TMPDIR:-/tmp}/sb_slurm_apt.log
  if ! apt-get install -y -q --no-install-recommends slurm-wlm munge libpmix2 openmpi-bin \
    >"$apt_log" 2>&1; then
    apt-get update -q >>"$apt_log" 2>&1 || true
    apt-get install -y -q --no-install-recommends slurm-wlm munge libpmix2 openmpi-bin \
      >>"$apt_log" 2>&1 ||
      sb_skip "cannot install slurm-wlm and munge (see $apt_log)"
  fi
}

sb_stop_pids() { # PID...: processes we started; TERM all, then KILL what is left after 5 s
  local pid alive
  for pid in "$@"; do [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; done
  for _ in $(seq 100); do
    alive=0
    for pid in "$@"; do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && return 0
    sleep 0.05
  done
  for pid in "$@"; do [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; done
  return 0
}

sb_stop_pidfile() { # FILE...: stop the daemons whose pid files are given
  local f pids=()
  for f in "$@"; do [ -s "$f" ] && pids+=("$(cat "$f")"); done
  [ ${#pids[@]} -gt 0 ] && sb_stop_pids "${pids[@]}"
  return 0
}

sb_start_munged() { # DIR: key, socket, pid, log and seed files under DIR/munge
  local d=$1/munge
  mkdir -p "$d/key"
  chmod 755 "$d"  # the socket's folder: every client (and node) must reach it
  chmod 700 "$d/key"
  mungekey --create --keyfile="$d/key/munge.key" --force >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$d/key/munge.key" bs=1024 count=1 status=none
  chmod 600 "$d/key/munge.key"
  MUNGE_SOCKET=$d/munge.socket
  munged --force --key-file="$d/key/munge.key" --socket="$MUNGE_SOCKET" \
    --pid-file="$d/munged.pid" --log-file="$d/munged.log" --seed-file="$d/key/munge.seed" ||
    sb_fail "munged did not start"
  for _ in $(seq 50); do
    [ -S "$MUNGE_SOCKET" ] && break
    sleep 0.1
  done
  [ -S "$MUNGE_SOCKET" ] || sb_fail "munged made no socket"
  if command -v munge >/dev/null 2>&1; then
    munge -n -S "$MUNGE_SOCKET" | unmunge -S "$MUNGE_SOCKET" >/dev/null ||
      sb_fail "munge cannot encode and decode a credential"
  fi
}

sb_free_port() { # a TCP port nobody listens on at 127.0.0.1, from a range that varies per run
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  echo 6817
}

sb_slurm_conf_common() { # DIR: slurm.conf lines shared by the test clusters (needs MUNGE_SOCKET)
  local t=$1
  cat <<EOF_CONF
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$t/state
SlurmctldPidFile=$t/slurmctld.pid
SlurmctldLogFile=$t/slurmctld.log
MailProg=/bin/true
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
SwitchType=switch/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PlugStackConfig=$t/plugstack.conf
InactiveLimit=0
MinJobAge=300
SlurmctldTimeout=30
EOF_CONF
  : >"$t/plugstack.conf"
  mkdir -p "$t/state"
}

sb_wait_node_states() { # STATE TIMEOUT_S NODE...: waits until every NODE is in STATE
  local want=$1 timeout=$2 node st ok
  shift 2
  for _ in $(seq $((timeout * 4))); do
    ok=1
    for node in "$@"; do
      st=$(sinfo -h -n "$node" -o %t 2>/dev/null | head -n 1)
      [ "$st" = "$want" ] || ok=0
    done
    [ $ok = 1 ] && return 0
    sleep 0.25
  done
  return 1
}

sb_wait_job() { # ID TIMEOUT_S: waits until the job has ended; prints its final state
  local id=$1 timeout=$2 st=""
  for _ in $(seq $((timeout * 4))); do
    st=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case "$st" in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | \
        BOOT_FAIL | DEADLINE)
        echo "$st"
        return 0
        ;;
    esac
    sleep 0.25
  done
  echo "${st:-UNKNOWN}(timed out)"
}

sb_check_report() { # REPORT SCHEDULER JOB_ID [HOST...]
  local py=/usr/bin/python3
  [ -x "$py" ] || py=$(command -v python3)
  "$py" - "$@" <<'EOF_PY'
import sys
import h5py

path, scheduler, job, hosts = sys.argv[1], sys.argv[2], sys.argv[3], sorted(sys.argv[4:])

def text(v):
    if isinstance(v, bytes):
        return v.decode()
    if hasattr(v, "shape") and v.shape == ():
        return text(v[()])
    return str(v)

with h5py.File(path, "r") as f:
    sched = text(f.attrs.get("scheduler", ""))
    jid = text(f.attrs.get("job_id", ""))
    assert sched == scheduler, f"scheduler attribute is {sched!r}, not {scheduler!r}"
    assert jid == job, f"job_id attribute is {jid!r}, not {job!r}"
    assert "cases" in f, "no /cases group"
    cases = {}
    for name, g in f["cases"].items():
        if isinstance(g, h5py.Group) and "status" in g.attrs:
            ran_on = [text(h) for h in g["hosts"][()]] if "hosts" in g else []
            if "validation" in g and text(g.attrs["status"]) == "ok":
                checks = g["validation"][()]
                failed = [text(c["name"]) for c in checks if not c["pass"]]
                assert not failed, f"{name}: validation {failed} failed"
            cases[name] = (text(g.attrs["status"]), text(g.attrs.get("path", "")),
                           int(g.attrs.get("workers", 0)), ran_on)
    assert cases, "the report holds no case"
    bad = {k: v[0] for k, v in cases.items() if v[0] not in ("ok", "skipped")}
    assert not bad, f"cases not ok/skipped: {bad}"
    if hosts:
        nodes = int(f.attrs.get("nodes", 0))
        assert nodes == len(hosts), f"nodes attribute is {nodes}, not {len(hosts)}"
        multi = {k: v for k, v in cases.items() if v[1] == "multi-cpu"}
        assert multi, "no multi-cpu case"
        for k, (status, _, workers, ran_on) in multi.items():
            assert status == "ok", f"{k} is {status}"
            assert sorted(set(ran_on)) == hosts, f"{k} ran on {ran_on}, not on {hosts}"
            assert workers == len(ran_on), f"{k}: {workers} workers but hosts {ran_on}"
        print(f"multi-cpu cases ran workers on {', '.join(hosts)}: {sorted(multi)}")
    print(f"report {path}: scheduler={sched} job_id={jid}, {len(cases)} cases ok/skipped")
EOF_PY
}
