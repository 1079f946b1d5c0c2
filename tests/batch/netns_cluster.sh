# A SLURM cluster of several nodes on this one machine (sourced, after slurm_common.sh; used by
# tests/batch/slurm_multinode.sh). Each node is a Linux network namespace with its own UTS
# (host name) and mount namespace: an address on a private bridge, its own /etc/hosts and
# /dev/shm, one slurmd. munged and slurmctld run in the root namespace, reachable at the
# bridge's address; munge's socket is a file, so every node reaches it. The bridge is a private
# 10.99.K.0/24 (K unused on this machine) and the namespaces have no default route: nothing
# leaves the machine.
#
# Functions:
#   nc_check_namespaces       skip (77) unless this machine can make the namespaces and a bridge
#   nc_up DIR N               build and start an N-node cluster under DIR; waits until all are
#                             idle. Sets NC_NODES (host names), NC_PARTITION, SLURM_CONF, and
#                             exports the job environment (TMPDIR, OpenMPI's TCP interfaces)
#   nc_node_pids NODE         every process on NODE (in its network namespace)
#   nc_kill_node NODE         kill -9 every process on NODE: a node lost mid-run
#   nc_start_slurmd NODE      (re)start NODE's slurmd (after nc_kill_node: the node comes back)
#   nc_exec NODE CMD...       run CMD on NODE (in its namespaces, entered through its slurmd)
#   nc_remote_shell FILE      write FILE, an ssh stand-in: `FILE [-options] HOST COMMAND...` runs
#                             COMMAND on HOST of this cluster (as LSF's blaunch, SGE's qrsh
#                             -inherit, mpiexec's rsh agent would)
#   nc_down                   stop everything it started (by PID, never by name), remove the
#                             namespaces, the bridge and DIR; safe to call twice
# The same as commands, for a shell inside the cluster: DIR/kill-node NODE,
# DIR/start-slurmd NODE (DIR is exported as SB_CLUSTER_DIR).

NC_ID=$$ # names of our namespaces and links: sb<pid>n<k>, sb<pid>v<k>, sb<pid>br
NC_DIR=""
NC_NODES=()
NC_NETNS=()
NC_BRIDGE=""
NC_SUBNET=""
NC_PARTITION=sbmulti

nc_check_namespaces() {
  [ "$(id -u)" = 0 ] || sb_skip "network namespaces need root (this is uid $(id -u))"
  local c
  for c in ip nsenter unshare; do
    command -v "$c" >/dev/null 2>&1 || sb_skip "no '$c' command: cannot build namespaces"
  done
  local ns=sb${NC_ID}probe br=sb${NC_ID}pb ok=1
  ip netns add "$ns" 2>/dev/null || ok=0
  if [ $ok = 1 ]; then
    ip link add "$br" type bridge 2>/dev/null &&
      ip link add "sb${NC_ID}pv" type veth peer name eth0 netns "$ns" 2>/dev/null &&
      nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation private -- \
        sh -c 'hostname sbprobe && [ "$(hostname)" = sbprobe ]' 2>/dev/null || ok=0
    ip link del "sb${NC_ID}pv" 2>/dev/null
    ip link del "$br" 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  fi
  [ $ok = 1 ] || sb_skip "this machine cannot create network and UTS namespaces joined by a bridge"
}

nc_pick_subnet() { # the first 10.99.K.0/24 that no interface uses, K from a random start
  local start=$((RANDOM % 200 + 20)) k i used
  used=$(ip -4 -o addr show 2>/dev/null)
  for i in $(seq 0 235); do
    k=$(((start + i) % 236 + 20))
    grep -q " 10\.99\.$k\." <<<"$used" || {
      echo "10.99.$k"
      return 0
    }
  done
  return 1
}

nc_ns_of() { # NODE -> its network namespace
  local i
  for i in "${!NC_NODES[@]}"; do
    [ "${NC_NODES[$i]}" = "$1" ] && {
      echo "${NC_NETNS[$i]}"
      return 0
    }
  done
  return 1
}

nc_node_pids() { ip netns pids "$(nc_ns_of "$1")" 2>/dev/null; }

nc_kill_node() { # NODE: every process in it, kill -9, until none is left (slurmstepd forks)
  local ns pids
  ns=$(nc_ns_of "$1") || return 1
  for _ in $(seq 20); do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -z "$pids" ] && return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null
    sleep 0.1
  done
  [ -z "$(ip netns pids "$ns" 2>/dev/null)" ]
}

