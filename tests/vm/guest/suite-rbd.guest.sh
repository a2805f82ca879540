#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of tests/vm/suite-rbd.sh.  Each case starts its own cluster
# (1 mon, 1 memstore OSD, cephx) in its tmpfs folder and a target whose
# volume is an RBD image, served over RDMA on Soft-RoCE; devices are made
# with rblkctl attach.  The ha-* cases (docs/multipath.md) run two
# targets, A and B, on one image with rbd_ha, and one device with a path
# to each: in one guest, so what they prove is the ublk + RDMA path of a
# failover; the link and power faults of separate nodes are not here.
. "$(dirname "$0")/lib.sh"
. "$RBLK_ROOT/tests/ceph/lib.sh"

CTL=$RBLK_BUILD/rblkctl
TGT=$RBLK_BUILD/rblk-target
RDMA_PORT=4421

ublk-up || echo "ublk-up failed: cases will fail"
RXE_IP=$(rxe-up 2>/dev/null) || RXE_IP=
echo "suite-rbd: Soft-RoCE address ${RXE_IP:-none}"

# start_tgt IMAGE [NAME PORT [extra [target] lines]]: a target exporting
# $CEPH_POOL/IMAGE as volume vol0 over RDMA (config, log, socket
# $CASE_TMP/NAME.*, default "target"); sets TPID.
start_tgt() {
	local name=${2:-target} port=${3:-$RDMA_PORT}
	cat >"$CASE_TMP/$name.conf" <<CONF
[target]
listen_rdma = $RXE_IP:$port
reactors = 2
admin_socket = $CASE_TMP/$name.sock
${4:-}

[volume vol0]
backend = rbd
rbd_pool = $CEPH_POOL
rbd_image = $1
ceph_conf = $CEPH_CONF
ceph_client_id = rblk
ceph_keyring = $CEPH_RBLK_KEYRING
allow_any_host = yes
${5:-}
CONF
	"$TGT" --config "$CASE_TMP/$name.conf" >>"$CASE_TMP/$name.log" 2>&1 &
	TPID=$!
	wait_until 60 grep -q ' ready$' "$CASE_TMP/$name.log" ||
		{ cat "$CASE_TMP/$name.log"; fail "target $name did not start"; }
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
	trap 'rc=$?; [ $rc = 0 ] || dump_logs; umount -q /mnt/rbd 2>/dev/null; "$CTL" detach --all --timeout 10 >/dev/null 2>&1' EXIT
	mkdir -p /mnt/rbd
	CEPH_DIR=$CASE_TMP/ceph ceph_up -s 768
}

