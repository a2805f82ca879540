#!/bin/bash
# SPDX-License-Identifier: MIT
# Hostile clients against a real rblk-target (uring backend, real file),
# while well-behaved clients keep doing verified I/O on the same volume:
# every case of tests/tools/rblk-hostile must be answered as
# docs/protocol.md demands (error status or closed connection), the
# target must still serve LOGINs after each, the good clients' data must
# verify, and the target must stop cleanly afterwards.  A bystander does
# fio verify on a volume of its own (byst) throughout; each case also
# fails if it has seen an error by then.  Then two cases that
# need more setup: a volume's secret cleared while a client is being
# challenged (the answer must still be AUTH_FAILED), and a target with
# more volumes than one DISCOVER answer holds (the answer says it is cut).
. "$(dirname "$0")/lib.sh"
require_target
HOSTILE=$RBLK_BUILD/tests/tools/rblk-hostile
GOOD=$RBLK_BUILD/tests/tools/rblk-goodclient
[ -x "$HOSTILE" ] || skip "$HOSTILE not built"
[ -x "$GOOD" ] || skip "$GOOD not built"

PORT=$(free_port) || fail "no free port"
write_conf "$T/t.conf" uring "$T/vol0.img" 64M
# A short login timeout so that the idle-no-login case is quick.
sed -i 's/^\[target\]$/[target]\nlogin_timeout = 2/' "$T/t.conf"
printf '\n[volume byst]\npath = %s/byst.img\nsize = 16M\nallow_any_host = yes\n' "$T" >>"$T/t.conf"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/sec.key"
chmod 600 "$T/sec.key"
printf '\n[volume sec]\npath = %s/sec.img\nsize = 1M\nallow_any_host = yes\nsecret_file = %s/sec.key\n' "$T" "$T" >>"$T/t.conf"
start_target "$T/t.conf"
bystander_start byst

# Good clients: rblk-goodclient on [0, 16M) (write + read-back passes),
# and fio crc32c verify on [16M, 32M) when the engine is built.  Hostile
# writes only ever aim at >= 32M (and are all refused or never complete).
"$GOOD" --seconds 600 --region 0:16777216 --depth 16 127.0.0.1 "$PORT" vol0 \
	>"$T/good.out" 2>&1 &
GOOD_PID=$!
_cleanup_pids+=("$GOOD_PID")
FIO_PID=
if [ -f "$FIO_ENGINE" ] && command -v "$FIO_BIN" >/dev/null 2>&1; then
	timeout 300 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 \
		--port="$PORT" --volume=vol0 --verify_state_save=0 --name=good \
		--rw=randwrite --bs=4k-64k --bsrange=4k-64k --iodepth=8 \
		--offset=16M --size=16M --loops=4 --verify=crc32c \
		--do_verify=1 >"$T/fio.out" 2>&1 &
	FIO_PID=$!
	_cleanup_pids+=("$FIO_PID")
else
	log "fio engine not built: rblk-goodclient is the only good client"
fi

# verdict RC NAME OUT: the RBLK-CASE line of a case that exited RC with
# its output in OUT; a pass needs the bystander clean so far too (its
# rounds are 1 s: an error shows at this case or the next).
nfail=0
verdict() {
	local rc=$1
	[ "$rc" -eq 0 ] && { ( bystander_check keep ) >>"$3" 2>&1 || rc=1; }
	if [ "$rc" -eq 0 ]; then
		echo "RBLK-CASE: PASS $2"
	else
		sed 's/^/    /' "$3"
		echo "RBLK-CASE: FAIL $2 $(tail -n 1 "$3")"
		nfail=$((nfail + 1))
	fi
}
for c in $("$HOSTILE" 127.0.0.1 "$PORT" vol0 list); do
	timeout 60 "$HOSTILE" 127.0.0.1 "$PORT" vol0 "$c" --idle 6 >"$T/h-$c.out" 2>&1
	verdict $? "hostile-$c" "$T/h-$c.out"
	kill -0 "$TARGET_PID" 2>/dev/null || { tail -20 "$T/target.log"; fail "target died during case $c"; }
