#!/bin/bash
# SPDX-License-Identifier: MIT
# Multipath and fencing (docs/multipath.md) on a real one-node Ceph
# cluster (tests/ceph/ceph-up): two targets, A and B, on loopback, both
# exporting one RBD image as volume vol0 with rbd_ha = yes; the fio
# engine with target=A,B (two paths).  Cases:
#  - failover-kill9: A SIGKILLed under fio verify: the job goes on
#    through B with no error, every block verifies, B holds the image's
#    lock and counts a takeover;
#  - fence-stale-writer: A frozen (SIGSTOP) while it holds the lock, the
#    client fails over to B, B fences A (A's handle blocklisted for a
#    year, the monitor says); A thawed, a write
#    sent through A is refused (the client gets an error, A counts it
#    and says it was fenced), the block keeps B's data, and the job's
#    data verifies; A then reopens the image and serves as a standby;
#  - uuid: both targets report the same volume UUID at LOGIN (rblkctl
#    volume show); a path to a target that exports another image under
#    the same name is never used: the job fails at ctrl_loss_tmo instead,
#    and that target saw no I/O;
#  - owner-watch: A holds the lock and goes idle; B takes it over (a
#    write through B): A, hearing nothing from librbd, finds out by its
#    owner watch, counts the fence and reopens as a standby by itself;
#  - lock-lost-unfenced: A's lock is removed without a blocklist (A's
#    librbd still believes it holds it): A's owner watch makes it a
#    standby, unfenced; a write through A takes the lock again and the
#    cluster names A; removed again and taken by B, A sees another
#    holder, goes to standby, and its next write fences B;
#  - failover-memory: 25 takeovers in a row, alternating A and B (a
#    write through the standby fences the other, which reopens the image
#    with a new cluster handle): from takeover 5 to 25 neither target
#    holds more fds or threads, its heap in use (status
#    heap_in_use_bytes) grows by less than 512 KiB (a leak of 25 KiB per
#    takeover fails it), and its RSS by less than 6 MiB (the RSS grew
#    2-4 MiB here, and 4-7 MiB before the malloc_trim after a handle's
#    shutdown: a rough bound; the heap is the leak check);
#  - path-order: a path list with a transport per path is parsed and
#    used in order (tcp: prefix), the first path down at the start;
#  - resized-failover: the volume grown with volume resize through A
#    under the job (A made the image, B did not): B's export follows the
#    image's growth live (not "resized outside rblk"), so after A's kill
#    -9 the job, whose queue learned the larger size from A, goes on
#    through B with no error and every block verifies;
#  - abandoned-answered: writes stuck at a fenced handle's librbd (a
#    test preload holds them, as Ceph 16.2.11 does) are answered
#    SHUTTING_DOWN when the target abandons that handle, and their
#    client goes on through B before its io_timeout.
. "$(dirname "$0")/lib.sh"
. "$RBLK_ROOT/tests/ceph/lib.sh"
ceph_test_prelude
RUN_CASE_TAIL=40

# target_conf NAME PORT IMAGE [LINE]: $T/NAME.conf, volume vol0 on IMAGE,
# rbd_ha, and LINE in the volume's section.
target_conf() {
	cat >"$T/$1.conf" <<CONF
[target]
listen_tcp = 127.0.0.1:$2
reactors = 2
admin_socket = $T/$1.conf.sock
volume_dir = $T/vols

[volume vol0]
backend = rbd
rbd_pool = $CEPH_POOL
rbd_image = $3
ceph_conf = $CEPH_CONF
ceph_client_id = rblk
ceph_keyring = $CEPH_RBLK_KEYRING
rbd_ha = yes
allow_any_host = yes
${4:-}
CONF
}

