#!/bin/bash
# SPDX-License-Identifier: MIT
# The durability chain seen from outside: FLUSH commands and FUA writes a
# client sends over TCP raise the target's durability counters
# (rblkctl stats --json: flush, fua, fdatasync, dsync_writes) by exactly
# what was sent, per session, per volume and in the total; plain writes
# raise none of them.  For uring and aio every FLUSH costs one fdatasync and
# every FUA write one RWF_DSYNC write; the null backend (no store) counts
# the commands but syncs nothing, which shows the sync counters measure
# what the backend did, not what the client asked.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_python3
LOGIN=$RBLK_BUILD/tests/tools/rblk-login
[ -x "$LOGIN" ] || skip "$LOGIN not built (make unit-tests)"
HAVE_FIO=1
(require_fio_engine) >/dev/null || HAVE_FIO=0

# dur CONF WHAT: "flush fua fdatasync dsync_writes" of WHAT, a Python path
# into the stats answer (e.g. 'd["total"]').
dur() {
	ctl "$1" stats --json |
		jget "' '.join(str($2['durability'][k]) for k in ('flush', 'fua', 'fdatasync', 'dsync_writes'))"
}
# expect_delta BEFORE AFTER "dF dU dS dD" WHY
expect_delta() {
	local -a b=($1) a=($2) want=($3) got
	got=("$((a[0] - b[0]))" "$((a[1] - b[1]))" "$((a[2] - b[2]))" "$((a[3] - b[3]))")
	[ "${got[*]}" = "${want[*]}" ] ||
		fail "$4: flush/fua/fdatasync/dsync_writes rose by ${got[*]}, want ${want[*]}"
}

fio_write() {	# ARGS...: 16 sequential 4 KiB writes through the engine
	run_fio --volume=vol0 --name=d --rw=write --bs=4k --size=64k \
		--output-format=terse "$@" >"$T/fio.out" 2>&1 || { cat "$T/fio.out"; fail "fio $*"; }
}

for backend in uring aio null; do
	log "backend $backend"
	PORT=$(free_port) || fail "no free port"
	CONF=$T/$backend.conf
	write_conf "$CONF" "$backend" "$T/$backend.img" 16M
	[ "$backend" = null ] && sed -i '/^path = /d' "$CONF"
	: >"$T/target.log"
	start_target "$CONF"
	# per FLUSH / per FUA write: syncs the backend must issue
	sync1=1 rb=
	[ "$backend" = null ] && sync1=0 rb=--no-readback
	V='d["volumes"][0]["stats"]'

	z=$(dur "$CONF" "$V")
	[ "$z" = "0 0 0 0" ] || fail "fresh volume has durability counts: $z"

	# exact amounts through the client library, while the session is held
	"$LOGIN" --io 3 $rb --fua --flush 2 --hold 60 127.0.0.1 "$PORT" vol0 >"$T/login.out" &
	hpid=$!
	# the line is printed after the last FLUSH's reply, session still held
	for _ in $(seq 300); do
		grep -q "flush=2" "$T/login.out" && break
		sleep 0.05
	done
	grep -q "flush=2" "$T/login.out" || fail "rblk-login: $(cat "$T/login.out")"
	s=$(dur "$CONF" 'd["volumes"][0]["sessions"][0]["stats"]')
	expect_delta "0 0 0 0" "$s" "2 3 $((2 * sync1)) $((3 * sync1))" "session: 3 FUA writes + 2 FLUSH"
	v=$(dur "$CONF" "$V")
	[ "$v" = "$s" ] || fail "volume ($v) differs from its only session ($s)"
	ctl "$CONF" stats vol0 >"$T/human"
	grep -q "^  durability: flush 2, fua 3, fdatasync $((2 * sync1)), dsync_writes $((3 * sync1))$" "$T/human" ||
		fail "plain stats: $(cat "$T/human")"
	grep -q "^    durability: flush 2, fua 3" "$T/human" || fail "plain stats lack the session line"
	kill -USR1 "$hpid"
	wait "$hpid" || fail "held session: $(cat "$T/login.out")"

	if [ "$HAVE_FIO" = 1 ]; then
		b=$(dur "$CONF" "$V")
		fio_write
		a=$(dur "$CONF" "$V")
		expect_delta "$b" "$a" "0 0 0 0" "fio plain writes"

		b=$a
		fio_write --fua=1
		a=$(dur "$CONF" "$V")
		expect_delta "$b" "$a" "0 16 0 $((16 * sync1))" "fio 16 writes with fua=1"

		# fio syncs after every write but may skip the one after the
		# last, so the FLUSH count is 15 or 16; each costs one sync.
		for opt in --fsync=1 --fdatasync=1; do
			b=$a
			fio_write "$opt"
			a=$(dur "$CONF" "$V")
			read -r bf _ bs _ <<<"$b"
			read -r af _ as _ <<<"$a"
			nf=$((af - bf))
			[ "$nf" -ge 15 ] && [ "$nf" -le 16 ] || fail "fio $opt: FLUSH count rose by $nf, want 15..16"
			expect_delta "$b" "$a" "$nf 0 $((nf * sync1)) 0" "fio 16 writes with $opt"
		done
	fi

	# the total is the sum over the volumes (one here)
	t=$(dur "$CONF" 'd["total"]')
	[ "$t" = "$(dur "$CONF" "$V")" ] || fail "total $t differs from the only volume"
	stop_target TERM
	[ "$TARGET_RC" = 0 ] || fail "target exit status $TARGET_RC"
	target_log_clean
done
[ "$HAVE_FIO" = 1 ] || echo "fio engine not built: fio cases skipped, rblk-login cases ran"
echo PASS
