# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Host side of a VM suite (sourced by tests/vm/suite-<name>.sh, not run).
#
#   . "$(dirname "$0")/host-lib.sh"
#   vm_require_build rblk-target          # optional: skip if not built
#   vm_suite NAME [vm-run options...]     # never returns
#
# vm_suite exits 77 with a one-line reason when QEMU is missing or the VM
# cannot be prepared (no apt network for the kernel package), otherwise
# boots ONE VM that runs tests/vm/guest/suite-NAME.guest.sh and exits with
# its status; the guest's RBLK-CASE lines pass straight through to tests/run.
# Guest logs land in $RBLK_BUILD/vm/NAME/ (shared read-write, kept after).
# Env: RBLK_VM_KERNEL (6.12 or new: the guest kernel; a suite skips when the
# new one could not be prepared), RBLK_VM_TIMEOUT (whole run; default 900 s or the suite's -t), RBLK_VM_MEM, RBLK_VM_CPUS,
# RBLK_VM_CASES (glob: run only matching cases), RBLK_VM_CACHE.
set -u

RBLK_ROOT=${RBLK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
RBLK_BUILD=${RBLK_BUILD:-$RBLK_ROOT/build}
export RBLK_ROOT RBLK_BUILD
VM_DIR=$RBLK_ROOT/tests/vm

vm_skip() { echo "SKIP: $*"; exit 77; }

vm_require_build() {	# FILE...: relative to $RBLK_BUILD
	local f
	for f; do [ -e "$RBLK_BUILD/$f" ] || vm_skip "$RBLK_BUILD/$f not built (run make)"; done
}

# The names of a guest suite's cases, in order: the literal top-level
# "run_case [-t SECS] [-W] NAME ..." lines (suites keep them that way so
# that the host can name the cases a dead guest never ran).
vm_case_names() {	# guest-script
	awk '$1 == "run_case" {
		for (i = 2; i <= NF; i++) {
			if ($i == "-t") { i++; continue }
			if ($i ~ /^-/) continue
			print $i; break
		}
	}' "$1"
}

# The first lines of a kernel crash in a console log (empty if none).
# vm_kernel_release PREPARE-OUTPUT: the release of the guest kernel
# RBLK_VM_KERNEL picks (6.12 or new), from `prepare -q -p`'s lines.
vm_kernel_release() {
	local kvar=VM_KVER
	[ "${RBLK_VM_KERNEL:-6.12}" = new ] && kvar=VM_KVER_NEW
	sed -n "s/^$kvar=//p" <<<"$1"
}

vm_crash_lines() {	# console-log [lines]
	awk -v n="${2:-6}" '
		!on && /(Oops|BUG:|Kernel panic|general protection fault|double fault|kernel BUG|Unable to handle)/ { on = 1 }
		on && n-- > 0 { print }' "$1"
}

# One line naming a console log's kernel crash: its first Oops line, else
# its first crash line; without the timestamp.  Empty if none.
vm_crash_reason() {	# console-log
	local l
	l=$(grep -m1 'Oops:' "$1")
	[ -n "$l" ] || l=$(vm_crash_lines "$1" 1)
	echo "$l" | sed 's/^\[ *[0-9.]*\] //'
}

# Marks a node of a pair or cluster suite dead for the client's cases: a
# file whose first line is "cut" (a power cut the client asked for) or
# "died" followed by the first lines of the crash on the node's console
# (it died unasked: tests/vm/guest/lib.sh's run_case then ends the boot so
# that the suite runs that case again in new guests).  Written whole.
_vm_mark_dead() {	# dead-file cut|died [console]
	local crash
	[ -e "$1" ] && return 0
	if [ "$2" = died ]; then
		crash=$(vm_crash_lines "$3" 8)
		printf 'died\n%s\n' "${crash:-(no kernel crash lines on the console ${3##*/})}"
	else
		echo "$2"
	fi >"$1.tmp" && mv "$1.tmp" "$1"
}

