#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of the RDMA suite (tests/vm/suite-rdma.sh): rblk-target
# listening on TCP and RDMA (Soft-RoCE rxe0), the fio engine and
# tests/tools/rdma_probe as initiators.  Every data check is fio's crc32c
# verify; sizes are small because the VM's CPU is emulated.
. "$(dirname "$0")/lib.sh"

TGT=$RBLK_BUILD/rblk-target
ENGINE=$RBLK_BUILD/rblk-fio.so
PROBE=$RBLK_BUILD/tests/tools/rdma_probe
FIO=$(cat "$RBLK_BUILD/fio-bin" 2>/dev/null || command -v fio)
RPORT=4421 TPORT=4420
IP=$(rxe-up) || { echo "rxe-up failed"; IP=; }

# --- helpers -------------------------------------------------------------------

need_rdma() {
	[ -n "$IP" ] || fail "no Soft-RoCE device (rxe-up failed)"
	need_build rblk-target rblk-fio.so tests/tools/rdma_probe
}

# write_conf FILE BACKEND IMG [SIZE [EXTRA-TARGET-LINE]]: one volume, TCP
# and RDMA listeners.
write_conf() {
	cat >"$1" <<CONF
[target]
listen_tcp = $IP:$TPORT
listen_rdma = $IP:$RPORT
reactors = 2
reactor_buffer_mb = 32
admin_socket = $CASE_TMP/target.sock
${5:-}

[volume vol0]
path = $3
size = ${4:-64M}
backend = $2
allow_any_host = yes
CONF
}

# rdma_conf FILE SIZE [TARGET-LINES]: vol0 of SIZE, an RDMA listener only;
# TARGET-LINES default to two reactors.
rdma_conf() {
	cat >"$1" <<CONF
[target]
listen_rdma = $IP:$RPORT
admin_socket = $CASE_TMP/target.sock
${3:-reactors = 2}

[volume vol0]
path = $CASE_TMP/vol.img
size = $2
allow_any_host = yes
CONF
}

# add_bystander_volume FILE: a second volume, vol1 (64 MiB), for a
# bystander's I/O next to an attack on vol0.
add_bystander_volume() {
	cat >>"$1" <<CONF

[volume vol1]
path = $CASE_TMP/vol1.img
size = 64M
allow_any_host = yes
CONF
}

# start_tgt CONF: rblk-target in the background (TPID), log appended to
# tgt.log; waits until this start listens on both links.  The log may
# hold an earlier start's lines (a restart), which must not count.
start_tgt() {
	local from=1
	[ -f "$CASE_TMP/tgt.log" ] && from=$(($(wc -l <"$CASE_TMP/tgt.log") + 1))
	"$TGT" --config "$1" >>"$CASE_TMP/tgt.log" 2>&1 &
	TPID=$!
	wait_until 20 listening_since "$from" ||
		{ cat "$CASE_TMP/tgt.log"; fail "target did not listen on rdma"; }
}

# listening_since LINE: tgt.log from LINE on says the RDMA listener is up
# (the TCP one is started before it).
listening_since() {
	tail -n +"$1" "$CASE_TMP/tgt.log" | grep -q "listening on rdma"
}

# stop_tgt: SIGTERM; the target must exit 0 within 10 s.
stop_tgt() {
	local i rc
	kill -TERM "$TPID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$TPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$TPID" 2>/dev/null && { tail -n 20 "$CASE_TMP/tgt.log"; fail "target still running 10 s after SIGTERM"; }
	wait "$TPID"
	rc=$?
	[ "$rc" -eq 0 ] || { tail -n 20 "$CASE_TMP/tgt.log"; fail "target exited $rc after SIGTERM"; }
}

alive() { kill -0 "$TPID" 2>/dev/null || { tail -n 30 "$CASE_TMP/tgt.log"; fail "target died"; }; }

. "$RBLK_ROOT/tests/fio-terse.sh"

# fio_x TRANSPORT NAME MIN_READ_KB MIN_WRITE_KB FIO-ARGS...
fio_x() {
	local tp=$1 name=$2 rk=$3 wk=$4 port=$RPORT out=$CASE_TMP/fio-$2.out rc
	shift 4
	[ "$tp" = tcp ] && port=$TPORT
	timeout 240 "$FIO" --ioengine="$ENGINE" --transport="$tp" --target="$IP" \
		--port="$port" --volume=vol0 --hostname=rdma-suite --verify_state_save=0 \
		--output-format=terse --name="$name" "$@" >"$out" 2>&1
	rc=$?
	grep -v '^3;' "$out"
	if [ "$rc" -ne 0 ] || ! fio_ok "$out" "$rk" "$wk"; then
		echo "--- target log (last 15 lines):"
		tail -n 15 "$CASE_TMP/tgt.log" 2>/dev/null
		echo "fio $name exited $rc"
		return 1
	fi
}

# --- cases ---------------------------------------------------------------------