# start_ab IMAGE [IMAGE_B [A_LINE]]: targets A and B (A_PID, B_PID on PA,
# PB); A_LINE goes into A's volume section.
start_ab() {
	local img=$1 imgb=${2:-$1}
	PA=$(free_port) && PB=$(free_port) || fail "no free port"
	[ "$PA" != "$PB" ] || PB=$((PA + 1))
	target_conf a "$PA" "$img" "${3:-}"
	target_conf b "$PB" "$imgb"
	PORT=$PA start_target "$T/a.conf"; A_PID=$TARGET_PID
	PORT=$PB start_target "$T/b.conf"; B_PID=$TARGET_PID
}

# Milliseconds on the wall clock, from bash itself (no bc on a minimal
# machine).
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((10#$t / 1000)); }

ha() {	# NAME KEY: the volume's rbd.ha KEY (volume show --json)
	ctl "$T/$1.conf" volume show vol0 --json | jget "d['volume']['rbd']['ha']['$2']"
}

# The job: ~6 s of rate-limited writes, then every block read back.
FIO_ARGS=(--volume=vol0 --rw=randwrite --bs=16k --iodepth=16 --size=48M --rate=8m
	  --verify=crc32c --verify_fatal=1 --randseed=31 --keep_alive_tmo=2
	  --reconnect_delay=1 --ctrl_loss_tmo=60 --verify_state_save=0
	  --output-format=terse)

start_fio() {	# NAME PATHS [fio options]
	local name=$1 paths=$2
	shift 2
	timeout 300 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target="$paths" \
		--name="$name" "$@" >"$T/$name.out" 2>&1 &
	FIO_PID=$!
	_cleanup_pids+=("$FIO_PID")
	sleep 1.5
	kill -0 "$FIO_PID" 2>/dev/null || { cat "$T/$name.out"; echo "fio ended early"; return 1; }
}

stop_ab() {
	kill -CONT "$A_PID" "$B_PID" 2>/dev/null
	TARGET_PID=$A_PID stop_target TERM
	TARGET_PID=$B_PID stop_target TERM
}

case_failover_kill9() {
	local t0 t1
	rbd_admin create --size 64M "$CEPH_POOL/fo" || return 1
	start_ab fo
	start_fio fo "127.0.0.1:$PA,127.0.0.1:$PB" "${FIO_ARGS[@]}" || return 1
	[ "$(ha a lock)" = owned ] || { echo "A does not hold the lock: $(ha a lock)"; return 1; }
	[ "$(ha b lock)" = standby ] || { echo "B is not standby: $(ha b lock)"; return 1; }
	t0=$(now_ms)
	kill -KILL "$A_PID"
	wait "$A_PID" 2>/dev/null
	# Writes flow again once B holds the lock.
	for _ in $(seq 100); do
		[ "$(ha b lock 2>/dev/null)" = owned ] && break
		sleep 0.1
	done
	t1=$(now_ms)
	[ "$(ha b lock)" = owned ] || { echo "B did not take the lock: $(ha b lock)"; return 1; }
	fio_wait_ok fo 49152 || return 1
	grep -q 'failover from path 1' "$T/fo.out" ||
		{ echo "no failover line from the engine"; return 1; }
	[ "$(ha b takeovers)" -ge 1 ] || { echo "B counted no takeover"; return 1; }
	echo "note: B held the lock $((t1 - t0)) ms after A's kill -9 (keep_alive_tmo 2 s)"
	TARGET_PID=$B_PID stop_target TERM
}

case_resized_failover() {
	local want=$((128 << 20)) got
	rbd_admin create --size 64M "$CEPH_POOL/rs" || return 1
	# A as volume create --rbd records the target that made the image:
	# only that one may resize it.
	start_ab rs rs "rbd_created = yes"
	start_fio rs "127.0.0.1:$PA,127.0.0.1:$PB" "${FIO_ARGS[@]}" || return 1
	ctl "$T/a.conf" volume resize vol0 --size 128M >/dev/null || return 1
	for _ in $(seq 100); do
		got=$(ctl "$T/b.conf" volume show vol0 --json | jget "d['volume']['size']")
		[ "$got" = "$want" ] && break
		sleep 0.1
	done
	[ "$got" = "$want" ] || { echo "B still exports $got bytes, A $want"; return 1; }
	# Both targets log to one file; A resized, so only B hears news.
	grep -q 'volume vol0: image .*/rs grew to 134217728 bytes: exporting it all' "$T/target.log" ||
		{ echo "B did not say it took the growth"; return 1; }
	! grep -q '/rs was resized outside rblk' "$T/target.log" ||
		{ echo "B calls the set's own resize an outside one"; return 1; }
	# The job's queue learns the size from A's next tick (about 1 s).
	sleep 2.5
	kill -KILL "$A_PID"
	wait "$A_PID" 2>/dev/null
	fio_wait_ok rs 49152 || return 1
	grep -q 'failover from path 1' "$T/rs.out" ||
		{ echo "no failover line from the engine"; return 1; }
	TARGET_PID=$B_PID stop_target TERM
}

# fio through one target ($1 port) on the first 64 KiB: write (pattern
# $3) or read and check it; more fio options after.
fio_pat() {	# PORT NAME write|read PATTERN [fio options]
	local port=$1 name=$2 rw=$3 pat=$4
	shift 4
	timeout 120 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target="127.0.0.1:$port" --volume=vol0 \
		--name="$name" --rw="$rw" --bs=4k --size=64k --offset=0 \
		--verify=pattern --verify_pattern="$pat" --verify_state_save=0 \
		--output-format=terse "$@" >"$T/$name.out" 2>&1 ||
		{ grep -v '^3;' "$T/$name.out" | tail -n 5; return 1; }
}

# blocklist_days ADDR: whole days until the monitor's blocklist entry for
# ADDR lapses; fails when there is none.
blocklist_days() {
	local until
	until=$(ceph_cli osd blocklist ls 2>/dev/null | awk -v a="$1" '$1 == a { print $2 }')
	[ -n "$until" ] || return 1
	echo $(( ($(date -d "$until" +%s) - $(date +%s)) / 86400 ))
}

case_fence_stale_writer() {
	local got n addr days
	rbd_admin create --size 64M "$CEPH_POOL/fe" || return 1
	start_ab fe
	# Writes over and over to the first 64 KiB, 16 at a time.
	start_fio fe "127.0.0.1:$PA,127.0.0.1:$PB" --volume=vol0 --rw=write \
		--bs=4k --size=64k --iodepth=16 --time_based --runtime=8 \
		--keep_alive_tmo=2 --reconnect_delay=1 --output-format=terse || return 1
	[ "$(ha a lock)" = owned ] || { echo "A does not hold the lock"; return 1; }
	# A second writer with a session at A only and no keep-alive: the
	# write it sends while A is frozen waits in A's socket, and is a late
	# write once A thaws.
	"$FIO_BIN" --ioengine="$FIO_ENGINE" --target="127.0.0.1:$PA" --volume=vol0 \
		--name=late --rw=write --bs=4k --size=64k --offset=0 --rate_iops=2 \
		--time_based --runtime=60 --keep_alive_tmo=-1 --io_timeout=-1 \
		--ctrl_loss_tmo=0 --verify_state_save=0 --output-format=terse \
		>"$T/late.out" 2>&1 &
	LATE_PID=$!
	_cleanup_pids+=("$LATE_PID")
	sleep 1
	# A stops answering with commands in its socket and at librbd, but
	# keeps its lock and its cluster session: the split brain fencing is
	# for.  The client fails over to B, which fences A.
	kill -STOP "$A_PID"
	for _ in $(seq 150); do
		[ "$(ha b lock 2>/dev/null)" = owned ] && break
		sleep 0.1
	done
	[ "$(ha b lock)" = owned ] || { kill -CONT "$A_PID"; echo "B did not take the lock"; return 1; }
	fio_wait_ok fe 64 0 || { kill -CONT "$A_PID"; return 1; }
	# A's handle is blocklisted for a year, not the monitor's hour: a
	# write librbd might still hold there must never land.
	addr=$(ha b last_fenced_holder) && days=$(blocklist_days "$addr") ||
		{ kill -CONT "$A_PID"; echo "no blocklist entry for A's handle '$addr'"; return 1; }
	[ "$days" -ge 360 ] || { kill -CONT "$A_PID"; echo "A's handle $addr is blocklisted for $days days only"; return 1; }
	# B writes a pattern over those blocks; then A runs again and tries
	# the writes it was holding.
	fio_pat "$PB" b-pat write 0x0b0b0b0b --do_verify=0 || { kill -CONT "$A_PID"; return 1; }
	kill -CONT "$A_PID"
	for _ in $(seq 100); do
		grep -q "fenced: another target took over" "$T/target.log" && break
		sleep 0.1
	done
	grep -q "fenced: another target took over" "$T/target.log" ||
		{ grep -E "vol0|lock|fenc" "$T/target.log" | tail -n 20; echo "A did not say it was fenced"; return 1; }
	# The late writer's write was refused: its job failed, at once.
	if wait "$LATE_PID"; then
		echo "the write sent to A while it was frozen succeeded"; return 1
	fi
	n=$(ha a refused)
	[ "$n" -ge 1 ] || { echo "A refused nothing"; return 1; }
	[ "$(ha a fenced)" -ge 1 ] || { echo "A counted no fence"; return 1; }
	# None of A's late writes landed: the blocks hold B's pattern.
	fio_pat "$PB" b-check read 0x0b0b0b0b ||
		{ echo "a late write from A landed after B's"; return 1; }
	# A reopens with a new cluster handle and is a standby again.
	for _ in $(seq 100); do
		[ "$(ha a lock 2>/dev/null)" = standby ] && break
		sleep 0.2
	done
	got=$(ha a lock)
	[ "$got" = standby ] || { echo "A did not come back as standby: $got"; return 1; }
	[ "$(ha b lock)" = owned ] || { echo "B lost the lock"; return 1; }
	echo "note: A's handle $addr blocklisted for $days days; A thawed: its $n late request(s) refused by the cluster or as stale; the blocks kept B's data; A reopened as standby"
	stop_ab
}

case_owner_watch() {
	local t0 t1 got
	rbd_admin create --size 64M "$CEPH_POOL/ow" || return 1
	start_ab ow
	fio_pat "$PA" a-pat write 0x0a0a0a0a --do_verify=0 || return 1
	[ "$(ha a lock)" = owned ] || { echo "A does not hold the lock: $(ha a lock)"; return 1; }
	fio_pat "$PB" b-pat write 0x0b0b0b0b --do_verify=0 || return 1
	[ "$(ha b lock)" = owned ] || { echo "B did not take the lock: $(ha b lock)"; return 1; }
	t0=$(now_ms)
	for _ in $(seq 200); do
		[ "$(ha a lock 2>/dev/null)" = standby ] && break
		sleep 0.1
	done
	t1=$(now_ms)
	got=$(ha a lock)
	[ "$got" = standby ] || { echo "idle A still says '$got' 20 s after B took over"; return 1; }
	[ "$(ha a fenced)" = 1 ] || { echo "A counted $(ha a fenced) fences, not 1"; return 1; }
	[ "$(ha a refused)" = 0 ] || { echo "idle A refused $(ha a refused) request(s)"; return 1; }
	grep -q "fenced: another target took over" "$T/target.log" || { echo "A did not log the fence"; return 1; }
	fio_pat "$PB" b-check read 0x0b0b0b0b || { echo "B's data is not there"; return 1; }
	echo "note: idle A was a standby again $((t1 - t0)) ms after B took over"
	stop_ab
}

# unfence_break IMAGE: removes the image's lock the way nothing in rblk
# does, without blocklisting its holder: the holder's librbd still
# believes it holds the lock.
unfence_break() {
	local ls id locker
	ls=$(rbd_admin lock ls --format json "$CEPH_POOL/$1") || return 1
	id=$(echo "$ls" | jget "d[0]['id']") && locker=$(echo "$ls" | jget "d[0]['locker']") ||
		{ echo "no lock on $1: $ls"; return 1; }
	rbd_admin lock rm --rbd_blocklist_on_break_lock=false "$CEPH_POOL/$1" "$id" "$locker"
}

# wait_lock NAME STATE: target NAME's lock state becomes STATE within 20 s.
wait_lock() {
	local got
	for _ in $(seq 200); do
		got=$(ha "$1" lock 2>/dev/null)
		[ "$got" = "$2" ] && return 0
		sleep 0.1
	done
	echo "$1 still says '$got', not '$2'"
	return 1
}

# mem NAME: "fd F threads T rss KiB heap BYTES" of target NAME.
mem() {
	local pid j
	j=$(ctl "$T/$1.conf" status --json) && pid=$(jget "d['pid']" <<<"$j") || return 1
	echo "fd $(ls "/proc/$pid/fd" | wc -l) threads $(ls "/proc/$pid/task" | wc -l)" \
		"rss $(jget "d['rss_kib']" <<<"$j") heap $(jget "d['heap_in_use_bytes']" <<<"$j")"
}

case_failover_memory() {
	local i n=25 at5 at25
	rbd_admin create --size 64M "$CEPH_POOL/fm" || return 1
	start_ab fm
	for ((i = 1; i <= n; i++)); do
		fio_pat "$PA" a$i write 0x0a0a0a0a --do_verify=0 || return 1
		wait_lock b standby || return 1
		fio_pat "$PB" b$i write 0x0b0b0b0b --do_verify=0 || return 1
		wait_lock a standby || return 1
		((i == 5)) && at5="$(mem a) $(mem b)"
		((i == n)) && at25="$(mem a) $(mem b)"
	done
	[ "$(ha a fenced)" -ge $n ] && [ "$(ha b fenced)" -ge $((n - 1)) ] ||
		{ echo "fewer takeovers than asked: A fenced $(ha a fenced), B $(ha b fenced)"; return 1; }
	echo "note: after takeover 5: $at5"
	echo "note: after takeover $n: $at25"
	python3 - "$at5" "$at25" <<'PY' || return 1
import sys
slack = {"fd": 0, "threads": 0, "rss": 6144, "heap": 512 * 1024}
a, b = (sys.argv[i].split() for i in (1, 2))
a = [dict(zip(x[::2], map(int, x[1::2]))) for x in (a[:8], a[8:])]
b = [dict(zip(x[::2], map(int, x[1::2]))) for x in (b[:8], b[8:])]
bad = ["%s %s %d -> %d" % (who, k, x[k], y[k])
       for who, x, y in zip("AB", a, b) for k, s in slack.items() if y[k] > x[k] + s]
print("; ".join(bad) or "no growth beyond rss +6 MiB, heap +512 KiB")
sys.exit(1 if bad else 0)
PY
	stop_ab
}

case_lock_lost_unfenced() {
	rbd_admin create --size 64M "$CEPH_POOL/lu" || return 1
	start_ab lu
	fio_pat "$PA" a-pat write 0x0a0a0a0a --do_verify=0 || return 1
	wait_lock a owned || return 1
	# Nobody holds it now, and A was not fenced: A's owner watch finds
	# out and A goes back to standby, unfenced.
	unfence_break lu || return 1
	wait_lock a standby || return 1
	[ "$(ha a fenced)" = 0 ] || { echo "A counted a fence"; return 1; }
	grep -q "no longer holds the lock" "$T/target.log" || { echo "A did not say so"; return 1; }
	# A write through A takes the lock again, although A's librbd
	# believed all along that it held it: the cluster must name A.
	fio_pat "$PA" a-pat2 write 0x1a1a1a1a --do_verify=0 || return 1
	wait_lock a owned || return 1
	grep -q "librbd believed it held the lock" "$T/target.log" ||
		{ echo "A did not let go of librbd's record first"; return 1; }
	rbd_admin lock ls "$CEPH_POOL/lu" | grep -q . || { echo "the cluster names no holder"; return 1; }
	# Same again, and B takes the free lock before A's watch looks: A
	# sees another holder, still unfenced, and goes to standby; its next
	# write fences B.
	unfence_break lu || return 1
	fio_pat "$PB" b-pat write 0x0b0b0b0b --do_verify=0 || return 1
	wait_lock b owned || return 1
	wait_lock a standby || return 1
	[ "$(ha a fenced)" = 0 ] || { echo "A counted a fence"; return 1; }
	fio_pat "$PA" a-pat3 write 0x2a2a2a2a --do_verify=0 || return 1
	wait_lock a owned || return 1
	wait_lock b standby || return 1
	[ "$(ha b fenced)" = 1 ] || { echo "B counted $(ha b fenced) fences, not 1"; return 1; }
	fio_pat "$PA" a-check read 0x2a2a2a2a || { echo "A's last data is not there"; return 1; }
	grep -E "librbd believed|cluster names|no longer holds" "$T/target.log" | sed 's/^.*WARN  /note: /'
	stop_ab
}

# abandoned-answered: target A runs with the test preload that keeps
# writes at librbd forever once $T/stuck exists (what Ceph 16.2.11's
# librbd does to a write of a blocklisted handle that waits for the
# lock).  A client writes through A (paths A, B; io_timeout 30 s) and
# its writes stick there; a second client writes through B, which fences
# A.  A finds it is fenced, cannot close its handle, abandons it and
# answers the stuck writes SHUTTING_DOWN: the first client goes on
# through B well before its io_timeout, and its data is there.
case_abandoned_answered() {
	local t0 ms n preload=$RBLK_BUILD/tests/preload/rbd_stuck_writes.so
	[ -f "$preload" ] || { echo "$preload not built (make unit-tests)"; return 1; }
	rbd_admin create --size 64M "$CEPH_POOL/st" || return 1
	PA=$(free_port) && PB=$(free_port) || return 1
	[ "$PA" != "$PB" ] || PB=$((PA + 1))
	target_conf a "$PA" st
	target_conf b "$PB" st
	LD_PRELOAD=$preload RBLK_TEST_STUCK_WRITES=$T/stuck PORT=$PA start_target "$T/a.conf"
	A_PID=$TARGET_PID
	PORT=$PB start_target "$T/b.conf"; B_PID=$TARGET_PID
	fio_pat "$PA" st-first write 0x11111111 --do_verify=0 || return 1
	[ "$(ha a lock)" = owned ] || { echo "A does not hold the lock: $(ha a lock)"; return 1; }
	touch "$T/stuck"
	t0=$(now_ms)
	timeout 120 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target="127.0.0.1:$PA,127.0.0.1:$PB" \
		--volume=vol0 --name=st --rw=write --bs=4k --size=64k --offset=0 --iodepth=4 \
		--verify=pattern --verify_pattern=0x2c2c2c2c --verify_state_save=0 \
		--keep_alive_tmo=2 --io_timeout=30 --reconnect_delay=1 \
		--output-format=terse >"$T/st.out" 2>&1 &
	FIO_PID=$!
	_cleanup_pids+=("$FIO_PID")
	sleep 1
	# B takes the lock over at a write of its own, away from those blocks.
	fio_pat "$PB" st-b write 0x0b0b0b0b --offset=1m --do_verify=0 || return 1
	fio_wait_ok st 64 || return 1
	ms=$(($(now_ms) - t0))
	rm -f "$T/stuck"
	grep -q "left the fenced handle" "$T/target.log" ||
		{ grep -E "vol0|fenc|abandon" "$T/target.log" | tail -n 20; echo "A did not abandon its handle"; return 1; }
	[ "$ms" -lt 20000 ] ||
		{ echo "the job took $ms ms: the stuck writes waited for the io_timeout (30 s)"; return 1; }
	n=$(sed -n 's/.*answered \([0-9]*\) request(s) left at the abandoned handle.*/\1/p' "$T/target.log" |
		awk '{ s += $1 } END { print s + 0 }')
	[ "$n" -ge 1 ] || { echo "A answered none of the stuck writes"; return 1; }
	[ "$(ha a abandoned_handles)" = 1 ] || { echo "A counted $(ha a abandoned_handles) abandoned handles"; return 1; }
	fio_pat "$PB" st-check read 0x2c2c2c2c || { echo "the job's data is not there"; return 1; }
	echo "note: A answered $n stuck write(s) at the abandoning; the job ended $ms ms after its writes stuck (io_timeout 30 s), its data read back through B"
	stop_ab
}

case_uuid() {
	local ua ub uo t0
	rbd_admin create --size 64M "$CEPH_POOL/id1" || return 1
	rbd_admin create --size 64M "$CEPH_POOL/id2" || return 1
	start_ab id1
	ua=$(ctl "$T/a.conf" volume show vol0 --json | jget "d['volume']['uuid']")
	ub=$(ctl "$T/b.conf" volume show vol0 --json | jget "d['volume']['uuid']")
	[ -n "$ua" ] && [ "$ua" = "$ub" ] || { echo "A says $ua, B says $ub"; return 1; }
	stop_ab
	# B now exports another image under the same volume name.
	start_ab id1 id2
	uo=$(ctl "$T/b.conf" volume show vol0 --json | jget "d['volume']['uuid']")
	[ "$uo" != "$ua" ] || { echo "two images, one uuid $uo"; return 1; }
	start_fio id "127.0.0.1:$PA,127.0.0.1:$PB" --volume=vol0 --rw=randwrite \
		--bs=4k --iodepth=4 --size=8M --rate=1m --keep_alive_tmo=1 \
		--reconnect_delay=1 --ctrl_loss_tmo=4 --output-format=terse || return 1
	t0=$(date +%s)
	kill -KILL "$A_PID"
	wait "$A_PID" 2>/dev/null
	wait "$FIO_PID" && { echo "fio went on without its volume"; return 1; }
	grep -q 'reaches another volume' "$T/id.out" ||
		{ grep -i 'path\|volume' "$T/id.out" | tail -5; echo "no 'another volume' refusal"; return 1; }
	[ "$(ctl "$T/b.conf" stats vol0 --json | jget "d['volumes'][0]['backend_io']['ops']")" = 0 ] ||
		{ echo "the other volume saw I/O"; return 1; }
	echo "note: the job failed $(( $(date +%s) - t0 )) s after A's kill (ctrl_loss_tmo 4 s); the other volume saw no I/O"
	TARGET_PID=$B_PID stop_target TERM
}

case_path_order() {
	rbd_admin create --size 64M "$CEPH_POOL/po" || return 1
	start_ab po
	local dead
	dead=$(free_port) || return 1
	# The first path refuses connections; the job runs on the second,
	# spelled with its transport.
	timeout 120 "$FIO_BIN" --ioengine="$FIO_ENGINE" \
		--target="127.0.0.1:$dead,tcp:127.0.0.1:$PB" --volume=vol0 --name=po \
		--rw=randwrite --bs=16k --iodepth=8 --size=8M --verify=crc32c \
		--verify_fatal=1 --verify_state_save=0 --output-format=terse >"$T/po.out" 2>&1 ||
		{ cat "$T/po.out"; return 1; }
	why=$(fio_ok "$T/po.out" 8192 8192) || { echo "$why"; return 1; }
	[ "$(ha b lock)" = owned ] || { echo "B does not hold the lock"; return 1; }
	stop_ab
}

run_case failover-kill9 case_failover_kill9
run_case fence-stale-writer case_fence_stale_writer
run_case owner-watch case_owner_watch
run_case lock-lost-unfenced case_lock_lost_unfenced
run_case uuid case_uuid
run_case failover-memory case_failover_memory
run_case path-order case_path_order
run_case resized-failover case_resized_failover
run_case abandoned-answered case_abandoned_answered
target_log_clean
exit $((nfail > 0))