# One attempt of a single-guest suite: boots the guest, its console to $2.
_vm_run_single() {	# name console vm-run-options...
	local name=$1 console=$2
	shift 2
	# A suite's own -t wins over the default; RBLK_VM_TIMEOUT wins over both.
	"$VM_DIR/vm-run" -t 900 -o "$VM_SCRATCH" "$@" ${RBLK_VM_TIMEOUT:+-t "$RBLK_VM_TIMEOUT"} \
		-- bash "$VM_DIR/guest/suite-$name.guest.sh" 2>&1 | tee "$console"
	return "${PIPESTATUS[0]}"
}

# Runs a suite with RUNNER (one attempt: boots, tees the console to the
# file it is given, returns vm-run's status) and turns a dead guest into
# results, then exits.
_vm_suite_main() {	# runner name runner-args...
	local runner=$1 name=$2 out rc
	shift 2
	local guest=$VM_DIR/guest/suite-$name.guest.sh
	[ -f "$guest" ] || { echo "vm_suite: $guest missing"; exit 1; }
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
		vm_skip "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
	out=$("$VM_DIR/prepare" -q -p 2>&1)
	rc=$?
	case $rc in
	0)  ;;
	77) vm_skip "$(echo "$out" | tail -n 1)" ;;
	*)  echo "$out"; echo "vm_suite: tests/vm/prepare failed (exit $rc)"; exit 1 ;;
	esac
	# Which kernel the suite ran on belongs in its results (tests/run
	# prints this line's release after the suite's cases).
	local kver
	kver=$(vm_kernel_release "$out")
	[ -z "$kver" ] || echo "vm_suite: $name: guest kernel $kver (RBLK_VM_KERNEL=${RBLK_VM_KERNEL:-6.12})"
	VM_SCRATCH=$RBLK_BUILD/vm/$name
	local attempt console crash started consoles=() rerun= boot_fails=0
	# A guest that dies before its first case started crashed while
	# booting (an infrastructure fault, not a test result): boot it again,
	# at most twice, and say so.  A guest that dies in the middle of the
	# suite gets one more boot for the cases it did not report, the one it
	# died in first (a guest kernel died under emulation in a CI run with
	# no sign of our code: docs/vm-tests.md); the crash is printed, and a
	# second death fails those cases.
	local f
	for attempt in 1 2 3 4 5; do
		[ -n "$rerun" ] || { rm -rf "$VM_SCRATCH" && mkdir -p "$VM_SCRATCH"; } ||
			{ echo "vm_suite: cannot create $VM_SCRATCH"; exit 1; }
		# The other nodes' consoles (NAME.NODE.console.BOOT) of an
		# earlier attempt are kept as NAME.tryN.NODE.console.BOOT: the
		# crash that made this attempt is in one of them.
		for f in "$RBLK_BUILD/vm/$name".*.console.*; do
			[ -e "$f" ] || continue
			case ${f##*/} in
			"$name".try*) [ "$attempt" = 1 ] && rm -f "$f" ;;
			*) if [ "$attempt" = 1 ]; then rm -f "$f"
			   else mv "$f" "$RBLK_BUILD/vm/$name.try$((attempt - 1)).${f##*/"$name".}"; fi ;;
			esac
		done
		console=$RBLK_BUILD/vm/$name.console.$attempt
		RBLK_VM_RERUN=$rerun "$runner" "$name" "$console" "$@"
		rc=$?
		consoles+=("$console")
		grep -q '^=== case \|^RBLK-CASE: ' "$console" && started=1 || started=0
		[ "$rc" = 125 ] || break
		crash=$(vm_crash_lines "$console" 8)
		if [ "$started" = 1 ]; then
			[ -z "$rerun" ] || break
			rerun=$(_vm_unreported "$guest" "$console" | tr '\n' ' ')
			rerun=${rerun% }
			[ -n "$rerun" ] || break
			echo "vm_suite: $name: a guest died in the middle of the suite, in case ${rerun%% *}; running the cases it did not report ($rerun) once more in new guests. The crash:"
		else
			boot_fails=$((boot_fails + 1))
			[ "$boot_fails" -lt 3 ] || break
			echo "vm_suite: $name: the guest died while booting (attempt $boot_fails of 3); booting again. The crash:"
		fi
		echo "${crash:-(no kernel crash lines on the console)}" | sed 's/^/vm_suite:   | /'
	done
	# The guest died or hung in the middle: every case it did not report
	# fails by name, with the first line of the crash.
	if [ "$rc" = 125 ] || [ "$rc" = 124 ]; then
		local why n
		if [ "$rc" = 124 ]; then
			why="guest hung (vm-run timeout)"
		else
			crash=$(vm_crash_reason "$console")
			why="guest died${rerun:+ twice}${crash:+ ($crash)}"
			[ "$started" = 0 ] && why="guest died while booting, 3 times${crash:+ (last: $crash)}"
		fi
		while read -r n; do
			echo "RBLK-CASE: FAIL $n $why"
		done < <(_vm_unreported "$guest" "${consoles[@]}")
	fi
	# After a rerun its status alone would hide a failure of the first boot.
	[ "$rc" = 0 ] && [ -n "$rerun" ] && grep -q '^RBLK-CASE: FAIL ' "${consoles[@]}" && rc=1
	echo "vm_suite: $name exit $rc; guest logs in $VM_SCRATCH"
	exit "$rc"
}

