#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-perftest.sh - raw Soft-RoCE bandwidth in the test VM (perftest over
# rxe0 on a dummy interface at MTU 9000): the ceiling any RDMA block
# transport can reach in this VM.  Run it on the host with
#   tests/vm/vm-run -t 300 -- tests/vm/guest/bench-perftest.sh [-D SECS] [-s SIZES]
#
#   -D SECS    duration of each run (default 5)
#   -s SIZES   message sizes in bytes, comma separated (default 65536,131072)
#   -t TESTS   perftest programs, comma separated (default ib_write_bw,ib_read_bw)
#
# Prints one parseable line per run (MiB = 2^20 bytes, perftest's unit):
#   RBLK-BENCH: perftest test=ib_write_bw size=65536 mtu=9000 secs=5 bw_MiBps=60.07 msgrate_Mpps=0.000961
# and exits non-zero if any run failed twice (its line then says
# bw_MiBps=FAILED, followed by the perftest output).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=5 sizes=65536,131072 tests=ib_write_bw,ib_read_bw mtu=9000
while getopts "D:s:t:h" o; do
	case $o in
	D) secs=$OPTARG ;;
	s) sizes=$OPTARG ;;
	t) tests=$OPTARG ;;
	*) sed -n '3,16p' "$0" >&2; exit 2 ;;
	esac
done
for t in ${tests//,/ }; do
	command -v "$t" >/dev/null || { echo "bench-perftest: $t not installed (apt-get install perftest)"; exit 77; }
done
ip=$("$here/rxe-up" -m "$mtu") || { echo "bench-perftest: rxe-up failed"; exit 1; }
work=$(mktemp -d /tmp/perftest.XXXXXX)
port=18515 failed=0

# One server/client pair; prints "BW MSGRATE" from the client's result row
# (#bytes #iterations BW-peak BW-average MsgRate).
run_pair() {	# test size port
	local t=$1 size=$2 p=$3 srv
	timeout $((secs + 60)) "$t" -d rxe0 -R -F -D "$secs" -s "$size" -p "$p" >"$work/$t-$size.server" 2>&1 &
	srv=$!
	sleep 1
	# The server may not listen yet on an emulated CPU: retry the connect.
	for _ in 1 2 3; do
		timeout $((secs + 45)) "$t" -d rxe0 -R -F -D "$secs" -s "$size" -p "$p" "$ip" \
			>"$work/$t-$size.client" 2>&1 && break
		kill -0 "$srv" 2>/dev/null || break
		sleep 1
	done
	wait "$srv" || return 1
	# A zero average (seen on a heavily loaded host) is no measurement.
	awk -v s="$size" '$1 == s && NF >= 5 && $4 ~ /^[0-9.]+$/ && $4 > 0 { print $4, $5; found = 1; exit }
		END { exit !found }' "$work/$t-$size.client"
}

echo "bench-perftest: rxe0 at $ip, dummy MTU $mtu, $secs s per run, $(nproc) vCPUs"
for t in ${tests//,/ }; do
	for size in ${sizes//,/ }; do
		# One retry: a run can come back empty when the host is busy.
		if res=$(run_pair "$t" "$size" "$port") ||
		   { port=$((port + 1)); res=$(run_pair "$t" "$size" "$port"); }; then
			set -- $res
			echo "RBLK-BENCH: perftest test=$t size=$size mtu=$mtu secs=$secs bw_MiBps=$1 msgrate_Mpps=$2"
		else
			failed=1
			echo "RBLK-BENCH: perftest test=$t size=$size mtu=$mtu secs=$secs bw_MiBps=FAILED msgrate_Mpps=FAILED"
			sed 's/^/    client| /' "$work/$t-$size.client" 2>/dev/null | tail -n 15
			sed 's/^/    server| /' "$work/$t-$size.server" 2>/dev/null | tail -n 15
		fi
		port=$((port + 1))
	done
done
rm -rf "$work"
exit "$failed"
