#!/bin/bash
# SPDX-License-Identifier: MIT
# One libFuzzer target as a test (tests/run fuzz, make fuzz; docs/fuzzing.md).
#
#   tests/fuzz/run-fuzz.sh NAME              replay tests/fuzz/regress/NAME/*, then
#                                            fuzz FUZZ_SECONDS (60) s from the seeds
#
# Exit 0 pass, 1 crash (the artifact and how to reproduce it are printed),
# 77 skip (fuzzers not built: the reason is the last line).
set -u
ROOT=${RBLK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${RBLK_BUILD:-$ROOT/${BUILD:-build}}
cd "$ROOT" || exit 1

name=${1:?usage: run-fuzz.sh NAME}
bin=$B/fuzz/fuzz_$name
secs=${FUZZ_SECONDS:-60}

if [ ! -x "$bin" ]; then
	why=$(cat "$B/fuzz/toolchain.unavailable" 2>/dev/null ||
		echo "$bin not built (make fuzzers)")
	echo "fuzzers not built: $why"
	exit 77
fi

seeds=tests/fuzz/corpus/$name
regress=tests/fuzz/regress/$name
art=$B/fuzz/artifacts
mkdir -p "$art"
# libFuzzer's own default exit code for a crash is 77, our "skip".
opts=(-error_exitcode=1 -timeout_exitcode=1 -timeout=20 -rss_limit_mb=2048)

crashed() {	# log
	local a
	a=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$1" | tail -n 1)
	echo "FAIL: fuzz_$name crashed${a:+ on $a}"
	[ -n "$a" ] && echo "  reproduce: $bin $a   (RBLK_FUZZ_LOG=debug for a trace)"
	[ -n "$a" ] && echo "  keep it:   cp $a $regress/<what-it-shows>"
}

inputs=()
for f in "$seeds"/* "$regress"/*; do
	[ -f "$f" ] && inputs+=("$f")
done

# 1. Every kept crash input must pass (they are also part of the corpus).
if [ -d "$regress" ] && ls "$regress"/* >/dev/null 2>&1; then
	log=$B/fuzz/regress-$name.log
	if ! "$bin" "${opts[@]}" "$regress"/* >"$log" 2>&1; then
		tail -n 40 "$log"
		echo "FAIL: a regression input of fuzz_$name crashes again"
		exit 1
	fi
	echo "fuzz_$name: $(ls "$regress" | wc -l) regression inputs pass"
fi

# 2. Fuzz.  New inputs go to the first corpus dir (under the build tree,
# kept between runs); the checked-in seeds are only read.
work=$B/fuzz/work/$name
mkdir -p "$work"
log=$B/fuzz/fuzz-$name.log
dirs=("$work" "$seeds")
[ -d "$regress" ] && dirs+=("$regress")
echo "fuzz_$name: ${secs}s from $seeds ($(ls "$seeds" | wc -l) seeds) and $work"
"$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 \
	-artifact_prefix="$art/$name-" "${dirs[@]}" >"$log" 2>&1
rc=$?
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log"
if [ $rc != 0 ]; then
	tail -n 60 "$log"
	crashed "$log"
	exit 1
fi
echo "fuzz_$name: no crash in ${secs}s"