# randwrite + verify over RDMA, 4 jobs (4 queue pairs), every block size;
# 512 B and 4 KiB writes travel inline in the capsule, 64 KiB and 1 MiB
# writes are RDMA READs over several descriptors (the client splits at
# 128 KiB), and READs are RDMA WRITEs chained with the response.
case_fio_verify() {	# BACKEND
	local be=$1 bs size
	need_rdma
	write_conf tgt.conf "$be" "$CASE_TMP/vol.img" 64M
	start_tgt tgt.conf
	for bs in 512 4k 64k 1m; do
		case $bs in 512) size=256k ;; 4k) size=1M ;; 64k) size=2M ;; *) size=4M ;; esac
		log "bs=$bs size=$size x 4 jobs"
		fio_x rdma "rw-$bs" 1 1 --rw=randwrite --bs="$bs" --size="$size" \
			--numjobs=4 --offset_increment=16M --iodepth=16 \
			--verify=crc32c || fail "fio randwrite+verify bs=$bs ($be) failed"
	done
	grep -q "logged in" "$CASE_TMP/tgt.log" || fail "no LOGIN seen in the target log"
	alive
	stop_tgt
}

# rdma_poll = busy: the reactors spin on the CQs instead of sleeping on
# the completion channels; same data path, so the same verify must pass.
case_busy_poll() {
	need_rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M "rdma_poll = busy"
	start_tgt tgt.conf
	fio_x rdma busy 1 1 --rw=randwrite --bs=16k --size=2M --numjobs=2 \
		--offset_increment=16M --iodepth=8 --verify=crc32c ||
		fail "fio verify with rdma_poll = busy failed"
	alive
	stop_tgt
}

# rdma_poll = adaptive: spin 100 us after work, then arm and sleep; the
# gap between the two runs makes every reactor fall asleep and wake again.
case_adaptive_poll() {
	need_rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M "rdma_poll = adaptive
rdma_poll_us = 100"
	start_tgt tgt.conf
	fio_x rdma adaptive-qd1 1 1 --rw=randwrite --bs=4k --size=2M --iodepth=1 \
		--verify=crc32c || fail "fio QD1 verify with rdma_poll = adaptive failed"
	nap 1
	fio_x rdma adaptive 1 1 --rw=randwrite --bs=16k --size=2M --numjobs=2 \
		--offset_increment=16M --iodepth=8 --verify=crc32c ||
		fail "fio verify with rdma_poll = adaptive failed"
	alive
	stop_tgt
}

# Data written over RDMA survives a target restart (SIGTERM, clean exit).
case_restart() {
	need_rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M
	start_tgt tgt.conf
	fio_x rdma before 0 4096 --rw=write --bs=64k --size=4M \
		--verify=crc32c --do_verify=0 || fail "write before restart failed"
	stop_tgt
	start_tgt tgt.conf
	fio_x rdma after 4096 0 --rw=write --bs=64k --size=4M \
		--verify=crc32c --verify_only || fail "data did not survive the restart"
	stop_tgt
}

# The target dies (SIGKILL) under RDMA I/O: the kernel tears its QPs
# down and the initiator sees DISCONNECTED, so fio -- told not to
# reconnect (ctrl_loss_tmo=0; by default it would hold its I/O and retry)
# -- must fail its I/O and end promptly instead of waiting forever.
case_target_killed() {
	local f i
	need_rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M
	start_tgt tgt.conf
	fio_x rdma killed 0 0 --rw=randwrite --bs=4k --size=4M --iodepth=16 \
		--time_based --runtime=120 --ctrl_loss_tmo=0 >fio.log 2>&1 &
	f=$!
	sleep 6
	kill -0 "$f" 2>/dev/null || { cat fio.log; fail "fio ended before the target was killed"; }
	kill -KILL "$TPID"
	for ((i = 0; i < 300; i++)); do
		kill -0 "$f" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$f" 2>/dev/null && { kill -KILL "$f"; fail "fio still waiting 30 s after the target died"; }
	wait "$f" && { cat fio.log; fail "fio reported success although the target died"; }
	grep -E "error|Connection reset|Input/output" fio.log | head -n 3
	log "fio failed within $((i / 10)) s of the target's death"
}

# One volume through both transports at once: each writes and verifies its
# own half concurrently, then each verifies the half the other wrote.
case_tcp_and_rdma() {
	local p1 p2
	need_rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M
	start_tgt tgt.conf
	fio_x tcp w-tcp 0 4096 --rw=randwrite --bs=16k --size=4M --offset=0 \
		--iodepth=8 --verify=crc32c >tcp.log 2>&1 &
	p1=$!
	fio_x rdma w-rdma 0 4096 --rw=randwrite --bs=16k --size=4M --offset=8M \
		--iodepth=8 --verify=crc32c >rdma.log 2>&1 &
	p2=$!
	wait "$p1" || { cat tcp.log; fail "TCP half failed"; }
	wait "$p2" || { cat rdma.log; fail "RDMA half failed"; }
	fio_x rdma x-rdma 4096 0 --rw=randwrite --bs=16k --size=4M --offset=0 \
		--verify=crc32c --verify_only || fail "RDMA does not read what TCP wrote"
	fio_x tcp x-tcp 4096 0 --rw=randwrite --bs=16k --size=4M --offset=8M \
		--verify=crc32c --verify_only || fail "TCP does not read what RDMA wrote"
	alive
	stop_tgt
}

