#!/bin/bash
# SPDX-License-Identifier: MIT
# The rbd backend on a real one-node Ceph cluster (tests/ceph/ceph-up:
# 1 mon, 1 file-backed bluestore OSD, cephx, client.rblk with profile
# rbd), shared by every case; TCP on loopback, fio through the engine:
#  - fio-verify: crc32c verify, 512 B to 1 MiB, QD 32; backend counters
#    count it and nothing stays in flight;
#  - osd-restart: the OSD SIGKILLed under fio verify and started again
#    3 s later: no I/O error, every block verifies;
#  - target-kill9: the target SIGKILLed under fio verify and restarted:
#    the engine rides through (the new target takes over the image's
#    exclusive lock from the dead one);
#  - osd-stall: the OSD SIGSTOPped longer than the client's io_timeout
#    and the target's data_timeout: the commands wait at the cluster
#    (rblkctl stats shows them in flight at the backend), the client
#    times them out and resends as for a slow disk, and after SIGCONT
#    everything verifies;
#  - sigterm-stalled: SIGTERM while the OSD is stopped with commands at
#    it: the target still exits, within 10 s (3 s drain, 1 s more, 2 s for
#    the commands at the cluster), and says it left the image open;
#  - discard: a discarded range reads back as zeroes and rbd du shrinks;
#    so do discards of part of an RBD object; WRITE_ZEROES reads back as
#    zeroes;
#  - shrunk-outside: an image shrunk behind rblk's back: a write past its
#    new end fails (librbd alone would cut it and call it done), one
#    before it works;
#  - bad-clusters: a wrong key, a missing pool, a missing image and an
#    unreachable cluster each give one error line, the start is not held
#    for long, and the target serves its other volumes;
#  - admin: volume create --rbd makes an image, resize grows it, delete
#    removes it; an image rblk did not make is exported as it is, never
#    resized or removed, and a resize made outside rblk is logged and
#    shown.
. "$(dirname "$0")/lib.sh"
. "$RBLK_ROOT/tests/ceph/lib.sh"
ceph_test_prelude
RUN_CASE_TAIL=40

rbd_conf_lines() {	# POOL IMAGE [KEYRING] [CONF]: an rbd volume's keys
	cat <<CONF
backend = rbd
rbd_pool = $1
rbd_image = $2
ceph_conf = ${4:-$CEPH_CONF}
ceph_client_id = rblk
ceph_keyring = ${3:-$CEPH_RBLK_KEYRING}
allow_any_host = yes
CONF
}

# setup NAME [IMAGE_MB]: a fresh image NAME and a target exporting it as
# volume vol0 on $PORT, config $T/NAME.conf.
setup() {
	local name=$1 mb=${2:-64}
	PORT=$(free_port) || fail "no free port"
	rbd_admin create --size "${mb}M" "$CEPH_POOL/$name" || fail "rbd create $name"
	{
		cat <<CONF
[target]
listen_tcp = 127.0.0.1:$PORT
reactors = 2
admin_socket = $T/$name.conf.sock
volume_dir = $T/vols
data_timeout = 2

[volume vol0]
CONF
		rbd_conf_lines "$CEPH_POOL" "$name"
	} >"$T/$name.conf"
	start_target "$T/$name.conf"
}

# start_fio NAME [fio options]: fio on vol0 in the background (terse
# output in $T/NAME.out); returns once its I/O runs.
start_fio() {
	local name=$1
	shift
	timeout 300 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 \
		--port="$PORT" --volume=vol0 --verify_state_save=0 --name="$name" \
		--output-format=terse "$@" >"$T/$name.out" 2>&1 &
	FIO_PID=$!
	_cleanup_pids+=("$FIO_PID")
	sleep 1.5
	kill -0 "$FIO_PID" 2>/dev/null || { cat "$T/$name.out"; echo "fio ended early"; return 1; }
}

# A write pass of ~6 s (rate-limited, so faults land mid-run), then the
# verify pass reads every block back.
FIO_ARGS=(--rw=randwrite --bs=16k --iodepth=16 --size=48M --rate=8m
	  --verify=crc32c --verify_fatal=1 --randseed=21)

# run_fio, but a fio that hangs fails the case after 120 s.
run_fio() {
	timeout -s KILL 120 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 \
		--port="$PORT" --verify_state_save=0 "$@"
}

backend_io() {	# CONF KEY: the vol0 backend counter KEY from rblkctl stats
	ctl "$1" stats vol0 --json | jget "d['volumes'][0]['backend_io']['$2']"
}