# A failed case shows what the targets and the initiator said.
dump_logs() {
	local f
	timeout 10 "$CTL" list 2>&1
	for f in "$CASE_TMP"/*.log /run/rblk/*.log; do
		[ -s "$f" ] || continue
		echo "--- tail of $f"
		grep -v 'I/O error\|io_u error' "$f" | tail -n 30
	done
}
ha_fail() { dump_logs; fail "$@"; }

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

# ---- multipath --------------------------------------------------------

# ha_start IMAGE [A_LINE]: targets A (port 4421) and B (4422), rbd_ha,
# A_PID B_PID; A_LINE goes into A's volume section.
ha_start() {
	rbd_admin create --size 512M "$CEPH_POOL/$1" || ha_fail "rbd create"
	start_tgt "$1" a 4421 "" "rbd_ha = yes
${2:-}"
	A_PID=$TPID
	start_tgt "$1" b 4422 "" "rbd_ha = yes"
	B_PID=$TPID
}

# path N FIELD: field of path N (1-based) of the first device, rblkctl list --json
path() {
	"$CTL" list --json | python3 -c "import json,sys; print(json.load(sys.stdin)['devices'][0]['paths'][$1 - 1]['$2'])"
}
path_is() { [ "$(path "$1" "$2")" = "$3" ]; }	# N FIELD VALUE
lock_is() { [ "$(lock "$1")" = "$2" ]; }	# NAME STATE
# ms from T0 (microseconds, EPOCHREALTIME without the dot) to the last
# time target NAME logged that it took the lock: the failover time, to
# the first write-class command served by the new target.
lock_ms_since() {	# NAME T0
	python3 - "$CASE_TMP/$1.log" "$2" <<'PY'
import sys, datetime
t = None
for line in open(sys.argv[1]):
    if "this target holds the lock" in line:
        t = datetime.datetime.fromisoformat(line.split()[0]).timestamp()
print("?" if t is None else int((t * 1e6 - int(sys.argv[2])) / 1000))
PY
}
vol_json() {	# NAME EXPR: EXPR of target NAME's volume show --json (d)
	"$CTL" --socket "$CASE_TMP/$1.sock" volume show vol0 --json |
		python3 -c "import json,sys; d = json.load(sys.stdin); print($2)"
}
lock() { vol_json "$1" "d['volume']['rbd']['ha']['lock']"; }	# NAME
size_is() { [ "$(vol_json "$1" "d['volume']['size']")" = "$2" ]; }	# NAME BYTES

# fio verify on the mounted file system (lib.sh); FIO_PID.
ha_fio() { fs_fio "$1" /mnt/rbd 16M 2m; }	# NAME
ha_fio_ok() { fs_fio_ok "$1" ha_fail; }		# NAME
ha_end() {	# the file system checks clean, sums hold; detach; stop targets
	(cd /mnt/rbd/tree && sha256sum -c --quiet "$CASE_TMP/sums") || ha_fail "checksums differ"
	umount /mnt/rbd || ha_fail "umount failed"
	xfs_repair -n "$DEV" >repair.out 2>&1 || { cat repair.out; ha_fail "xfs_repair -n found damage"; }
	detach "$DEV"
	kill "$A_PID" "$B_PID" 2>/dev/null
	wait
	return 0
}
ha_mount() {
	mkfs.xfs -q -f "$DEV" >mkfs.log 2>&1 || { cat mkfs.log; ha_fail "mkfs.xfs failed"; }
	mount "$DEV" /mnt/rbd || ha_fail "mount failed"
	make_tree src
	cp -a src /mnt/rbd/tree || ha_fail "copy failed"
	(cd src && find . -type f -exec sha256sum {} + | sort -k2) >"$CASE_TMP/sums"
}

# The volume grown through A (as volume create --rbd leaves A, the
# target that made the image): B grants the new size too, or the
# device's queues, told of it by A, would refuse B at failover.
# Target A killed under fio verify on xfs: B takes over with no I/O
# error; the failover time is from the kill to writes done through B.
# A started again: its path is a reachable standby; rblkctl failback
# moves the device back to A, under fio, with no error.
case_ha_failover() {
	local t0 ms
	case_setup
	need_cmd xfs_repair fio
	ha_start hadisk "rbd_created = yes"
	DEV=$(timeout 90 "$CTL" attach --target "rdma:$RXE_IP:4421" --target "rdma:$RXE_IP:4422" \
		--volume vol0 --queues 2 --keep-alive-tmo 2 --reconnect-delay 1 \
		2>"$CASE_TMP/attach.err")
	[ -b "$DEV" ] || { cat "$CASE_TMP/attach.err"; ha_fail "multipath attach failed"; }
	ha_mount
	"$CTL" --socket "$CASE_TMP/a.sock" volume resize vol0 --size 768M >/dev/null ||
		ha_fail "volume resize through A failed"
	wait_until 20 size_is b $((768 << 20)) ||
		ha_fail "B exports $(vol_json b "d['volume']['size']") bytes after the resize through A"
	log "resized through A to 768 MiB: B follows"
	wait_until 20 path_is 2 probe reachable || ha_fail "path 2 never probed reachable: $(path 2 probe)"
	"$CTL" list
	[ "$(path 1 role)" = optimized ] || ha_fail "path 1 is not in use"
	ha_fio kill
	nap 4
	t0=${EPOCHREALTIME/./}
	kill -KILL "$A_PID"
	wait_until 30 lock_is b owned || ha_fail "B never took the lock"
	ms=$(lock_ms_since b "$t0")
	ha_fio_ok kill
	[ "$(path 2 role)" = optimized ] || ha_fail "the device is not on path 2"
	"$CTL" list
	log "failover: B took the lock $ms ms after A's kill -9 (keep-alive-tmo 2 s); fio verify clean"
	# A comes back: a reachable standby; then failback under fio.
	start_tgt hadisk a 4421 "" "rbd_ha = yes"
	A_PID=$TPID
	wait_until 30 path_is 1 probe reachable || ha_fail "path 1 not reachable after A's restart"
	[ "$(path 1 role)" = standby ] || ha_fail "path 1 is not a standby"
	ha_fio back
	nap 3
	"$CTL" failback "$DEV" || ha_fail "rblkctl failback failed"
	wait_until 30 path_is 1 role optimized || ha_fail "no failback to path 1"
	wait_until 30 lock_is a owned || ha_fail "A did not take the lock back"
	ha_fio_ok back
	"$CTL" list
	log "failback to A under fio: no error; B: $(lock b)"
	# Split brain: A frozen with writes in hand, its lock and its cluster
	# session kept.  The device fails over to B after keep-alive-tmo, B
	# fences A; thawed, A's late writes are refused.
	ha_fio freeze
	nap 4
	t0=${EPOCHREALTIME/./}
	kill -STOP "$A_PID"
	wait_until 60 path_is 2 role optimized || { kill -CONT "$A_PID"; ha_fail "no failover from a frozen A"; }
	wait_until 60 lock_is b owned || { kill -CONT "$A_PID"; ha_fail "B did not take the lock from a frozen A"; }
	ms=$(lock_ms_since b "$t0")
	kill -CONT "$A_PID"
	wait_until 60 grep -q "fenced: another target took over" "$CASE_TMP/a.log" ||
		ha_fail "A, thawed, did not find it was fenced"
	ha_fio_ok freeze
	log "split brain: B took the lock $ms ms after A froze (keep-alive-tmo 2 s); A thawed: $(grep -c 'fenced: another' "$CASE_TMP/a.log") fence, refused $("$CTL" --socket "$CASE_TMP/a.sock" volume show vol0 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['volume']['rbd']['ha']['refused'])") late request(s); fio verify clean"
	ha_end
}

# The same target over RDMA and TCP: the RDMA link (dummy0, under rxe0)
# goes down under fio verify; I/O goes on over TCP on loopback.
case_ha_rdma_tcp() {
	case_setup
	need_cmd fio
	rbd_admin create --size 256M "$CEPH_POOL/rt" || ha_fail "rbd create"
	start_tgt rt a 4421 "listen_tcp = 127.0.0.1:4420"
	A_PID=$TPID B_PID=
	DEV=$(timeout 90 "$CTL" attach --target "rdma:$RXE_IP:4421" --target "tcp:127.0.0.1:4420" \
		--volume vol0 --queues 2 --keep-alive-tmo 2 --reconnect-delay 1 \
		2>"$CASE_TMP/attach.err")
	[ -b "$DEV" ] || { cat "$CASE_TMP/attach.err"; ha_fail "attach failed"; }
	timeout 300 fio --name=rt --filename="$DEV" --rw=randwrite --bs=16k --size=32M \
		--rate=4m --iodepth=8 --ioengine=libaio --direct=1 --verify=crc32c \
		--verify_fatal=1 --verify_state_save=0 --output="$CASE_TMP/rt.out" &
	FIO_PID=$!
	nap 4
	ip link set dummy0 down || ha_fail "cannot take dummy0 down"
	wait_until 30 path_is 2 role optimized || { ip link set dummy0 up; ha_fail "no failover to TCP"; }
	ha_fio_ok rt
	ip link set dummy0 up
	"$CTL" list
	log "RDMA link down: the device moved to its TCP path; fio verify clean"
	detach "$DEV"
	kill "$A_PID"
	wait
	return 0
}

# Active/active reads (--read-policy spread): writes go through A, reads
# through A and B.  B, a reader only, is killed while reads run: they go
# on through A with no error and the right data; B back, its path serves
# reads again.
ops() {		# NAME OP: OP commands target NAME answered for vol0
	"$CTL" --socket "$CASE_TMP/$1.sock" stats vol0 --json |
		python3 -c "import json,sys; print(json.load(sys.stdin)['volumes'][0]['stats']['$2']['ops'])"
}
# Reads the first 32 MiB of DEV (direct, 64 KiB at a time) for SECS
# seconds; each pass's checksum, or "error", goes to a line of FILE.
read_passes() {	# SECS FILE
	local end=$((${EPOCHREALTIME%.*} + $1))
	while [ "${EPOCHREALTIME%.*}" -lt "$end" ]; do
		{ dd if="$DEV" iflag=direct bs=64k count=512 status=none || echo error; } |
			sha256sum | cut -d' ' -f1 >>"$2"
	done
}
case_ha_read_spread() {
	local want ra rb wb bad rp ilog
	case_setup
	need_cmd dd sha256sum
	ha_start spread
	DEV=$(timeout 90 "$CTL" attach --target "rdma:$RXE_IP:4421" --target "rdma:$RXE_IP:4422" \
		--volume vol0 --queues 2 --keep-alive-tmo 2 --reconnect-delay 1 \
		--read-policy spread 2>"$CASE_TMP/attach.err")
	[ -b "$DEV" ] || { cat "$CASE_TMP/attach.err"; ha_fail "attach --read-policy spread failed"; }
	ilog=$(ls -t /run/rblk/rblk-initiator.*.log | head -n 1)
	# The state file has the roles from the initiator's first look.
	wait_until 10 path_is 1 role optimized || ha_fail "path 1 is not the writers': $(path 1 role)"
	wait_until 10 path_is 2 role reads || ha_fail "path 2 does not serve reads: $(path 2 role)"
	[ "$("$CTL" list --json | python3 -c "import json,sys; print(json.load(sys.stdin)['devices'][0]['read_policy'])")" = spread ] ||
		ha_fail "rblkctl list --json does not say read_policy spread"
	"$CTL" list
	dd if=/dev/urandom of="$CASE_TMP/data" bs=1M count=32 status=none
	dd if="$CASE_TMP/data" of="$DEV" oflag=direct bs=1M status=none || ha_fail "write failed"
	want=$(sha256sum <"$CASE_TMP/data" | cut -d' ' -f1)
	read_passes 3 "$CASE_TMP/sums1"
	ra=$(ops a read) rb=$(ops b read) wb=$(ops b write)
	[ "$ra" -gt 0 ] && [ "$rb" -gt 0 ] || ha_fail "reads not spread: A $ra, B $rb"
	[ "$wb" = 0 ] || ha_fail "B, a reader only, served $wb writes"
	lock_is b standby || ha_fail "B took the lock: $(lock b)"
	lock_is a owned || ha_fail "A, the writer, does not hold the lock: $(lock a)"
	bad=$(grep -cv "^$want\$" "$CASE_TMP/sums1")
	[ "$bad" = 0 ] || ha_fail "$bad of $(wc -l <"$CASE_TMP/sums1") passes read other data"
	log "spread: $(wc -l <"$CASE_TMP/sums1") passes of 32 MiB, reads A $ra B $rb, writes at B $wb, B's lock $(lock b)"
	# B killed while the reads run.
	read_passes 12 "$CASE_TMP/sums2" &
	rp=$!
	nap 4
	kill -KILL "$B_PID"
	wait "$rp"
	bad=$(grep -cv "^$want\$" "$CASE_TMP/sums2")
	[ "$bad" = 0 ] || ha_fail "$bad of $(wc -l <"$CASE_TMP/sums2") passes failed or read other data after B's kill"
	path_is 1 role optimized || ha_fail "the writers left path 1"
	[ "$(path 2 role)" != reads ] || ha_fail "path 2 still serves reads with B dead"
	log "B killed under reads: $(wc -l <"$CASE_TMP/sums2") passes, all right; paths: $(path 1 role)/$(path 2 role)"
	# No reader went back to B while it was dead.
	! grep -q "reads spread again" "$ilog" ||
		ha_fail "a reader moved back to the dead B: $(grep 'reads spread again' "$ilog")"
	# B back: its path serves reads again once the monitor found it
	# answering for 5 s.
	start_tgt spread b 4422 "" "rbd_ha = yes"
	B_PID=$TPID
	wait_until 40 path_is 2 role reads || ha_fail "path 2 never served reads again: $(path 2 role)"
	read_passes 2 "$CASE_TMP/sums3"
	rb=$(ops b read)
	[ "$rb" -gt 0 ] || ha_fail "B back serves no reads"
	bad=$(grep -cv "^$want\$" "$CASE_TMP/sums3")
	[ "$bad" = 0 ] || ha_fail "$bad passes read other data after B's return"
	"$CTL" list
	log "B back: path 2 serves reads again ($rb reads at B)"
	detach "$DEV"
	kill "$A_PID" "$B_PID" 2>/dev/null
	wait
	return 0
}

run_case -t 420 xfs-rdma case_xfs_rdma
run_case -t 600 ha-failover case_ha_failover
run_case -t 300 ha-read-spread case_ha_read_spread
# Last: Soft-RoCE on dummy0 does not come back within a minute after the
# link's down and up (seen in the guest), so no RDMA case may follow.
run_case -t 300 ha-rdma-tcp case_ha_rdma_tcp
cases_done