# Discovery over RDMA lists what this host may use and nothing else, the
# same as over TCP.
case_discover() {
	local tp port out
	need_rdma
	need_build rblkctl
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 16M
	cat >>tgt.conf <<CONF

[volume hidden]
path = $CASE_TMP/hidden.img
size = 16M
allow_hosts = someone-else
CONF
	start_tgt tgt.conf
	for tp in rdma tcp; do
		port=$RPORT; [ "$tp" = tcp ] && port=$TPORT
		out=$("$RBLK_BUILD/rblkctl" discover --target "$IP:$port" --transport "$tp" \
			--hostname me 2>&1) || { echo "$out"; fail "discover over $tp failed"; }
		echo "$out"
		grep -qw vol0 <<<"$out" || fail "discover over $tp does not list vol0"
		grep -qw hidden <<<"$out" && fail "discover over $tp lists a volume this host may not use"
	done
	alive
	stop_tgt
}

# Access control over RDMA takes the peer address from the RDMA CM
# (rdma_get_peer_addr), not from the socket: an address entry matches the
# real RDMA peer, a client claiming a listed address as its name is
# refused; a volume with a secret is hidden from discovery until proven
# (DISCOVER after the mutual LOGIN on the same queue pair).
case_acl_rdma() {
	local out login=$RBLK_BUILD/tests/tools/rblk-login
	need_rdma
	need_build rblkctl tests/tools/rblk-login
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$CASE_TMP/sec.key"
	chmod 600 "$CASE_TMP/sec.key"
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 16M
	cat >>tgt.conf <<CONF

[volume byaddr]
path = $CASE_TMP/byaddr.img
size = 4M
allow_hosts = $IP

[volume bynet]
path = $CASE_TMP/bynet.img
size = 4M
allow_hosts = ${IP%.*}.0/24

[volume notme]
path = $CASE_TMP/notme.img
size = 4M
allow_hosts = 192.0.2.1

[volume sec]
path = $CASE_TMP/sec.img
size = 4M
allow_any_host = yes
secret_file = $CASE_TMP/sec.key
CONF
	start_tgt tgt.conf
	out=$("$login" --transport rdma --host anyname --io 1 "$IP" "$RPORT" byaddr 2>&1) ||
		fail "address entry does not admit the real RDMA peer: $out"
	out=$("$login" --transport rdma --host anyname "$IP" "$RPORT" bynet 2>&1) ||
		fail "CIDR entry does not admit the real RDMA peer: $out"
	if out=$("$login" --transport rdma --host 192.0.2.1 "$IP" "$RPORT" notme 2>&1); then
		fail "a claimed host name equal to a listed address got in over RDMA"
	fi
	grep -q "access denied" <<<"$out" || fail "unclear refusal: $out"
	grep -q "login refused: volume 'notme' host '192.0.2.1' peer rdma:$IP:[0-9]*: access denied" "$CASE_TMP/tgt.log" ||
		fail "refusal not logged with the RDMA peer"
	out=$("$login" --transport rdma --secret "$CASE_TMP/sec.key" --io 1 "$IP" "$RPORT" sec 2>&1) ||
		fail "mutual authentication over RDMA: $out"
	# The target closes a discovery connection right after its answer;
	# the client once took the DISCONNECTED event for a failure when it
	# came before it had polled the answer (2 % of runs on rxe).
	local k
	for ((k = 0; k < 50; k++)); do
		out=$("$RBLK_BUILD/rblkctl" discover --target "$IP:$RPORT" --transport rdma --hostname x 2>&1) ||
			fail "discover over rdma (run $((k + 1)) of 50): $out"
		grep -q 'WARN' <<<"$out" && fail "a discover that worked warns: $out"
	done
	echo "$out"
	grep -qw byaddr <<<"$out" || fail "discover does not list byaddr by the RDMA peer address"
	grep -qw notme <<<"$out" && fail "discover lists notme"
	grep -qw sec <<<"$out" && fail "discover lists the secret volume without a proof"
	out=$("$RBLK_BUILD/rblkctl" discover --target "$IP:$RPORT" --transport rdma --hostname x \
		--volume sec --secret-file "$CASE_TMP/sec.key" 2>&1) || fail "discover with the secret over rdma: $out"
	echo "$out"
	grep -qw sec <<<"$out" || fail "discover after the proof does not list sec"
	alive
	stop_tgt
}