case_fio_verify() {
	setup fv 256
	run_fio --volume=vol0 --name=fv --rw=randwrite --bsrange=512-1M \
		--iodepth=32 --size=200M --verify=crc32c --verify_fatal=1 \
		--output-format=terse >"$T/fv.out" 2>&1 || { cat "$T/fv.out"; return 1; }
	why=$(fio_ok "$T/fv.out" 200000 200000) || { echo "$why"; return 1; }
	local ops inflight
	ops=$(backend_io "$T/fv.conf" ops) || return 1
	inflight=$(backend_io "$T/fv.conf" in_flight) || return 1
	echo "note: backend: $ops commands, $inflight in flight after fio"
	[ "$ops" -gt 400 ] || { echo "backend counted $ops commands"; return 1; }
	[ "$inflight" -eq 0 ] || { echo "$inflight commands still in flight at the backend"; return 1; }
	stop_target TERM
	[ "$TARGET_RC" -eq 0 ] || { echo "target exit $TARGET_RC"; return 1; }
}

case_osd_restart() {
	setup osd
	start_fio osd "${FIO_ARGS[@]}" || return 1
	osd_kill KILL || { echo "could not kill the OSD"; return 1; }
	sleep 3
	osd_start || { echo "the OSD did not start again"; return 1; }
	fio_wait_ok osd 49152 || return 1
	! grep -q 'volume vol0: .*error' "$T/target.log" ||
		{ grep 'volume vol0: .*error' "$T/target.log" | tail -3; echo "the target saw I/O errors"; return 1; }
	echo "note: fio verify passed across an OSD kill -9 + restart"
	stop_target TERM
}

case_target_kill9() {
	local t0
	setup k9
	start_fio k9 "${FIO_ARGS[@]}" || return 1
	kill -KILL "$TARGET_PID"
	wait "$TARGET_PID" 2>/dev/null
	sleep 1
	t0=$(date +%s)
	start_target "$T/k9.conf"
	fio_wait_ok k9 49152 || return 1
	grep -q 'connection lost' "$T/k9.out" || { echo "no 'connection lost' from the engine"; return 1; }
	echo "note: rode through a target kill -9; fio finished $(( $(date +%s) - t0 )) s after the restart"
	stop_target TERM
}

case_osd_stall() {
	local n
	setup st 160
	# The OSD stops before fio starts, so all 16 commands are out at the
	# cluster however fast the machine (unstopped, 128M took 0.3 s on one).
	osd_kill STOP
	start_fio st --rw=randwrite --bs=16k --iodepth=16 --size=32M \
		--verify=crc32c --verify_fatal=1 --randseed=22 \
		--io_timeout=3 --keep_alive_tmo=1 || { osd_kill CONT; return 1; }
	n=$(backend_io "$T/st.conf" in_flight)
	echo "note: OSD stopped: $n command(s) in flight at the backend"
	sleep 4.5	# 6 s in all: past io_timeout (3 s) and data_timeout (2 s)
	osd_kill CONT
	[ "${n:-0}" -ge 16 ] || { echo "rblkctl stats showed $n in flight at the backend, want the 16 fio had out"; return 1; }
	fio_wait_ok st 32768 || return 1
	grep -Eq 'connection lost \(.*io_timeout' "$T/st.out" ||
		{ grep 'connection lost' "$T/st.out"; echo "the client did not time the commands out"; return 1; }
	stop_target TERM
}

case_sigterm_stalled() {
	local t0 ms
	setup ss
	start_fio ss --rw=randwrite --bs=4k --iodepth=16 --size=32M --time_based \
		--runtime=60 --ctrl_loss_tmo=0 || return 1
	osd_kill STOP
	sleep 1
	t0=$(date +%s%N)
	kill -TERM "$TARGET_PID"
	for _ in $(seq 150); do kill -0 "$TARGET_PID" 2>/dev/null || break; sleep 0.1; done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	osd_kill CONT
	kill -0 "$TARGET_PID" 2>/dev/null && { echo "target still running ${ms} ms after SIGTERM"; return 1; }
	wait "$TARGET_PID"
	echo "note: SIGTERM with the OSD stopped: the target exited (status $?) after $ms ms"
	[ "$ms" -le 10000 ] || { echo "the target took $ms ms to stop"; return 1; }
	grep -q 'volume vol0: [0-9]* request(s) still at the cluster after 2 s: image .* left open' "$T/target.log" ||
		{ tail -n 8 "$T/target.log"; echo "no 'left open' line"; return 1; }
	kill "$FIO_PID" 2>/dev/null
	wait "$FIO_PID" 2>/dev/null
	return 0
}

rbd_used() {	# IMAGE: bytes rbd du counts as used
	rbd_admin du --format json "$CEPH_POOL/$1" |
		jget 'sum(i["used_size"] for i in d["images"] if "snapshot" not in i)'
}