# The cases of a guest suite (within RBLK_VM_CASES) that none of the
# consoles reported, in suite order.
_vm_unreported() {	# guest-script console...
	local guest=$1 n
	shift
	while read -r n; do
		# shellcheck disable=SC2053
		[[ $n == ${RBLK_VM_CASES:-*} ]] || continue
		grep -q "^RBLK-CASE: [A-Z]* $n\( \|$\)" "$@" || echo "$n"
	done < <(vm_case_names "$guest")
}

vm_suite() {	# name [vm-run options...]
	_vm_suite_main _vm_run_single "$@"
}

# --- two nodes ------------------------------------------------------------
# vm_pair_suite NAME [client vm-run options...]: boots a target node and a
# client node joined by a link (vm-run -n).  The target node runs
# guest/node-agent with a disk of its own ($RBLK_BUILD/vm/NAME.tnode.img,
# cache=none); the client node runs guest/suite-NAME.guest.sh, whose cases
# drive the target node through guest/pair.sh.  The host serves the
# client's power-cut, power-on, link-off and link-on requests (the folder
# chan/host).  The target node's consoles go to
# $RBLK_BUILD/vm/NAME.tnode.console.BOOT.

# Boots the target node (in the background); sets _tnode_pid, bumps
# _tnode_boot.
_tnode_start() {	# name
	_tnode_boot=$((_tnode_boot + 1))
	rm -f "$VM_SCRATCH/tnode.pid"
	"$VM_DIR/vm-run" -t "${RBLK_VM_TIMEOUT:-3000}" -c "${RBLK_PAIR_TARGET_CPUS:-2}" -H rblk-tnode \
		-n "connect:$_link_port" -d "$_tnode_disk" -o "$VM_SCRATCH" -P "$VM_SCRATCH/tnode.pid" \
		-M "$VM_SCRATCH/tnode.mon" \
		-e RBLK_NODE_BOOT="$_tnode_boot" -e RBLK_NODE_DISK=1 \
		-- "$VM_DIR/guest/node-agent" "$VM_SCRATCH/chan" "${RBLK_PAIR_TARGET_IP:-10.88.0.1}/24" \
		>"$RBLK_BUILD/vm/$1.tnode.console.$_tnode_boot" 2>&1 &
	_tnode_pid=$!
}

# Power cut: QEMU killed outright; vm-run then reports the dead guest.
_tnode_kill() {
	local q
	for _ in $(seq 100); do [ -s "$VM_SCRATCH/tnode.pid" ] && break; sleep 0.1; done
	read -r q <"$VM_SCRATCH/tnode.pid" 2>/dev/null && kill -KILL "$q" 2>/dev/null
	wait "$_tnode_pid" 2>/dev/null
}