# Hostile initiators: each rdma_probe case must see the reaction it
# expects (reject with a status / error status on a live connection /
# this connection closed), while a well-behaved fio job on another queue
# pair keeps verifying, and the target stays up.
case_hostile() {
	local c bg nfail=0
	need_rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M
	start_tgt tgt.conf
	fio_x rdma bystander 1 1 --rw=randwrite --bs=4k --size=4M --offset=32M \
		--iodepth=4 --verify=crc32c --time_based --runtime=15 \
		--verify_backlog=64 >bystander.log 2>&1 &
	bg=$!
	sleep 2
	# Four probes at a time: the emulated CPU makes each take seconds.
	local cases=($("$PROBE" list | cut -f1)) i j
	for ((i = 0; i < ${#cases[@]}; i += 4)); do
		for c in "${cases[@]:i:4}"; do
			timeout 60 "$PROBE" "$IP" "$RPORT" vol0 "$c" >"probe-$c.log" 2>&1 &
		done
		for c in "${cases[@]:i:4}"; do
			wait -n
		done
		alive
	done
	for c in "${cases[@]}"; do
		# rdma_probe prints its verdict in its exit status; rerun the
		# parser on the log: RESULT line plus PASS/FAIL marker.
		grep "^RESULT" "probe-$c.log" || echo "RESULT: $c: no result"
		grep -q "^VERDICT: ok" "probe-$c.log" ||
			{ sed 's/^/      /' "probe-$c.log"; echo "hostile case $c: unexpected reaction"; nfail=$((nfail + 1)); }
	done
	wait "$bg" || { cat bystander.log; fail "a well-behaved initiator failed during the hostile cases"; }
	grep -q "remote access error\|RDMA .* failed" "$CASE_TMP/tgt.log" ||
		{ tail -n 30 "$CASE_TMP/tgt.log"; fail "target logged no RDMA access failure"; }
	fio_x rdma after 4096 4096 --rw=randwrite --bs=64k --size=4M \
		--verify=crc32c || fail "target unusable after the hostile cases"
	[ "$nfail" -eq 0 ] || fail "$nfail hostile case(s) did not get the expected reaction"
	stop_tgt
}

# rdma resource counts of one process: "QP MR CQ PD" (kernel objects).
res_counts() {
	local pid=$1 t out=""
	for t in qp mr cq pd; do
		out+="$(rdma resource show "$t" 2>/dev/null | grep -c "pid $pid ") "
	done
	echo "$out"
}

# (wait_until re-runs a command: these re-read the counts each time.)
# qp_seen keeps the sample that showed a QP in $mid (case_cycles' local):
# checking for a QP and then counting again raced with the gap between
# fio's probe connection and its job's connection, and counted none
# (a CI failure).
qp_seen() { mid=$(res_counts "$TPID"); [ "${mid%% *}" -gt 0 ]; }
counts_back() { [ "$(res_counts "$TPID")" = "$before" ]; }

# 200 connect/LOGIN/I-O/disconnect cycles leave the target with the same
# QPs, MRs, CQs, PDs and file descriptors as before.
case_cycles() {
	local before after fd0 fd1
	need_rdma
	need_cmd rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M
	start_tgt tgt.conf
	# Warm-up: each reactor registers its buffer pool on first use.
	timeout 60 "$PROBE" "$IP" "$RPORT" vol0 cycles 4 || fail "warm-up cycles failed"
	sleep 1
	before=$(res_counts "$TPID")
	fd0=$(ls /proc/"$TPID"/fd | wc -l)
	# The count must see a live connection, or the check below proves
	# nothing.
	# (rdma resource show takes seconds in the emulated VM: keep the
	# connection up well beyond one count.)
	fio_x rdma hold 1 0 --rw=randread --bs=4k --size=1M --time_based \
		--runtime=15 >hold.log 2>&1 &
	local hold=$! mid=
	# (fio's parent probes the volume over a short connection of its own,
	# then the job connects: either one's QP will do, but the sample that
	# saw it is the one logged.)
	if ! wait_until 40 qp_seen; then
		rdma resource show qp
		wait "$hold" || { cat hold.log; fail "fio during the count check failed"; }
		cat hold.log "$CASE_TMP/fio-hold.out"
		fail "rdma resource show does not see the target's QPs (last count: $mid): the leak check would prove nothing"
	fi
	log "with one connection open: qp mr cq pd = $mid"
	wait "$hold" || { cat hold.log; fail "fio during the count check failed"; }
	# (Each count runs rdma four times, seconds each under emulation.)
	wait_until 30 counts_back ||
		fail "resources not released after one connection: $before -> $(res_counts "$TPID")"
	log "before: qp mr cq pd = $before, fds $fd0"
	timeout 400 "$PROBE" "$IP" "$RPORT" vol0 cycles 200 || fail "cycles failed"
	wait_until 30 counts_back
	after=$(res_counts "$TPID")
	fd1=$(ls /proc/"$TPID"/fd | wc -l)
	log "after 200 cycles: qp mr cq pd = $after, fds $fd1"
	rdma resource show 2>/dev/null | sed 's/^/    /'
	[ "$before" = "$after" ] || fail "RDMA resources leaked: before $before, after $after"
	[ "$fd0" -eq "$fd1" ] || fail "file descriptors leaked: $fd0 -> $fd1"
	alive
	stop_tgt
}

# VmRSS, VmPin, VmLck of a process in KiB: "rss pin lck".
mem_of() {
	local k v u rss=0 pin=0 lck=0
	while read -r k v u; do
		case $k in
		VmRSS:) rss=$v ;; VmPin:) pin=$v ;; VmLck:) lck=$v ;;
		esac
	done </proc/"$1"/status
	echo "$rss $pin $lck"
}

