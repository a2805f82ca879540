#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of the VM smoke suite (tests/vm/suite-smoke.sh): the harness
# itself works, and the guest kernel (6.12, or the new one) gives us Soft-RoCE, ublk and the kernel
# NVMe-oF RDMA target that later suites and benchmarks build on.
. "$(dirname "$0")/lib.sh"

# The kernel RBLK_VM_KERNEL asked for (vm-run names its release), and
# Debian 12's 6.12 when it asked for none.
case_kernel() {
	log "uname -r: $(uname -r), RBLK_VM_KERNEL=${RBLK_VM_KERNEL:-6.12}"
	[ "$(uname -r)" = "$RBLK_VM_KVER" ] || fail "guest kernel is $(uname -r), want $RBLK_VM_KVER"
	[ "${RBLK_VM_KERNEL:-6.12}" != 6.12 ] || [[ $(uname -r) == 6.12.* ]] ||
		fail "guest kernel is $(uname -r), want 6.12"
}

# The repo and its build folder are visible read-only (host root over 9p);
# the scratch folder is the host's, writable; writes elsewhere stay in the VM.
case_harness() {
	[ -r "$RBLK_ROOT/tests/run" ] || fail "repo not visible at $RBLK_ROOT"
	[ -n "${RBLK_VM_SCRATCH:-}" ] || fail "RBLK_VM_SCRATCH not set"
	echo "written in the guest" >"$RBLK_VM_SCRATCH/from-guest" || fail "scratch not writable"
	awk -v d="$RBLK_VM_SCRATCH" '$2 == d && $3 == "9p" { ok = 1 } END { exit !ok }' /proc/mounts ||
		fail "scratch $RBLK_VM_SCRATCH is not a 9p share"
	awk '$2 == "/" && $3 == "overlay" { ok = 1 } END { exit !ok }' /proc/mounts ||
		fail "guest root is not the overlay over the host root"
	touch /etc/rblk-overlay-probe || fail "overlay root not writable"
	[ -d /lib/modules/"$(uname -r)" ] || fail "/lib/modules/$(uname -r) missing"
	[ "$(cat <(echo ok))" = ok ] || fail "process substitution (/dev/fd) does not work"
}

# Nothing from the host's modprobe.d reaches the guest (the guest boots the
# host's root): module options are only what the tests pass themselves.
case_modprobe_clean() {
	local d
	for d in /etc/modprobe.d /lib/modprobe.d /usr/lib/modprobe.d; do
		[ -d "$d" ] || continue
		[ -z "$(ls -A "$d")" ] || fail "$d is not empty in the guest: $(ls -A "$d" | head -n 3)"
	done
	modprobe -c >conf 2>&1 || fail "modprobe -c failed"
	# Kernel command line parameters show up as options too (rblk.*).
	if grep -E '^(options|install|remove|blacklist) ' conf | grep -v '^options rblk '; then
		fail "host modprobe configuration leaks into the guest (lines above)"
	fi
	log "no modprobe.d files, no options/install/blacklist lines"
}

case_rxe_up() {
	local ip
	# As on a minimal install (no systemd modprobe.d): the dummy module's
	# default makes dummy0 on load.  rxe-up must take it as it is.
	modprobe dummy numdummies=1 || fail "modprobe dummy"
	[ -d /sys/class/net/dummy0 ] || fail "dummy numdummies=1 did not make dummy0"
	ip=$(rxe-up) || fail "rxe-up failed"
	log "rxe0 on dummy0, address $ip"
	ibv_devices | grep -qw rxe0 || fail "ibv_devices does not list rxe0"
	ibv_devinfo -d rxe0 >info 2>&1 || fail "ibv_devinfo -d rxe0 failed"
	grep -E 'state|active_mtu|link_layer' info
	grep -q 'PORT_ACTIVE' info || fail "rxe0 port not active"
	grep -q 'active_mtu:.*4096' info || fail "active MTU is not 4096 (dummy MTU 9000 lost?)"
	[ "$(rxe-up)" = "$ip" ] || fail "second rxe-up did not give the same address"
}

