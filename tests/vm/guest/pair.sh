# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Client-node side of a two-node VM suite (sourced by the suite after
# lib.sh).  The client node runs the cases; the target node runs
# tests/vm/guest/node-agent; the host (tests/vm/host-lib.sh,
# vm_pair_suite) boots both and cuts the target node's power on request.
#
#   tnode [-t SECS] 'SCRIPT'   run SCRIPT (bash) on the target node; prints
#                              its output, returns its status (124 timeout)
#   link_drop SECS             the target node's cable is pulled for SECS
#                              (returns once it is out; put back after SECS)
#   power_cut                  kill the target node's QEMU (a power cut)
#   power_on                   boot the target node again on the same disk,
#                              and wait until its agent serves
#   cnode_up                   this node's end of the link, then wait for
#                              the target node (call once, before the cases)
# Addresses: $TNODE_IP (target node), $CNODE_IP (this node), on eth0.

PAIR_CHAN=$RBLK_VM_SCRATCH/chan
TNODE_IP=${RBLK_PAIR_TARGET_IP:-10.88.0.1} CNODE_IP=${RBLK_PAIR_CLIENT_IP:-10.88.0.2}
export PAIR_CHAN TNODE_IP CNODE_IP

# The next command number: one after the highest written so far.
_tnode_next() {
	local f n max=0
	for f in "$PAIR_CHAN"/[0-9]*.cmd; do
		[ -e "$f" ] || continue
		n=${f##*/}; n=${n%.cmd}
		((n > max)) && max=$n
	done
	echo $((max + 1))
}

tnode() {
	local tmo=60 n end now
	[ "$1" = -t ] && { tmo=$2; shift 2; }
	n=$(_tnode_next)
	printf '%s\n' "$*" >"$PAIR_CHAN/.$n.cmd" && mv "$PAIR_CHAN/.$n.cmd" "$PAIR_CHAN/$n.cmd"
	now=${EPOCHREALTIME/./}
	end=$((10#$now + tmo * 1000000))
	while [ ! -e "$PAIR_CHAN/$n.rc" ]; do
		[ -e "$PAIR_CHAN/dead" ] && { echo "tnode: the target node is down"; return 125; }
		now=${EPOCHREALTIME/./}
		((10#$now < end)) || { echo "tnode: no answer within ${tmo}s: $*"; return 124; }
		nap 0.1
	done
	cat "$PAIR_CHAN/$n.out"
	return "$(cat "$PAIR_CHAN/$n.rc")"
}

# Host requests: one file each, answered by the host with a .done file.
_host_req() {	# what timeout
	local what=$1 tmo=$2 id
	id=$what.$(_usecs)
	: >"$PAIR_CHAN/host/$id.req"
	wait_until "$tmo" test -e "$PAIR_CHAN/host/$id.done" || fail "host did not do '$what' within ${tmo}s"
	cat "$PAIR_CHAN/host/$id.done"
}

power_cut() { _host_req power-cut 30; }

power_on() {
	local boot
	boot=$(_host_req power-on 30)
	log "target node booting (boot $boot)"
	wait_until 180 test -e "$PAIR_CHAN/up.$boot" || fail "target node did not come back within 180 s"
}

# The target node's link drops for N seconds; returns once it is down.
# carrier (default): the host pulls the cable (QEMU set_link off on the
# target node's NIC), as a failed cable or switch port does.  admin: "ip
# link set eth0 down" on the target node, which the issue first asked for;
# on the 6.12 kernel about 1 such drop in 50-100 leaves the node's GSI QP
# (QP1, every CM message) in the error state, and then no RDMA connection
# reaches that node again until rxe0 is re-created (docs/vm-tests.md).
link_drop() {	# seconds
	case ${RBLK_PAIR_LINK_DROP:-carrier} in
	carrier)
		# set_link prints nothing when it worked; the host's answer
		# is the monitor's error otherwise.
		local out
		out=$(_host_req link-off 10) && [ -z "$out" ] ||
			{ echo "link_drop: link-off: $out"; return 1; }
		( sleep "$1"; _host_req link-on 10 >/dev/null ) >/dev/null 2>&1 &
		;;
	admin)
		tnode "(ip link set eth0 down; sleep $1; ip link set eth0 up) >/dev/null 2>&1 &" ;;
	*)	echo "link_drop: RBLK_PAIR_LINK_DROP is carrier or admin"; return 1 ;;
	esac
}

cnode_up() {
	modprobe virtio_net || { echo "cnode_up: modprobe virtio_net failed"; return 1; }
	wait_until 10 test -d /sys/class/net/eth0 || { echo "cnode_up: no eth0"; return 1; }
	ip link set eth0 mtu 9000 up && ip addr add "$CNODE_IP/24" dev eth0 || return 1
	wait_until 240 test -e "$PAIR_CHAN/up.1" || { echo "cnode_up: target node not up in 240 s"; return 1; }
}