# 1,000 RDMA connects asking for depth 1024 that never LOGIN (100 open at
# once, the oldest closed to make room): the target
# admits at most max_prelogin_per_host (64) of them at a time and rejects
# the rest NO_RESOURCES, each admitted one costs little (no receive
# buffers before LOGIN, a send queue that does not grow with the depth),
# the ones left open are closed by login_timeout, and a bystander doing
# fio verify over RDMA on another volume sees no error.
# login_timeout (lt) must outlast a connection's stay in the probe's
# window (window x time per connect: 7 s in a slow CI run).  With 5 s the
# target timed out connections the probe still counted as open, then
# admitted new ones, and the probe held 100 while the target never had
# more than 64.
# RBLK_PRELOGIN_TGT runs another target binary (before/after numbers).
case_prelogin() {
	local tgt=${RBLK_PRELOGIN_TGT:-$TGT} n=${RBLK_PRELOGIN_N:-1000} win=${RBLK_PRELOGIN_WIN:-100}
	local m0 m1 m2 m3 peak=0 rss pid held bg i t1= lt=20
	need_rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M "login_timeout = $lt"
	add_bystander_volume tgt.conf
	TGT=$tgt start_tgt tgt.conf
	# Warm-up: each reactor registers its buffer pool on first use.
	timeout 60 "$PROBE" "$IP" "$RPORT" vol0 cycles 4 >/dev/null || fail "warm-up cycles failed"
	m0=$(mem_of "$TPID")
	log "target before: rss pin lck KiB = $m0"
	fio_x rdma bystander 1 1 --volume=vol1 --rw=randwrite --bs=4k --size=8M \
		--iodepth=4 --verify=crc32c --verify_backlog=64 --time_based \
		--runtime=120 >bystander.log 2>&1 &
	bg=$!
	sleep 2
	timeout 500 "$PROBE" "$IP" "$RPORT" vol0 prelogin "$n" "$win" $((lt + 20)) >probe.log 2>&1 &
	pid=$!
	# m1: right after the last connect; m3: login_timeout + 10 s later,
	# the probe still holding its ends.
	while kill -0 "$pid" 2>/dev/null; do
		rss=$(mem_of "$TPID"); rss=${rss%% *}
		[ "$rss" -gt "$peak" ] && peak=$rss
		if [ -z "$t1" ] && grep -q "^HOLDING" probe.log; then
			m1=$(mem_of "$TPID"); t1=$SECONDS
		fi
		[ -n "$t1" ] && [ -z "${m3:-}" ] && [ $((SECONDS - t1)) -ge $((lt + 10)) ] &&
			m3=$(mem_of "$TPID")
		nap 0.5
	done
	wait "$pid"; i=$?
	cat probe.log
	alive
	m2=$(mem_of "$TPID")
	log "target after the last connect: rss pin lck KiB = ${m1:-?}; $((lt + 10)) s later (login_timeout $lt s): ${m3:-?}; peak rss $peak KiB; after the probe: $m2"
	log "target rss growth: peak $((peak - ${m0%% *})) KiB over $((n)) pre-login connects"
	[ "$i" -eq 0 ] || fail "rdma_probe prelogin exited $i"
	held=$(sed -n 's/^HOLDING //p' probe.log)
	[ -n "$held" ] || fail "no HOLDING line"
	[ "$held" -le 64 ] || fail "$held pre-login connections open at once (cap 64)"
	grep -q "rejected NO_RESOURCES" probe.log || fail "no result line"
	grep -q " 0 rejected" probe.log && fail "nothing was rejected: the cap did not act"
	# The target's side: closed and freed.  (Whether the probe hears of
	# it is another matter: on rxe the DREQ of a connection torn down at
	# once is often lost, see docs/rdma.md.)
	i=$(grep -c "no LOGIN within $lt s" "$CASE_TMP/tgt.log")
	log "connections closed by login_timeout: $i"
	[ "$i" -ge "$held" ] || fail "only $i pre-login connections closed by login_timeout, $held were held"
	[ -n "${m3:-}" ] && [ $((${m3%% *} - ${m0%% *})) -lt $((24 * 1024)) ] ||
		fail "target rss did not come back after login_timeout: before $m0, then ${m3:-?}"
	grep -q "refusing a connection from" "$CASE_TMP/tgt.log" || fail "no refusal logged"
	log "refusal lines in the target log: $(grep -c 'refusing a connection' "$CASE_TMP/tgt.log")"
	# The main thread's cost per connection built (rdma_listen.c logs it
	# every 256): what bounds the listener while max_prelogin is full.
	grep "on the main thread" "$CASE_TMP/tgt.log" || true
	[ $((peak - ${m0%% *})) -lt $((96 * 1024)) ] ||
		fail "target rss grew by $((peak - ${m0%% *})) KiB (bound 96 MiB)"
	wait "$bg" || { cat bystander.log; fail "the bystander failed during the pre-login connects"; }
	grep -v '^3;' bystander.log
	fio_x rdma after 4096 4096 --rw=randwrite --bs=64k --size=4M \
		--verify=crc32c || fail "target unusable after the pre-login connects"
	stop_tgt
}

# fio_iops FILE: 4 KiB operations per second, reads (verify) and writes
# together, of the terse line in FILE (KiB moved over the longer runtime;
# fields: 6 read KiB, 9 read ms, 47 write KiB, 50 write ms).
fio_iops() {
	awk -F';' '$1 == "3" { ms = $9 > $50 ? $9 : $50
		print int(($6 + $47) / 4 * 1000 / (ms > 0 ? ms : 1)) }' "$1"
}

# fio_clat_max_ms FILE: the longest completion latency, reads or writes,
# of the terse line in FILE, in ms (fields 15 and 56, in usec).
fio_clat_max_ms() {
	awk -F';' '$1 == "3" { m = $15 > $56 ? $15 : $56; print int(m / 1000) }' "$1"
}