case_discard() {
	local full after
	setup dc 64
	run_fio --volume=vol0 --name=fill --rw=write --bs=1M --size=64M --iodepth=4 \
		--verify=pattern --verify_pattern=0xa5 --do_verify=0 \
		--output-format=terse >"$T/dc.out" 2>&1 || { cat "$T/dc.out"; return 1; }
	full=$(rbd_used dc) || return 1
	# One DISCARD over it all, as blkdiscard or fstrim on /dev/ublkbN
	# sends (the fio engine's trims are at most 1 MiB, a quarter of an
	# RBD object: librbd zeroes those and keeps the object).
	"$RBLK_BUILD/tests/tools/rblk-zeroes" --discard --bytes $((64 << 20)) \
		127.0.0.1 "$PORT" vol0 || { echo "DISCARD failed"; return 1; }
	after=$(rbd_used dc) || return 1
	echo "note: rbd du: $full bytes used after writing 64 MiB, $after after trimming it"
	[ "$full" -ge $((60 << 20)) ] || { echo "rbd du counts only $full bytes after the fill"; return 1; }
	[ "$after" -le $((4 << 20)) ] || { echo "rbd du still counts $after bytes after the trim"; return 1; }
	run_fio --volume=vol0 --name=zero --rw=read --bs=64k --size=64M --verify=pattern \
		--verify_pattern=0x00 --verify_fatal=1 --output-format=terse \
		>>"$T/dc.out" 2>&1 || { cat "$T/dc.out"; echo "discarded blocks do not read as zeroes"; return 1; }
	# Discards of 4 KiB (below librbd's 64 KiB discard granularity, which
	# it would skip by default) over fresh data.
	run_fio --volume=vol0 --name=refill0 --rw=write --bs=1M --size=1M \
		--verify=pattern --verify_pattern=0x3c --do_verify=0 \
		--output-format=terse >>"$T/dc.out" 2>&1 || { cat "$T/dc.out"; return 1; }
	run_fio --volume=vol0 --name=trim --rw=trim --bs=4k --size=1M --iodepth=16 \
		--output-format=terse >>"$T/dc.out" 2>&1 || { cat "$T/dc.out"; return 1; }
	run_fio --volume=vol0 --name=zero1 --rw=read --bs=64k --size=1M --verify=pattern \
		--verify_pattern=0x00 --verify_fatal=1 --output-format=terse \
		>>"$T/dc.out" 2>&1 || { grep -v '^3;' "$T/dc.out" | tail; echo "blocks discarded in parts of an object do not read as zeroes"; return 1; }
	# WRITE_ZEROES over data (partial objects too) reads back as zeroes.
	run_fio --volume=vol0 --name=refill --rw=write --bs=1M --size=8M --offset=1M \
		--verify=pattern --verify_pattern=0x5a --do_verify=0 \
		--output-format=terse >>"$T/dc.out" 2>&1 || { cat "$T/dc.out"; return 1; }
	"$RBLK_BUILD/tests/tools/rblk-zeroes" --bytes $((12 << 20)) 127.0.0.1 "$PORT" vol0 ||
		{ echo "rblk-zeroes failed"; return 1; }
	run_fio --volume=vol0 --name=zero2 --rw=read --bs=64k --size=12M --verify=pattern \
		--verify_pattern=0x00 --verify_fatal=1 --output-format=terse \
		>>"$T/dc.out" 2>&1 || { grep -v '^3;' "$T/dc.out" | tail; echo "WRITE_ZEROES does not read as zeroes"; return 1; }
	stop_target TERM
}

case_shrunk_outside() {
	setup sh 64
	run_fio --volume=vol0 --name=fill --rw=write --bs=1M --size=64M \
		--output-format=terse >"$T/sh.out" 2>&1 || { cat "$T/sh.out"; return 1; }
	rbd_admin resize --allow-shrink --size 32M "$CEPH_POOL/sh" >/dev/null 2>&1 || return 1
	for _ in $(seq 100); do
		grep -q 'volume vol0: image .*/sh was resized outside rblk, to 33554432' "$T/target.log" && break
		sleep 0.1
	done
	grep -q 'I/O past the image.s new end fails' "$T/target.log" ||
		{ echo "the shrink was not logged"; return 1; }
	! run_fio --volume=vol0 --name=past --rw=write --bs=64k --offset=40M --size=1M \
		--output-format=terse >>"$T/sh.out" 2>&1 ||
		{ echo "a write past the image's new end was acknowledged"; return 1; }
	run_fio --volume=vol0 --name=before --rw=write --bs=64k --offset=16M --size=1M \
		--verify=crc32c --verify_fatal=1 --output-format=terse >>"$T/sh.out" 2>&1 ||
		{ grep -v '^3;' "$T/sh.out" | tail; echo "a write inside the image failed"; return 1; }
	stop_target TERM
}

