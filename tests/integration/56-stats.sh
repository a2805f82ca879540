#!/bin/bash
# SPDX-License-Identifier: MIT
# rblkctl stats: per-volume counters add up across reactors and sessions,
# per-session counters while attached, errors per op type, the log2
# latency histogram, --watch rates, --json, and refusals of bad arguments.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
LOGIN=$RBLK_BUILD/tests/tools/rblk-login
[ -x "$LOGIN" ] || skip "$LOGIN not built (make unit-tests)"
require_python3

PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" uring "$T/vol0.img" 16M
start_target "$CONF"
st() { ctl "$CONF" stats "$@"; }

log "I/O from 4 sessions (spread over the 2 reactors)"
for i in 1 2 3 4; do
	"$LOGIN" --io 5 --offset $((i * 8192)) 127.0.0.1 "$PORT" vol0 >/dev/null || fail "session $i I/O"
done
j=$(st vol0 --json) || fail "stats --json"
v='d["volumes"][0]["stats"]'
[ "$(jget "$v[\"write\"][\"ops\"]" <<<"$j")" = 20 ] || fail "write ops: $j"
[ "$(jget "$v[\"read\"][\"ops\"]" <<<"$j")" = 20 ] || fail "read ops"
[ "$(jget "$v[\"write\"][\"bytes\"]" <<<"$j")" = $((20 * 4096)) ] || fail "write bytes"
[ "$(jget "$v[\"read\"][\"errors\"]" <<<"$j")" = 0 ] || fail "read errors"
[ "$(jget "sum($v[\"read\"][\"lat_us_log2\"])" <<<"$j")" = 20 ] || fail "histogram does not add up to the op count"
[ "$(jget "$v[\"read\"][\"lat_ns_sum\"] > 0" <<<"$j")" = True ] || fail "no latency recorded"

log "errors are counted per op type"
"$LOGIN" --io 1 --offset $((32 << 20)) 127.0.0.1 "$PORT" vol0 >/dev/null && fail "out-of-range I/O succeeded"
j=$(st vol0 --json)
[ "$(jget "$v[\"write\"][\"errors\"]" <<<"$j")" = 1 ] || fail "write error not counted: $j"
[ "$(jget "$v[\"write\"][\"ops\"]" <<<"$j")" = 21 ] || fail "failed write not counted as an op"

log "per-session counters while attached"
"$LOGIN" --io 3 --hold 60 127.0.0.1 "$PORT" vol0 >/dev/null &
hpid=$!
for _ in $(seq 100); do
	n=$(st vol0 --json | jget 'len(d["volumes"][0]["sessions"])')
	[ "$n" = 1 ] && break
	sleep 0.05
done
j=$(st vol0 --json)
[ "$(jget 'd["volumes"][0]["sessions"][0]["stats"]["write"]["ops"]' <<<"$j")" = 3 ] || fail "session write ops: $j"
st vol0 | tee "$T/human" | grep -q "session .* host" || fail "human stats lack the session"
grep -Eq "^  write +24 " "$T/human" || fail "human stats: $(cat "$T/human")"

log "--watch prints rates"
out=$(st --watch 0.5 --count 2) || fail "stats --watch"
echo "$out"
[ "$(grep -c '^--- ' <<<"$out")" = 2 ] || fail "--watch --count 2 did not print 2 samples"
grep -q "IOPS" <<<"$out" || fail "--watch lacks the rate table"
kill -USR1 "$hpid"
wait "$hpid" || fail "held session failed"

log "bad arguments"
if st nope 2>"$T/err"; then fail "stats of an unknown volume"; fi
grep -q "no volume 'nope'" "$T/err" || fail "unclear: $(cat "$T/err")"
for bad in "--watch 0" "--watch abc --count 1" "--count 0 --watch" "--frob" "a/b" "vol0 vol0"; do
	# shellcheck disable=SC2086
	if st $bad >/dev/null 2>&1; then fail "stats $bad accepted"; fi
done
stop_target TERM
target_log_clean
echo PASS