# Four logged-in RDMA clients that each send a full queue (depth 32) of
# 1 MiB READs (two of them) or READs and WRITEs (two) and never take an
# answer: no receive reposted, CQ
# never polled, so the target's response SENDs meet RNR and the chunks of
# those commands stay pinned (over RDMA).  The caps hold
# each to conn_buffer_mb (4 MiB) of its reactor's 32 MiB pool;
# host_buffer_mb is the whole pool because every client in this VM comes
# from one address (the per-host share is tested over TCP, 47).  A
# bystander doing fio verify over RDMA on another volume is never stalled
# (no I/O waits 5 s; starved of chunks it would wait for the hogs' 25 s
# timers) and keeps a quarter of its solo IOPS (its 15 s windows move
# 0.47-1.5x between runs with the host's load alone, so a tighter floor
# measures the host, not the target), the target's RSS stays within its pools, and
# data_timeout, idle_timeout or stall_timeout (all 25 s here) closes the
# four, while other connections keep doing I/O on the same reactors.
case_hog() {
	local bg pid m0 rss peak=0 solo att stall n i i2 s2
	need_rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M "conn_buffer_mb = 4
host_buffer_mb = 32
idle_timeout = 25
data_timeout = 25
stall_timeout = 25"
	add_bystander_volume tgt.conf
	start_tgt tgt.conf
	timeout 60 "$PROBE" "$IP" "$RPORT" vol0 cycles 4 >/dev/null || fail "warm-up cycles failed"
	local byst=(--volume=vol1 --rw=randwrite --bs=4k --size=8M --iodepth=4
		--verify=crc32c --verify_backlog=64 --time_based --runtime=15)
	fio_x rdma solo 1 1 "${byst[@]}" || fail "the bystander failed alone"
	solo=$(fio_iops "$CASE_TMP/fio-solo.out")
	cut -d';' -f5-9,47-50 "$CASE_TMP/fio-solo.out" | grep -v '^$'
	m0=$(mem_of "$TPID")
	log "bystander alone: $solo IOPS; target rss pin lck KiB = $m0"
	timeout 200 "$PROBE" "$IP" "$RPORT" vol0 hog 4 60 >probe.log 2>&1 &
	pid=$!
	wait_until 60 grep -q "^FLOODING" probe.log || { cat probe.log; fail "the hogs did not start"; }
	grep -q "^FLOODING 4" probe.log || { cat probe.log; fail "not all four hogs logged in"; }
	sleep 2
	fio_x rdma attacked 1 1 "${byst[@]}" >byst.log 2>&1 &
	bg=$!
	while kill -0 "$bg" 2>/dev/null; do
		rss=$(mem_of "$TPID"); rss=${rss%% *}
		[ "$rss" -gt "$peak" ] && peak=$rss
		nap 0.5
	done
	wait "$bg" || { cat byst.log; fail "the bystander failed next to the hogs"; }
	cat byst.log
	att=$(fio_iops "$CASE_TMP/fio-attacked.out")
	cut -d';' -f5-9,47-50 "$CASE_TMP/fio-attacked.out" | grep -v '^$'
	stall=$(fio_clat_max_ms "$CASE_TMP/fio-attacked.out")
	log "bystander next to 4 hogs: $att IOPS (alone $solo), longest I/O $stall ms (alone $(fio_clat_max_ms "$CASE_TMP/fio-solo.out") ms); target peak rss $peak KiB (+$((peak - ${m0%% *})) KiB)"
	[ "$stall" -lt 5000 ] || fail "a bystander I/O waited $stall ms next to the hogs"
	[ $((att * 4)) -ge "$solo" ] || fail "bystander fell to $att IOPS from $solo alone"
	# Every chunk lives in the reactors' pools (2 x 32 MiB): whatever the
	# hogs pin, the target's memory must not grow past them.
	[ $((peak - ${m0%% *})) -lt $((64 * 1024)) ] ||
		fail "target rss grew by $((peak - ${m0%% *})) KiB next to the hogs"
	# Until the hogs are gone, four more bystander connections (two per
	# reactor, whatever the round-robin cursor says) keep
	# freeing chunks on both reactors: each free offers the hogs' waiting
	# capsules again, which must not count as activity.
	fio_x rdma through 1 1 "${byst[@]/--runtime=15/--runtime=45}" --numjobs=4 \
		--offset_increment=8M >through.log 2>&1 &
	bg=$!
	wait "$pid"; i=$?
	cat probe.log
	alive
	wait "$bg" || { cat through.log; fail "the bystander failed while the hogs were closed"; }
	# Every hog must be closed by one of the timers (all 25 s).  Which one
	# is up to rxe's timing: a READ+WRITE hog whose WRITE data is still
	# unfetched (its RDMA READs queued behind an RNR-stuck response SEND)
	# meets data_timeout; answers that never go out meet stall_timeout,
	# and a hog whose last answer went out just before may be idle first.
	# A CI run saw that split move, so only the total is asserted here;
	# each rule is proven deterministically in integration/47-resource-caps.
	grep "vol0: closing: .*_timeout" "$CASE_TMP/tgt.log"
	n=$(grep -c "vol0: closing: .*(data_timeout)" "$CASE_TMP/tgt.log")
	i2=$(grep -c "vol0: closing: .*(idle_timeout)" "$CASE_TMP/tgt.log")
	s2=$(grep -c "vol0: closing: .*(stall_timeout)" "$CASE_TMP/tgt.log")
	log "hogs closed by data_timeout: $n, by idle_timeout: $i2, by stall_timeout: $s2"
	[ $((n + i2 + s2)) -ge 4 ] || { tail -n 30 "$CASE_TMP/tgt.log"; fail "want all 4 hogs closed by a timer, got $n + $i2 + $s2"; }
	# Counted in rblkctl stats: each hog was stopped at its cap.
	"$RBLK_BUILD/rblkctl" --socket "$CASE_TMP/target.sock" stats --json >stats.json ||
		fail "rblkctl stats failed"
	stat_of() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" stats.json; }
	log "rblkctl stats: backpressure_waits $(stat_of backpressure_waits), closed_idle_timeout $(stat_of closed_idle_timeout), closed_data_timeout $(stat_of closed_data_timeout), closed_stall_timeout $(stat_of closed_stall_timeout)"
	[ "$(stat_of backpressure_waits)" -ge 4 ] || fail "rblkctl stats counts fewer than 4 back-pressure stops"
	[ $(($(stat_of closed_idle_timeout) + $(stat_of closed_data_timeout) + $(stat_of closed_stall_timeout))) -ge 4 ] ||
		fail "rblkctl stats counts fewer than 4 timer closes"
	[ "$i" -eq 0 ] || fail "rdma_probe hog exited $i"
	log "target after the hogs: rss pin lck KiB = $(mem_of "$TPID")"
	fio_x rdma after 4096 4096 --rw=randwrite --bs=64k --size=4M \
		--verify=crc32c || fail "target unusable after the hogs"
	stop_tgt
}

