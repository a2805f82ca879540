# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Client-node side of a VM suite of several nodes on one switch (sourced
# by the suite after lib.sh; host side: tests/vm/host-lib.sh,
# vm_cluster_suite).  Every node runs tests/vm/guest/node-agent.
#
#   node NAME [-t SECS] 'SCRIPT'  run SCRIPT (bash) on node NAME; prints its
#                                 output, returns its status (124 timeout,
#                                 125 the node is down)
#   node_ip NAME                  the node's address
#   node_power_cut NAME           kill the node's QEMU (a power cut)
#   node_power_on NAME            boot it again; wait until its agent serves
#   link_cut X Y, link_heal X Y   the switch drops (passes again) the frames
#                                 between X and Y (node names or "client");
#                                 each keeps its other links
#   cluster_up                    this node's NIC, then wait for every node
#                                 (call once, before the cases)
# Addresses: $CLIENT_IP (this node, eth0); nodes from $RBLK_CLUSTER_NODES.
. "$(dirname "${BASH_SOURCE[0]}")/pair.sh"

CLIENT_IP=${RBLK_CLUSTER_CLIENT_IP:-10.88.0.100}
declare -A NODE_IP
for _n in ${RBLK_CLUSTER_NODES:-}; do NODE_IP[${_n%%=*}]=${_n#*=}; done
unset _n

node_ip() { echo "${NODE_IP[$1]}"; }

node() {	# NAME [-t SECS] SCRIPT
	local name=$1
	shift
	[ -n "${NODE_IP[$name]:-}" ] || { echo "node: no node $name"; return 2; }
	PAIR_CHAN=$RBLK_VM_SCRATCH/chan/node-$name tnode "$@"
}

node_power_cut() { _host_req "power-cut.$1" 30 >/dev/null; }

node_power_on() {
	local boot
	boot=$(_host_req "power-on.$1" 30)
	log "node $1 booting (boot $boot)"
	wait_until 240 test -e "$RBLK_VM_SCRATCH/chan/node-$1/up.$boot" ||
		fail "node $1 did not come back within 240 s"
}

_switch_req() {	# block|unblock X Y
	local out
	out=$(_host_req "$1.$2.$3" 10)
	[ "$out" = ok ] || { echo "switch: $1 $2 $3: $out"; return 1; }
}
link_cut()  { _switch_req block "$1" "$2"; }
link_heal() { _switch_req unblock "$1" "$2"; }

cluster_up() {
	local n
	modprobe virtio_net || { echo "cluster_up: modprobe virtio_net failed"; return 1; }
	wait_until 10 test -d /sys/class/net/eth0 || { echo "cluster_up: no eth0"; return 1; }
	ip link set eth0 mtu 9000 up && ip addr add "$CLIENT_IP/24" dev eth0 || return 1
	for n in "${!NODE_IP[@]}"; do
		wait_until 300 test -e "$RBLK_VM_SCRATCH/chan/node-$n/up.1" ||
			{ echo "cluster_up: node $n not up in 300 s"; return 1; }
	done
}