done
# A secret cleared (rblkctl) between the challenge and the answer.
if [ -x "$RBLKCTL_BIN" ]; then
	timeout 60 "$HOSTILE" 127.0.0.1 "$PORT" vol0 secret-cleared --secret-vol sec \
		--exec "$RBLKCTL_BIN --socket $T/t.conf.sock volume secret sec --clear >/dev/null" \
		>"$T/h-secret-cleared.out" 2>&1
	verdict $? hostile-secret-cleared "$T/h-secret-cleared.out"
else
	echo "RBLK-CASE: SKIP hostile-secret-cleared $RBLKCTL_BIN not built"
fi
# Garbage of several sizes and seeds, each on its own connection.
for n in 1 7 8 63 64 65 1000 100000; do
	timeout 30 "$HOSTILE" 127.0.0.1 "$PORT" vol0 garbage --bytes "$n" --seed "$n" \
		>"$T/g-$n.out" 2>&1
	verdict $? "garbage-$n-bytes" "$T/g-$n.out"
done

# The good client ends its current pass on SIGTERM and reports: every
# pass it ran during the hostile cases must have verified.
kill -TERM "$GOOD_PID" 2>/dev/null
if wait "$GOOD_PID"; then
	echo "RBLK-CASE: PASS good-client-verify-during-hostile $(tail -n 1 "$T/good.out")"
else
	cat "$T/good.out"
	echo "RBLK-CASE: FAIL good-client-verify-during-hostile"
	nfail=$((nfail + 1))
fi
if [ -n "$FIO_PID" ]; then
	if wait "$FIO_PID"; then
		echo "RBLK-CASE: PASS fio-verify-during-hostile"
	else
		tail -20 "$T/fio.out"
		echo "RBLK-CASE: FAIL fio-verify-during-hostile"
		nfail=$((nfail + 1))
	fi
fi
( bystander_check ) >"$T/byst.out" 2>&1
rc=$?
grep '^note:' "$T/byst.out"
verdict "$rc" bystander-verify-during-hostile "$T/byst.out"

# (A dropped good connection would have failed the good client: it
# treats every lost or failed I/O as a failure.)

stop_target TERM
if [ "$TARGET_RC" -eq 0 ]; then
	echo "RBLK-CASE: PASS clean-stop-after-hostile"
else
	tail -20 "$T/target.log"
	echo "RBLK-CASE: FAIL clean-stop-after-hostile exit $TARGET_RC"
	nfail=$((nfail + 1))
fi

# More volumes open to a host than one DISCOVER answer holds (256): the
# answer lists 256 and says the list is cut; rblkctl discover says so too.
PORT=$(free_port) || fail "no free port"
write_conf "$T/many.conf" null /dev/null 1M
sed -i '/^path = \/dev\/null$/d' "$T/many.conf"
for i in $(seq 1 299); do
	printf '\n[volume v%03d]\nbackend = null\nsize = 1M\nallow_any_host = yes\n' "$i"
done >>"$T/many.conf"
: >"$T/target.log"
start_target "$T/many.conf"
timeout 30 "$HOSTILE" 127.0.0.1 "$PORT" vol0 discover-cut --volumes 300 >"$T/h-cut.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ -x "$RBLKCTL_BIN" ]; then
	"$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --hostname hostile \
		>"$T/cut.list" 2>"$T/cut.err" || rc=1
	n=$(tail -n +2 "$T/cut.list" | wc -l)
	echo "rblkctl discover: $n volume(s); $(cat "$T/cut.err")" >>"$T/h-cut.out"
	[ "$n" -eq 256 ] && grep -q "lists only the first 256" "$T/cut.err" || rc=1
fi
verdict "$rc" hostile-discover-cut "$T/h-cut.out"
stop_target TERM
[ "$nfail" -eq 0 ]