# fio_lat_max_ms FILE: the longest total latency (submission to
# completion), reads or writes, of the terse line in FILE, in ms (fields 39
# and 80, in usec).
fio_lat_max_ms() {
	awk -F';' '$1 == "3" { m = $39 > $80 ? $39 : $80; print int(m / 1000) }' "$1"
}

# Fair sharing over RDMA, the default pool and caps (64 MiB per reactor,
# 8 MiB per connection, 32 MiB per host): 24 hogs from two addresses of
# their own (10.77.0.2 and .3 on the rxe netdev) each post a full queue of
# 1 MiB WRITEs and never take an answer, so the RDMA READs of their data
# queue behind an answer that meets RNR and never complete: between them
# they hold both pools (four per address and reactor would do; 12 per
# address make sure every reactor gets four whatever the round robin
# does: with 8, one run left room on one reactor).  A bystander from 10.77.0.1 doing fio verify over
# RDMA on another volume (ctrl_loss_tmo=0: a lost connection is an error)
# must see no error, no I/O of 2 s or more, and never be closed; the hogs
# that stand in its way are closed for buffer pressure.  Starved, it
# waited for the hogs' data_timeout (30 s).  RBLK_HOG_FAIR_TGT runs
# another target binary (the numbers before).
case_hog_fair() {
	local tgt=${RBLK_HOG_FAIR_TGT:-$TGT} a pids=() lat bad st
	need_rdma
	for a in 2 3; do
		ip addr add "10.77.0.$a/24" dev dummy0 2>/dev/null
		ip addr show dev dummy0 | grep -q "inet 10\.77\.0\.$a/" ||
			fail "cannot add 10.77.0.$a to dummy0"
	done
	rdma_conf tgt.conf 64M
	add_bystander_volume tgt.conf
	"$tgt" --config tgt.conf >>"$CASE_TMP/tgt.log" 2>&1 &
	TPID=$!
	wait_until 20 grep -q "listening on rdma" "$CASE_TMP/tgt.log" ||
		{ cat "$CASE_TMP/tgt.log"; fail "target did not listen on rdma"; }
	grep 'reactor thread' "$CASE_TMP/tgt.log"
	for a in 2 3; do
		RBLK_PROBE_SRC=10.77.0.$a timeout 200 "$PROBE" "$IP" "$RPORT" vol0 \
			hog-writes 12 60 >"hog-$a.log" 2>&1 &
		pids+=($!)
	done
	for a in 2 3; do
		wait_until 120 grep -q "^FLOODING" "hog-$a.log" || { cat "hog-$a.log"; fail "the hogs from 10.77.0.$a did not start"; }
		grep -q "^FLOODING 12" "hog-$a.log" || { cat "hog-$a.log"; fail "not all 12 hogs from 10.77.0.$a logged in"; }
	done
	# Their first answers land, the next meet RNR: from then on the
	# RDMA READs of their data wait.  Each stops at its cap.
	nap 3
	alive
	"$RBLK_BUILD/rblkctl" --socket "$CASE_TMP/target.sock" stats --json >stats.json ||
		fail "rblkctl stats failed"
	st=$(sed -n 's/.*"backpressure_waits": *\([0-9]*\).*/\1/p' stats.json)
	log "back-pressure stops before the bystander: $st"
	[ "${st:-0}" -ge 24 ] || { cat hog-*.log; tail -n 20 "$CASE_TMP/tgt.log"; fail "the hogs did not reach their caps"; }
	fio_x rdma fair 1 1 --volume=vol1 --ctrl_loss_tmo=0 --rw=randwrite --bs=4k \
		--size=8M --iodepth=4 --verify=crc32c --verify_backlog=64 \
		--time_based --runtime=20 || { tail -n 20 "$CASE_TMP/tgt.log"; fail "the bystander failed next to the hogs"; }
	lat=$(fio_lat_max_ms "$CASE_TMP/fio-fair.out")
	cut -d';' -f5-9,47-50 "$CASE_TMP/fio-fair.out" | grep -v '^$'
	log "bystander next to 24 WRITE hogs from two addresses: longest I/O $lat ms"
	grep -E "closing: .*(buffer pressure|_timeout)" "$CASE_TMP/tgt.log" | head -n 3
	log "hogs closed for buffer pressure: $(grep -c 'closing: .*buffer pressure' "$CASE_TMP/tgt.log")"
	bad=$(grep 'closing' "$CASE_TMP/tgt.log" | grep -v 'rdma:10\.77\.0\.[23]:' |
		grep -v 'initiator disconnected')
	[ -z "$bad" ] || { echo "$bad"; fail "a connection from 10.77.0.1 was closed by the target"; }
	[ "$lat" -lt 2000 ] || fail "a bystander I/O took $lat ms next to the hogs"
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	grep -h "closed by the target" hog-*.log | head -n 4
	alive
	stop_tgt
}