case_bad_clusters() {
	local t0 secs lines
	PORT=$(free_port) || fail "no free port"
	rbd_admin create --size 32M "$CEPH_POOL/good" || return 1
	ceph-authtool --create-keyring "$T/wrong.keyring" --gen-key -n client.rblk >/dev/null || return 1
	# The same cluster's conf, but the monitors on a port nothing listens on.
	sed "s/^mon_host = .*/mon_host = 127.0.0.1:$(free_port)/" "$CEPH_CONF" >"$T/dead.conf"
	truncate -s 32M "$T/file.img"
	{
		cat <<CONF
[target]
listen_tcp = 127.0.0.1:$PORT
reactors = 2
admin_socket = $T/bad.conf.sock

[volume wrongkey]
$(rbd_conf_lines "$CEPH_POOL" good "$T/wrong.keyring")

[volume nopool]
$(rbd_conf_lines nosuchpool good)

[volume noimage]
$(rbd_conf_lines "$CEPH_POOL" nosuchimage)

[volume deadcluster]
$(rbd_conf_lines "$CEPH_POOL" good "$CEPH_RBLK_KEYRING" "$T/dead.conf")

[volume good]
$(rbd_conf_lines "$CEPH_POOL" good)

[volume file]
path = $T/file.img
allow_any_host = yes
CONF
	} >"$T/bad.conf"
	t0=$(date +%s%N)
	"$TARGET_BIN" --config "$T/bad.conf" >>"$T/target.log" 2>&1 &
	TARGET_PID=$!
	_cleanup_pids+=("$TARGET_PID")
	wait_port "$PORT" 40 || { cat "$T/target.log"; echo "target did not listen"; return 1; }
	secs=$(( ($(date +%s%N) - t0) / 1000000 ))
	grep -E 'ERR|not served' "$T/target.log" | sed 's/^/    /'
	for v in wrongkey nopool noimage deadcluster; do
		lines=$(grep -c "volume $v: .*(not served; the other volumes are)" "$T/target.log")
		[ "$lines" -eq 1 ] || { echo "volume $v: $lines error lines, want 1"; return 1; }
	done
	grep -q "volume wrongkey: .*Permission denied\|volume wrongkey: .*wrong key" "$T/target.log" ||
		{ echo "the wrong key is not named as such"; return 1; }
	grep -q "volume nopool: pool 'nosuchpool' does not exist" "$T/target.log" ||
		{ echo "the missing pool is not named"; return 1; }
	grep -q "volume noimage: image $CEPH_POOL/nosuchimage .*does not exist" "$T/target.log" ||
		{ echo "the missing image is not named"; return 1; }
	grep -q "volume deadcluster: cannot connect .*no monitor answered" "$T/target.log" ||
		{ echo "the unreachable cluster is not named"; return 1; }
	# Nothing else from Ceph on the target's stderr: one line each.
	lines=$(grep -vc '^[0-9-]*T[0-9:.]* rblk-target\[' "$T/target.log")
	[ "$lines" -eq 0 ] || { grep -v '^[0-9-]*T[0-9:.]* rblk-target\[' "$T/target.log" | head; echo "$lines foreign line(s) in the target's log"; return 1; }
	echo "note: the target listened $secs ms after its start, four volumes left out"
	[ "$secs" -lt 30000 ] || { echo "the bad volumes held the start for $secs ms"; return 1; }
	for v in good file; do
		run_fio --volume=$v --name=$v --rw=randwrite --bs=4k --size=8M --iodepth=8 \
			--verify=crc32c --verify_fatal=1 --output-format=terse >"$T/$v.out" 2>&1 ||
			{ cat "$T/$v.out"; echo "volume $v does not serve"; return 1; }
	done
	ctl "$T/bad.conf" volume list | grep -q '^good ' || { echo "volume good not listed"; return 1; }
	! ctl "$T/bad.conf" volume list | grep -q '^noimage ' || { echo "volume noimage listed"; return 1; }
	# The config keeps them for the next start.
	grep -q '^\[volume noimage\]' "$T/bad.conf" || { echo "the config lost volume noimage"; return 1; }
	stop_target TERM
}