nc_start_slurmd() { # NODE: slurmd inside the node, with its host name, hosts file and /dev/shm
  local node=$1 ns
  ns=$(nc_ns_of "$node") || return 1
  mkdir -p "$NC_DIR/nodes/$node/spool" "$NC_DIR/nodes/$node/tmp"
  # nsenter, not `ip netns exec`: that remounts /sys and hides /sys/fs/cgroup from slurmd.
  nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation private -- sh -c '
    hostname "$1" && mount --bind "$2" /etc/hosts &&
      mount -t tmpfs -o size=512m,mode=1777 sbshm /dev/shm && exec slurmd -f "$3"' \
    sh "$node" "$NC_DIR/hosts" "$SLURM_CONF" >"$NC_DIR/nodes/$node/slurmd.stdout" 2>&1
}

nc_exec() { # NODE CMD...: CMD inside NODE's namespaces (those of its running slurmd)
  local node=$1
  shift
  nsenter -t "$(cat "$NC_DIR/nodes/$node/slurmd.pid")" --net --uts --mount -- "$@"
}

nc_remote_shell() { # FILE
  cat >"$1" <<EOF_SH
#!/bin/sh
# ssh stand-in for the test cluster under $NC_DIR: [-options] HOST COMMAND...
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1
shift
echo "\$(basename "\$0") \$host" >>"$NC_DIR/remote-shell.log"
exec nsenter -t "\$(cat "$NC_DIR/nodes/\$host/slurmd.pid")" --net --uts --mount -- /bin/sh -c "\$*"
EOF_SH
  chmod 755 "$1"
}

nc_write_conf() { # N
  local n=$1 i ctld_port slurmd_port srun_ports
  ctld_port=$(sb_free_port)
  slurmd_port=$(sb_free_port)
  [ "$slurmd_port" = "$ctld_port" ] && slurmd_port=$((ctld_port + 1))
  srun_ports="$((40000 + RANDOM % 10000))"
  srun_ports="$srun_ports-$((srun_ports + 200))"
  {
    echo "# Written by tests/batch/netns_cluster.sh for one test run; removed afterwards."
    echo "ClusterName=sbmulti"
    echo "SlurmctldHost=$(hostname -s)($NC_SUBNET.1)"
    echo "SlurmctldPort=$ctld_port"
    echo "SlurmdPort=$slurmd_port"
    echo "SrunPortRange=$srun_ports"
    echo "SlurmdSpoolDir=$NC_DIR/nodes/%n/spool"
    echo "SlurmdPidFile=$NC_DIR/nodes/%n/slurmd.pid"
    echo "SlurmdLogFile=$NC_DIR/nodes/%n/slurmd.log"
    # The PMIx plugin makes spmix_appdir_* here; a shared /tmp collides between nodes.
    echo "TmpFS=$NC_DIR/nodes/%n/tmp"
    echo "MpiDefault=pmix"
    echo "SlurmdParameters=config_overrides"
    # A job hit by a node failure ends (NODE_FAIL) instead of going back to the queue.
    echo "JobRequeue=0"
    echo "SchedulerParameters=batch_sched_delay=0"
    # Node-failure detection follows SlurmdTimeout (about 30 s after a node is lost).
    echo "SlurmdTimeout=20"
    echo "KillWait=5"
    sb_slurm_conf_common "$NC_DIR"
    for i in $(seq "$n"); do
      echo "NodeName=${NC_NODES[$((i - 1))]} NodeAddr=$NC_SUBNET.$((10 + i)) CPUs=2 State=UNKNOWN"
    done
    echo "PartitionName=$NC_PARTITION Nodes=$(
      IFS=,
      echo "${NC_NODES[*]}"
    ) Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
  } >"$SLURM_CONF"
}

nc_write_commands() { # DIR/kill-node and DIR/start-slurmd for shells inside the cluster
  local i
  {
    echo "#!/usr/bin/env bash"
    echo "# kill-node NODE: kill -9 every process on NODE of this test cluster."
    echo "declare -A ns"
    for i in "${!NC_NODES[@]}"; do echo "ns[${NC_NODES[$i]}]=${NC_NETNS[$i]}"; done
    echo '[ -n "${1:-}" ] && [ -n "${ns[$1]:-}" ] || { echo "usage: kill-node NODE (${!ns[*]})" >&2; exit 2; }'
    echo 'for _ in $(seq 20); do p=$(ip netns pids "${ns[$1]}"); [ -z "$p" ] && exit 0; kill -KILL $p 2>/dev/null; sleep 0.1; done'
    echo 'exit 1'
  } >"$NC_DIR/kill-node"
  {
    echo "#!/usr/bin/env bash"
    echo "# start-slurmd NODE: restart NODE's slurmd."
    declare -p NC_DIR NC_NODES NC_NETNS SLURM_CONF | sed 's/^declare -/declare -g -/'
    declare -f nc_ns_of nc_start_slurmd
    echo 'nc_start_slurmd "${1:?usage: start-slurmd NODE}"'
  } >"$NC_DIR/start-slurmd"
  chmod 755 "$NC_DIR/kill-node" "$NC_DIR/start-slurmd"
}