# One command to the target node's QEMU monitor (HMP); prints its answer.
# A pulled cable: "set_link link0 off" takes the carrier from the target
# node's NIC (the guest sees NO-CARRIER; frames either way are dropped).
_tnode_monitor() {	# command
	python3 - "$VM_SCRATCH/tnode.mon" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
def until_prompt():
    buf = b""
    while not buf.endswith(b"(qemu) "):
        part = s.recv(4096)
        if not part:
            sys.exit("monitor closed")
        buf += part
    return buf.decode(errors="replace")
until_prompt()
s.sendall(sys.argv[2].encode() + b"\n")
out = until_prompt().replace("\r", "").splitlines()
# The echo of the command first, the prompt last.
print("\n".join(out[1:-1]))
EOF
}

_vm_run_pair() {	# name console client-vm-run-options...
	_vm_run_pair_cmd "$1" "$2" "$VM_DIR/guest/suite-$1.guest.sh" "${@:3}"
}

# One boot of the pair; the client node runs SCRIPT (bash).
_vm_run_pair_cmd() {	# name console script client-vm-run-options...
	local name=$1 console=$2 script=$3 cpid req what rc
	shift 3
	# A new boot starts from an empty channel: a rerun must not see the
	# last boot's answers, "up" marks or dead node.
	rm -rf "$VM_SCRATCH/chan" && mkdir -p "$VM_SCRATCH/chan/host" || return 1
	_tnode_disk=$RBLK_BUILD/vm/$name.tnode.img
	rm -f "$_tnode_disk" && truncate -s "${RBLK_PAIR_DISK:-4G}" "$_tnode_disk"
	_link_port=$((20000 + RANDOM % 20000)) _tnode_boot=0
	# The client node listens on the link, the target node connects: a
	# target node booted again after a power cut connects anew.
	"$VM_DIR/vm-run" -t 3000 -H rblk-cnode -n "listen:$_link_port" -o "$VM_SCRATCH" "$@" \
		${RBLK_VM_TIMEOUT:+-t "$RBLK_VM_TIMEOUT"} \
		-- bash "$script" > >(tee "$console") 2>&1 &
	cpid=$!
	for _ in $(seq 300); do
		if [ "${RBLK_VM_LINK:-socket}" = unix ]; then
			ss -Hlx | grep -qF "link-$_link_port.sock" && break
		else
			[ -n "$(ss -Hltn "sport = :$_link_port")" ] && break
		fi
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	_tnode_start "$name"
	# Serve the client's requests until it is done.
	while kill -0 "$cpid" 2>/dev/null; do
		for req in "$VM_SCRATCH"/chan/host/*.req; do
			[ -e "$req" ] || continue
			what=${req##*/}; what=${what%%.*}
			case $what in
			power-cut) _tnode_kill; _vm_mark_dead "$VM_SCRATCH/chan/dead" cut
				   echo "cut" >"${req%.req}.done" ;;
			power-on)  rm -f "$VM_SCRATCH/chan/dead"; _tnode_start "$name"
				   echo "$_tnode_boot" >"${req%.req}.done" ;;
			link-off|link-on)
				   _tnode_monitor "set_link link0 ${what#link-}" >"${req%.req}.done" 2>&1 ||
					echo "monitor failed" >>"${req%.req}.done" ;;
			*)         echo "unknown request" >"${req%.req}.done" ;;
			esac
			rm -f "$req"
		done
		# A target node that died unasked: tnode calls fail at once,
		# and the case it happened in ends (run_case).
		kill -0 "$_tnode_pid" 2>/dev/null ||
			_vm_mark_dead "$VM_SCRATCH/chan/dead" died \
				"$RBLK_BUILD/vm/$name.tnode.console.$_tnode_boot"
		sleep 0.2
	done
	wait "$cpid"
	rc=$?
	# The agent powers off when asked; give it a moment, then cut it.
	: >"$VM_SCRATCH/chan/stop"
	for _ in $(seq 100); do kill -0 "$_tnode_pid" 2>/dev/null || break; sleep 0.1; done
	_tnode_kill
	return "$rc"
}

vm_pair_suite() {	# name [client vm-run options...]
	_vm_suite_main _vm_run_pair "$@"
}

