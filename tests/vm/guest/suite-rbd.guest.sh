#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of tests/vm/suite-rbd.sh.  Each case starts its own cluster
# (1 mon, 1 memstore OSD, cephx) in its tmpfs folder and a target whose
# volume is an RBD image, served over RDMA on Soft-RoCE; devices are made
# with rblkctl attach.
. "$(dirname "$0")/lib.sh"
. "$RBLK_ROOT/tests/ceph/lib.sh"

CTL=$RBLK_BUILD/rblkctl
TGT=$RBLK_BUILD/rblk-target
RDMA_PORT=4421

ublk-up || echo "ublk-up failed: cases will fail"
RXE_IP=$(rxe-up 2>/dev/null) || RXE_IP=
echo "suite-rbd: Soft-RoCE address ${RXE_IP:-none}"

# start_tgt IMAGE: a target exporting $CEPH_POOL/IMAGE as volume vol0
# over RDMA.
start_tgt() {
	cat >"$CASE_TMP/target.conf" <<CONF
[target]
listen_rdma = $RXE_IP:$RDMA_PORT
reactors = 2
admin_socket = $CASE_TMP/target.sock

[volume vol0]
backend = rbd
rbd_pool = $CEPH_POOL
rbd_image = $1
ceph_conf = $CEPH_CONF
ceph_client_id = rblk
ceph_keyring = $CEPH_RBLK_KEYRING
allow_any_host = yes
CONF
	"$TGT" --config "$CASE_TMP/target.conf" >"$CASE_TMP/target.log" 2>&1 &
	TPID=$!
	wait_until 60 grep -q ' ready$' "$CASE_TMP/target.log" ||
		{ cat "$CASE_TMP/target.log"; fail "target did not start"; }
}

attach() {	# [rblkctl attach options]: sets DEV
	DEV=$(timeout 90 "$CTL" attach --target "$RXE_IP:$RDMA_PORT" --volume vol0 \
		--transport rdma "$@" 2>"$CASE_TMP/attach.err")
	[ -b "$DEV" ] || { cat "$CASE_TMP/attach.err"; tail -n 20 "$CASE_TMP/target.log"; fail "attach over RDMA failed"; }
	log "attached $DEV over rdma"
}

detach() {	# DEV
	timeout 60 "$CTL" detach "$1" || fail "detach $1 failed"
	[ ! -e "$1" ] || fail "$1 still there after detach"
}

case_setup() {
	need_cmd ceph-mon ceph-osd rbd mkfs.xfs
	need_build rblk-target rblk-initiator rblkctl
	grep -qa 'rbd image %s/%s' "$TGT" || skip "rblk-target built without the rbd backend (librbd-dev missing)"
	[ -n "$RXE_IP" ] || skip "Soft-RoCE did not come up"
	trap 'umount -q /mnt/rbd 2>/dev/null; "$CTL" detach --all --timeout 10 >/dev/null 2>&1' EXIT
	mkdir -p /mnt/rbd
	CEPH_DIR=$CASE_TMP/ceph ceph_up -s 768
}

make_tree() {	# DIR: files of random contents, small to a few MB
	local d=$1 i
	mkdir -p "$d/a/b" "$d/x"
	for i in $(seq 1 30); do
		head -c $((RANDOM * 5 + i)) /dev/urandom >"$d/a/f$i"
	done
	for i in $(seq 1 6); do
		head -c $((i * 500000)) /dev/urandom >"$d/a/b/big$i"
	done
	ln -s ../a/f1 "$d/x/link"
}

# xfs on an RBD image over RDMA: files checksummed across detach and
# re-attach; then deleted, and fstrim gives the space back to the pool.
case_xfs_rdma() {
	local used full
	case_setup
	rbd_admin create --size 512M "$CEPH_POOL/disk" || fail "rbd create"
	start_tgt disk
	attach --queues 2
	mkfs.xfs -q -f "$DEV" >mkfs.log 2>&1 || { cat mkfs.log; fail "mkfs.xfs failed"; }
	mount "$DEV" /mnt/rbd || fail "mount failed"
	make_tree src
	cp -a src /mnt/rbd/tree || fail "copy to the file system failed"
	(cd src && find . -type f -exec sha256sum {} + | sort -k2) >sums
	umount /mnt/rbd || fail "umount failed"
	detach "$DEV"
	attach --queues 1
	mount "$DEV" /mnt/rbd || fail "mount after re-attach failed"
	(cd /mnt/rbd/tree && sha256sum -c --quiet "$CASE_TMP/sums") || fail "checksums differ after re-attach"
	[ "$(readlink /mnt/rbd/tree/x/link)" = ../a/f1 ] || fail "symlink lost"
	log "$(wc -l <sums) files verified after detach + re-attach"
	full=$(rbd_admin du --format json "$CEPH_POOL/disk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["images"][0]["used_size"])')
	rm -rf /mnt/rbd/tree
	fstrim /mnt/rbd || fail "fstrim failed"
	used=$(rbd_admin du --format json "$CEPH_POOL/disk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["images"][0]["used_size"])')
	log "rbd du: $full bytes with the files, $used after rm + fstrim"
	[ "$used" -lt "$full" ] || fail "fstrim gave nothing back ($full -> $used bytes)"
	umount /mnt/rbd || fail "umount failed"
	"$CTL" --socket "$CASE_TMP/target.sock" stats vol0 | tee stats.out
	grep -q 'backend: in flight 0,' stats.out || fail "rblkctl stats shows no idle backend line"
	detach "$DEV"
	kill "$TPID"
	wait "$TPID" || fail "target exit status $?"
}

run_case -t 420 xfs-rdma case_xfs_rdma
cases_done