nc_up() { # DIR N
  NC_DIR=$1
  local n=$2 i ns
  NC_SUBNET=$(nc_pick_subnet) || sb_fail "no free 10.99.K.0/24 on this machine"
  NC_BRIDGE=sb${NC_ID}br
  local tag=sb${NC_SUBNET##*.}n # host names unique among concurrent clusters
  NC_NODES=()
  NC_NETNS=()
  for i in $(seq "$n"); do
    NC_NODES+=("$tag$i")
    NC_NETNS+=("sb${NC_ID}n$i")
  done
  mkdir -p "$NC_DIR/nodes" "$NC_DIR/tmp" "$NC_DIR/out"
  chmod 755 "$NC_DIR"
  export SLURM_CONF=$NC_DIR/slurm.conf
  export SB_CLUSTER_DIR=$NC_DIR

  # Network: bridge in the root namespace, one veth per node, no default route anywhere.
  ip link add "$NC_BRIDGE" type bridge || sb_fail "cannot create bridge $NC_BRIDGE"
  ip addr add "$NC_SUBNET.1/24" dev "$NC_BRIDGE"
  ip link set "$NC_BRIDGE" up
  {
    echo "127.0.0.1 localhost"
    echo "$NC_SUBNET.1 $(hostname -s)"
  } >"$NC_DIR/hosts"
  for i in $(seq "$n"); do
    ns=${NC_NETNS[$((i - 1))]}
    ip netns add "$ns" || sb_fail "cannot create network namespace $ns"
    ip link add "sb${NC_ID}v$i" type veth peer name eth0 netns "$ns" ||
      sb_fail "cannot create the veth pair of $ns"
    ip link set "sb${NC_ID}v$i" master "$NC_BRIDGE" up
    ip -n "$ns" addr add "$NC_SUBNET.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    echo "$NC_SUBNET.$((10 + i)) ${NC_NODES[$((i - 1))]}" >>"$NC_DIR/hosts"
  done
  chmod 644 "$NC_DIR/hosts"

  # Daemons.
  sb_start_munged "$NC_DIR"
  nc_write_conf "$n"
  nc_write_commands
  slurmctld -f "$SLURM_CONF" -c -i >"$NC_DIR/slurmctld.stdout" 2>&1 ||
    sb_fail "slurmctld did not start"
  for node in "${NC_NODES[@]}"; do
    nc_start_slurmd "$node" || sb_fail "slurmd of $node did not start"
  done
  sb_wait_node_states idle 60 "${NC_NODES[@]}" ||
    sb_fail "nodes not idle after 60 s: $(sinfo -h -N -o '%N=%t' 2>/dev/null | tr '\n' ' ')"

  # What jobs need: a private TMPDIR (other MPI jobs on this machine use /tmp), OpenMPI's TCP
  # traffic on the bridge, and root allowed (tests run as root).
  export TMPDIR=$NC_DIR/tmp
  export OMPI_MCA_btl_tcp_if_include=$NC_SUBNET.0/24
  export OMPI_MCA_oob_tcp_if_include=$NC_SUBNET.0/24
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

nc_down() {
  [ -n "$NC_DIR" ] || return 0
  local i ns node pidfiles=()
  for node in "${NC_NODES[@]}"; do pidfiles+=("$NC_DIR/nodes/$node/slurmd.pid"); done
  sb_stop_pidfile "${pidfiles[@]}"
  # Whatever is left on a node (steps, ranks of a lost node) is ours: it lives in our namespace.
  for node in "${NC_NODES[@]}"; do nc_kill_node "$node" >/dev/null 2>&1; done
  sb_stop_pidfile "$NC_DIR/slurmctld.pid" "$NC_DIR/munge/munged.pid"
  for i in "${!NC_NETNS[@]}"; do
    ns=${NC_NETNS[$i]}
    ip link del "sb${NC_ID}v$((i + 1))" 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  [ -n "$NC_BRIDGE" ] && ip link del "$NC_BRIDGE" 2>/dev/null
  if [ "${SB_SLURM_KEEP:-0}" = 1 ]; then sb_log "kept $NC_DIR"; else rm -rf "$NC_DIR"; fi
  NC_DIR=""
}