# vm_pair_run NAME SCRIPT [client vm-run options...]: one boot of the pair
# (as vm_pair_suite) whose client node runs SCRIPT instead of a suite's
# cases (the benchmark, tools/bench/pair-bench); the console goes to
# $RBLK_BUILD/vm/NAME.console and our stdout.  Returns vm-run's status.
vm_pair_run() {	# name script [client vm-run options...]
	local name=$1
	VM_SCRATCH=$RBLK_BUILD/vm/$name
	rm -rf "$VM_SCRATCH" && mkdir -p "$VM_SCRATCH" || { echo "vm_pair_run: cannot create $VM_SCRATCH"; return 1; }
	_vm_run_pair_cmd "$name" "$RBLK_BUILD/vm/$name.console" "${@:2}"
}

# --- several nodes on one segment ------------------------------------------
# vm_cluster_suite NAME NODE=IP[/CPUS[/MEM]]... -- [client vm-run options...]
# boots a client node and the named nodes, each NIC on a port of one
# switch (tests/vm/vswitch, ports "client" and the node names).  Each node
# runs guest/node-agent with the folder chan/node-NODE and its address
# IP/24 (host name rblk-NODE, no disk: what a node keeps is in its
# tmpfs); the client node runs guest/suite-NAME.guest.sh, whose cases
# drive the nodes through guest/cluster.sh.  The host serves the client's
# requests (the folder chan/host): power-cut.NODE, power-on.NODE,
# block.X.Y and unblock.X.Y (the switch drops, or passes again, the
# frames between ports X and Y).  Consoles:
# $RBLK_BUILD/vm/NAME.NODE.console.BOOT; the switch's log
# $RBLK_BUILD/vm/NAME.switch.log.
declare -A _node_ip _node_cpus _node_mem _node_boot _node_pid
_cluster_nodes=()

_cluster_node_start() {	# suite node
	local s=$1 n=$2
	_node_boot[$n]=$((${_node_boot[$n]:-0} + 1))
	rm -f "$VM_SCRATCH/node-$n.pid"
	mkdir -p "$VM_SCRATCH/chan/node-$n"
	"$VM_DIR/vm-run" -t "${RBLK_VM_TIMEOUT:-3000}" -c "${_node_cpus[$n]}" -m "${_node_mem[$n]}" \
		-H "rblk-$n" -N "$VM_SCRATCH/sw/$n.sock" -o "$VM_SCRATCH" -P "$VM_SCRATCH/node-$n.pid" \
		-e RBLK_NODE_BOOT="${_node_boot[$n]}" \
		-- "$VM_DIR/guest/node-agent" "$VM_SCRATCH/chan/node-$n" "${_node_ip[$n]}/24" \
		>"$RBLK_BUILD/vm/$s.$n.console.${_node_boot[$n]}" 2>&1 &
	_node_pid[$n]=$!
}

_cluster_node_kill() {	# node
	local q
	for _ in $(seq 100); do [ -s "$VM_SCRATCH/node-$1.pid" ] && break; sleep 0.1; done
	read -r q <"$VM_SCRATCH/node-$1.pid" 2>/dev/null && kill -KILL "$q" 2>/dev/null
	wait "${_node_pid[$1]}" 2>/dev/null
}

_vswitch() {	# command: one command to the switch; prints its answer
	python3 - "$VM_SCRATCH/sw/ctl.sock" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.recv(512).decode().strip())
PY
}

# Answers one request of the client node (a file in chan/host).
_cluster_request() {	# suite req
	local req=$2 base what x y
	base=${req##*/}
	IFS=. read -r what x y _ <<<"$base"
	case $what in
	power-cut) if [ -n "${_node_ip[$x]:-}" ]; then
			_cluster_node_kill "$x"
			_vm_mark_dead "$VM_SCRATCH/chan/node-$x/dead" cut
		   fi
		   echo "cut" ;;
	power-on)  rm -f "$VM_SCRATCH/chan/node-$x/dead"; _cluster_node_start "$1" "$x"
		   echo "${_node_boot[$x]}" ;;
	block|unblock) _vswitch "$what $x $y" ;;
	*)         echo "unknown request $what" ;;
	esac >"${req%.req}.tmp" 2>&1
	# Whole, or not there: the client reads it as soon as it exists.
	mv "${req%.req}.tmp" "${req%.req}.done"
	rm -f "$req"
}