# reactor_switches: voluntary context switches of the target's reactor
# threads so far (each is one sleep and one wakeup).
reactor_switches() {
	local t n=0
	for t in /proc/"$TPID"/task/*; do
		case $(cat "$t/comm" 2>/dev/null) in reactor*) ;; *) continue ;; esac
		n=$((n + $(awk '/^voluntary_ctxt_switches/ { print $2 }' "$t/status")))
	done
	echo "$n"
}

# Wakeups per I/O at QD1 (docs/rdma.md, "Send completions"): a command's
# arrival wakes the reactor, and the answer's send completion must not:
# it is taken on the next wakeup.  In this one guest (fio and the target
# share two vCPUs, so a send completion often lands before the reactor
# sleeps) waking on every send completion measured 1.38 reads / 1.19
# writes per I/O, taking them on the next wakeup 0.92 / 0.94; above 1.1
# is the old behaviour.  fio verifies every block, at
# QD1 on one tag, so each command reuses the tag of an answer whose send
# completion may not have been taken yet.
case_send_events() {
	local rw s0 s1 n per
	need_rdma
	write_conf tgt.conf uring "$CASE_TMP/vol.img" 64M
	start_tgt tgt.conf
	fio_x rdma fill 0 1 --rw=write --bs=1m --size=16M || fail "fill failed"
	for rw in randread randwrite; do
		s0=$(reactor_switches)
		fio_x rdma "qd1-$rw" 0 0 --rw="$rw" --bs=4k --size=16M --io_size=8M \
			--iodepth=1 || fail "fio QD1 $rw failed"
		s1=$(reactor_switches)
		n=2048
		per=$(awk -v a="$s0" -v b="$s1" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')
		log "QD1 4k $rw: $((s1 - s0)) reactor wakeups for $n I/Os: $per per I/O"
		awk -v p="$per" 'BEGIN { exit !(p <= 1.1) }' ||
			fail "the reactor woke $per times per QD1 $rw (want <= 1.1)"
	done
	fio_x rdma qd1-verify 1 1 --rw=randwrite --bs=4k --size=4M --iodepth=1 \
		--verify=crc32c || fail "fio QD1 verify failed"
	alive
	stop_tgt
}

# A send queue full of data: 96 commands of 1 MiB in flight, each eight
# descriptors of 128 KiB, need 768 RDMA READs (WRITE data) or 864 WRs
# (READ data and the answers) against a connection's budget of 512
# (SQ_DATA_MAX), so requests wait for room, which only send completions
# give back: each wait must make them wake the reactor (rdma_poll.c).
# Memory caps are raised so that room in the send queue, not memory,
# runs out; fio verifies every block.
case_sq_full() {
	need_rdma
	rdma_conf tgt.conf 256M "reactors = 1
reactor_buffer_mb = 128
conn_buffer_mb = 128
host_buffer_mb = 128"
	start_tgt tgt.conf
	fio_x rdma sq-full 1 1 --rw=randwrite --bs=1m --size=128M --iodepth=96 \
		--verify=crc32c || fail "fio verify with a full send queue failed"
	alive
	stop_tgt
}

run_case -t 400 fio-verify-uring case_fio_verify uring
run_case -t 400 fio-verify-aio case_fio_verify aio
run_case -t 120 busy-poll case_busy_poll
run_case -t 300 send-events case_send_events
run_case -t 300 sq-full case_sq_full
run_case -t 120 adaptive-poll case_adaptive_poll
run_case -t 200 restart-keeps-data case_restart
run_case -t 200 tcp-and-rdma case_tcp_and_rdma
run_case -t 120 target-killed case_target_killed
run_case -t 120 discover-rdma case_discover
run_case -t 120 acl-rdma case_acl_rdma
run_case -t 300 hostile case_hostile
run_case -t 500 cycles-no-leak case_cycles
run_case -t 700 prelogin-rdma case_prelogin
run_case -t 400 hog-rdma case_hog
run_case -t 400 hog-rdma-fair case_hog_fair
cases_done