# rping: RDMA-CM connect + RDMA READ/WRITE + SEND over rxe, server and client.
case_rping() {
	local ip n
	ip=$(rxe-up) || fail "rxe-up failed"
	timeout 60 rping -s -a "$ip" -p 7174 -C 10 -v >server.log 2>&1 &
	local srv=$!
	sleep 1
	timeout 40 rping -c -a "$ip" -p 7174 -C 10 -S 64 -v >client.log 2>&1 ||
		{ cat client.log server.log; fail "rping client failed"; }
	wait "$srv" || { cat server.log; fail "rping server exited $?"; }
	n=$(grep -c 'ping data' client.log)
	log "rping: $n of 10 pings echoed"
	[ "$n" -eq 10 ] || fail "rping client saw $n of 10 pings"
}

# rdma_server/rdma_client: the librdmacm verbs-helper path (rdma_create_ep,
# rdma_post_send/recv) our own transport uses.
case_rdmacm() {
	local ip
	need_cmd rdma_server rdma_client
	ip=$(rxe-up) || fail "rxe-up failed"
	timeout 40 rdma_server -p 7175 >server.log 2>&1 &
	local srv=$!
	sleep 1
	timeout 30 rdma_client -s "$ip" -p 7175 >client.log 2>&1 ||
		{ cat client.log server.log; fail "rdma_client failed"; }
	wait "$srv" || { cat server.log; fail "rdma_server exited $?"; }
	cat client.log
	grep -q 'rdma_client: end 0' client.log || fail "rdma_client did not end cleanly"
}

case_ublk() {
	ublk-up || fail "ublk-up failed"
	[ -c /dev/ublk-control ] || fail "/dev/ublk-control is not a character device"
	log "$(ls -l /dev/ublk-control)"
}

# The kernel NVMe-oF RDMA target and host: later the comparison benchmark.
case_nvmet_rdma() {
	grep -q ' /sys/kernel/config configfs ' /proc/mounts || fail "configfs not mounted"
	modprobe -a nvmet nvmet-rdma nvme-rdma || fail "modprobe nvmet nvmet-rdma nvme-rdma failed"
	[ -d /sys/kernel/config/nvmet/subsystems ] || fail "no nvmet configfs tree"
	log "loaded: $(lsmod | awk '/^nvme/ { printf "%s ", $1 }')"
}

# Export a null_blk disk over nvmet-rdma on rxe and read it back through
# nvme-rdma (tests/vm/guest/nvmet-rdma-up): the kernel NVMe-oF path the
# comparison benchmark uses works in the VM.
case_nvmet_loop() {
	local dev
	need_cmd nvme
	dev=$(nvmet-rdma-up -n nqn.2026-12.io.rblk:smoke) || fail "nvmet-rdma-up failed"
	log "connected: $dev ($(cat /sys/block/"${dev#/dev/}"/size) sectors)"
	timeout 30 dd if="$dev" of=/dev/null bs=1M count=16 iflag=direct 2>&1 | tail -n 1
	[ "${PIPESTATUS[0]}" -eq 0 ] || fail "direct read from $dev failed"
	nvmet-rdma-up -D -n nqn.2026-12.io.rblk:smoke || fail "nvmet-rdma-up -D failed"
	[ ! -e /sys/kernel/config/nvmet/subsystems/nqn.2026-12.io.rblk:smoke ] || fail "export not removed"
	[ ! -b "$dev" ] || fail "$dev still there after disconnect"
}

run_case kernel case_kernel
run_case harness case_harness
run_case modprobe-clean case_modprobe_clean
run_case rxe-up case_rxe_up
run_case -t 90 rxe-rping case_rping
run_case -t 90 rxe-rdmacm case_rdmacm
run_case ublk-control case_ublk
run_case nvmet-rdma-modules case_nvmet_rdma
run_case -t 120 nvmet-rdma-loop case_nvmet_loop
cases_done