# One boot of the cluster; the client node runs SCRIPT (bash).
_vm_run_cluster() {	# name console client-vm-run-options...
	local name=$1 console=$2 cpid rc n req swpid alive
	shift 2
	# A new boot starts from an empty channel (as _vm_run_pair_cmd).
	rm -rf "$VM_SCRATCH/chan" "$VM_SCRATCH/sw" &&
		mkdir -p "$VM_SCRATCH/chan/host" "$VM_SCRATCH/sw" || return 1
	python3 "$VM_DIR/vswitch" "$VM_SCRATCH/sw" client "${_cluster_nodes[@]}" \
		>>"$RBLK_BUILD/vm/$name.switch.log" 2>&1 &
	swpid=$!
	for _ in $(seq 100); do [ -S "$VM_SCRATCH/sw/ctl.sock" ] && break; sleep 0.1; done
	_node_boot=()
	for n in "${_cluster_nodes[@]}"; do _cluster_node_start "$name" "$n"; done
	"$VM_DIR/vm-run" -t 3000 -H rblk-client -N "$VM_SCRATCH/sw/client.sock" -o "$VM_SCRATCH" \
		-e RBLK_CLUSTER_NODES="$(for n in "${_cluster_nodes[@]}"; do printf '%s=%s ' "$n" "${_node_ip[$n]}"; done)" \
		"$@" ${RBLK_VM_TIMEOUT:+-t "$RBLK_VM_TIMEOUT"} \
		-- bash "$VM_DIR/guest/suite-$name.guest.sh" > >(tee "$console") 2>&1 &
	cpid=$!
	while kill -0 "$cpid" 2>/dev/null; do
		for req in "$VM_SCRATCH"/chan/host/*.req; do
			[ -e "$req" ] && _cluster_request "$name" "$req"
		done
		# A node that died unasked: calls to it fail at once, and the
		# case it happened in ends (run_case).
		for n in "${_cluster_nodes[@]}"; do
			kill -0 "${_node_pid[$n]}" 2>/dev/null ||
				_vm_mark_dead "$VM_SCRATCH/chan/node-$n/dead" died \
					"$RBLK_BUILD/vm/$name.$n.console.${_node_boot[$n]}"
		done
		sleep 0.2
	done
	wait "$cpid"
	rc=$?
	for n in "${_cluster_nodes[@]}"; do : >"$VM_SCRATCH/chan/node-$n/stop"; done
	for _ in $(seq 100); do
		alive=0
		for n in "${_cluster_nodes[@]}"; do kill -0 "${_node_pid[$n]}" 2>/dev/null && alive=1; done
		[ "$alive" = 0 ] && break
		sleep 0.1
	done
	for n in "${_cluster_nodes[@]}"; do _cluster_node_kill "$n"; done
	kill "$swpid" 2>/dev/null
	wait "$swpid" 2>/dev/null
	return "$rc"
}

vm_cluster_suite() {	# name NODE=IP[/CPUS[/MEM]]... -- [client vm-run options...]
	local name=$1 spec n rest
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		spec=$1 n=${1%%=*} rest=${1#*=}
		shift
		[[ $n =~ ^[a-z][a-z0-9]*$ ]] && [ "$n" != client ] ||
			{ echo "vm_cluster_suite: bad node name in $spec"; exit 1; }
		IFS=/ read -r _node_ip[$n] _node_cpus[$n] _node_mem[$n] <<<"$rest"
		_node_cpus[$n]=${_node_cpus[$n]:-1} _node_mem[$n]=${_node_mem[$n]:-1G}
		_cluster_nodes+=("$n")
	done
	[ "${1:-}" = -- ] && shift
	_vm_suite_main _vm_run_cluster "$name" "$@"
}