case_admin() {
	local conf=$T/adm.conf out
	PORT=$(free_port) || fail "no free port"
	rbd_admin create --size 64M "$CEPH_POOL/theirs" || return 1
	cat >"$conf" <<CONF
[target]
listen_tcp = 127.0.0.1:$PORT
admin_socket = $conf.sock
volume_dir = $T/vols
CONF
	start_target "$conf"
	local ceph=(--ceph-conf "$CEPH_CONF" --ceph-id rblk --ceph-keyring "$CEPH_RBLK_KEYRING")
	ctl "$conf" volume create mine --rbd "$CEPH_POOL/mine" --size 32M --allow-any-host "${ceph[@]}" ||
		return 1
	rbd_admin info "$CEPH_POOL/mine" | grep -q 'size 32 MiB' || { echo "image mine not made"; return 1; }
	grep -q 'rbd_created = yes' "$conf" || { echo "the config does not record that rblk made it"; return 1; }
	ctl "$conf" volume create theirs --rbd "$CEPH_POOL/theirs" --allow-any-host "${ceph[@]}" || return 1
	! ctl "$conf" volume create again --rbd "$CEPH_POOL/theirs" "${ceph[@]}" 2>"$T/again.err" ||
		{ echo "a second volume on image theirs was made"; return 1; }
	grep -q "already the store of volume 'theirs'" "$T/again.err" || { cat "$T/again.err"; return 1; }
	! ctl "$conf" volume create big --rbd "$CEPH_POOL/theirs2" "${ceph[@]}" 2>"$T/nosize.err" ||
		{ echo "a missing image without a size was accepted"; return 1; }
	grep -q 'give a size to create it' "$T/nosize.err" || { cat "$T/nosize.err"; return 1; }
	! ctl "$conf" volume create t2 --rbd "$CEPH_POOL/theirs" --size 128M "${ceph[@]}" 2>/dev/null ||
		{ echo "an existing image was accepted with another size"; return 1; }
	# resize: ours grows; theirs is refused and stays 64 MiB
	ctl "$conf" volume resize mine --size 48M || return 1
	rbd_admin info "$CEPH_POOL/mine" | grep -q 'size 48 MiB' || { echo "image mine not grown"; return 1; }
	! ctl "$conf" volume resize theirs --size 128M 2>"$T/rs.err" || { echo "image theirs resized"; return 1; }
	grep -q 'not created by rblk' "$T/rs.err" || { cat "$T/rs.err"; return 1; }
	rbd_admin info "$CEPH_POOL/theirs" | grep -q 'size 64 MiB' || { echo "image theirs changed size"; return 1; }
	# a resize behind rblk's back is noticed
	rbd_admin resize --size 80M "$CEPH_POOL/theirs" >/dev/null 2>&1 || return 1
	wait_until_log() { for _ in $(seq 100); do grep -q "$1" "$T/target.log" && return 0; sleep 0.1; done; return 1; }
	wait_until_log 'volume theirs: image .*/theirs was resized outside rblk, to 83886080 bytes' ||
		{ echo "the outside resize was not logged"; return 1; }
	out=$(ctl "$conf" volume show theirs --json) || return 1
	[ "$(jget "d['volume']['rbd']['resized_outside']" <<<"$out")" = 1 ] || { echo "$out"; return 1; }
	[ "$(jget "d['volume']['size']" <<<"$out")" = $((64 << 20)) ] || { echo "export size changed"; return 1; }
	# a volume's identity: fsid, pool id, image id
	[ -n "$(jget "d['volume']['uuid']" <<<"$out")" ] || return 1
	# an image rblk made is tested with I/O, then delete removes it
	run_fio --volume=mine --name=mine --rw=randwrite --bs=64k --size=48M --iodepth=8 \
		--verify=crc32c --verify_fatal=1 --output-format=terse >"$T/mine.out" 2>&1 ||
		{ cat "$T/mine.out"; return 1; }
	ctl "$conf" volume delete mine | grep -q "removed image $CEPH_POOL/mine" || return 1
	! rbd_admin info "$CEPH_POOL/mine" >/dev/null 2>&1 || { echo "image mine still there"; return 1; }
	ctl "$conf" volume delete theirs | grep -q "kept image $CEPH_POOL/theirs" || return 1
	rbd_admin info "$CEPH_POOL/theirs" >/dev/null || { echo "image theirs was removed"; return 1; }
	stop_target TERM
}

run_case fio-verify case_fio_verify
run_case osd-restart case_osd_restart
run_case target-kill9 case_target_kill9
run_case osd-stall case_osd_stall
run_case sigterm-stalled case_sigterm_stalled
run_case discard case_discard
run_case shrunk-outside case_shrunk_outside
run_case bad-clusters case_bad_clusters
run_case admin case_admin
target_log_clean
exit $((nfail > 0))
