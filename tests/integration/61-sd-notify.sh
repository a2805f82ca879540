#!/bin/bash
# SPDX-License-Identifier: MIT
# The Type=notify handshake of rblk-target, with the test as the service
# manager: a datagram socket (abstract "@name", then a path) in
# NOTIFY_SOCKET.  READY=1 arrives once, and right after it both TCP
# listeners and the admin socket accept connections; a target whose second
# listener cannot bind never says READY=1; SIGTERM brings STOPPING=1, then
# a clean exit within 5 s.  Without NOTIFY_SOCKET (or with one nobody
# listens on) the target serves as before.
. "$(dirname "$0")/lib.sh"
require_target
require_python3
LOGIN=$RBLK_BUILD/tests/tools/rblk-login
[ -x "$LOGIN" ] || skip "$LOGIN not built (make unit-tests)"
unset NOTIFY_SOCKET	# in case tests/run itself runs under systemd

cat >"$T/manager.py" <<'PY'
# manager.py MODE TARGET CONF PORT1 PORT2 ADMIN_SOCK [expect-fail]
import os, signal, socket, subprocess, sys, time

mode, target, conf, p1, p2, admin = sys.argv[1:7]
expect_fail = len(sys.argv) > 7
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
if mode == "abstract":
    name = "@rblk-test-%d-%d" % (os.getpid(), time.monotonic_ns())
    s.bind("\0" + name[1:])
else:
    name = os.path.join(os.path.dirname(conf), "notify.sock")
    s.bind(name)

def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)

log = open(os.path.join(os.path.dirname(conf), "target.log"), "ab")
env = dict(os.environ, NOTIFY_SOCKET=name)
t = subprocess.Popen([target, "--config", conf], env=env, stdout=log, stderr=log)

def recv(deadline):
    """Next message, or None when the deadline passed or the target exited."""
    while time.monotonic() < deadline:
        s.settimeout(0.2)
        try:
            return s.recv(4096).decode()
        except socket.timeout:
            if t.poll() is not None:
                try:
                    s.settimeout(0)
                    return s.recv(4096).decode()
                except (BlockingIOError, socket.timeout):
                    return None
    return None

if expect_fail:
    msgs = []
    while True:
        m = recv(time.monotonic() + 30)
        if m is None:
            break
        msgs.append(m)
    rc = t.wait(timeout=10)
    if any("READY=1" in m.split("\n") for m in msgs):
        fail("READY=1 sent although a listener failed: %r" % msgs)
    if rc == 0:
        fail("target exited 0 after a failed listener")
    print("no READY=1 from a target that could not listen (exit %d)" % rc)
    sys.exit(0)

m = recv(time.monotonic() + 30)
if m is None:
    fail("no notification within 30 s (target %s)" % ("exited %d" % t.returncode if t.poll() is not None else "running"))
if "READY=1" not in m.split("\n"):
    fail("first notification is not READY=1: %r" % m)
# Right now, with no retry: every listener must accept.
for port in (p1, p2):
    c = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
    c.close()
a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
a.connect(admin)
a.close()
print("READY=1 received; TCP %s and %s and the admin socket accept" % (p1, p2))
sys.stdout.flush()
# The caller does real I/O now and tells us to go on by closing stdin.
sys.stdin.read()
if t.poll() is not None:
    fail("target exited while serving")
t.send_signal(signal.SIGTERM)
m = recv(time.monotonic() + 10)
if m is None or "STOPPING=1" not in m.split("\n"):
    fail("no STOPPING=1 after SIGTERM: %r" % m)
try:
    rc = t.wait(timeout=5)
except subprocess.TimeoutExpired:
    t.kill()
    fail("target still running 5 s after SIGTERM")
if rc != 0:
    fail("target exit status %d" % rc)
extra = recv(time.monotonic() + 0.2)
if extra and "READY=1" in extra.split("\n"):
    fail("a second READY=1: %r" % extra)
print("STOPPING=1 received; clean exit")
PY

conf2() {	# FILE PORT1 PORT2: two TCP listeners
	local f=$1
	PORT=$2
	write_conf "$f" uring "$T/vol0.img" 16M
	sed -i "s/^listen_tcp = .*/listen_tcp = 127.0.0.1:$2, 127.0.0.1:$3/" "$f"
}

for mode in abstract path; do
	log "NOTIFY_SOCKET as $mode socket"
	P1=$(free_port) || fail "no free port"
	P2=$(free_port) || fail "no free port"
	[ "$P1" != "$P2" ] || P2=$((P1 + 1))
	conf2 "$T/t.conf" "$P1" "$P2"
	rm -f "$T/notify.sock"
	coproc MGR { python3 "$T/manager.py" "$mode" "$TARGET_BIN" "$T/t.conf" "$P1" "$P2" "$T/t.conf.sock" 2>&1; }
	mpid=$MGR_PID
	read -r -t 40 line <&"${MGR[0]}" || { cat "$T/target.log"; fail "manager: no answer"; }
	echo "$line"
	case $line in READY=1*) ;; *) cat "$T/target.log"; fail "$line" ;; esac
	"$LOGIN" --io 2 --flush 1 127.0.0.1 "$P2" vol0 >/dev/null || fail "I/O after READY=1"
	exec {MGR[1]}>&-
	read -r -t 40 line <&"${MGR[0]}" || { wait "$mpid"; fail "manager: no answer after SIGTERM"; }
	echo "$line"
	wait "$mpid" || fail "$line"
	case $line in STOPPING=1*) ;; *) fail "$line" ;; esac
done

log "a listener that cannot bind: no READY=1"
P1=$(free_port) || fail "no free port"
python3 -c 'import socket,time,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$P1" &
holder=$!
_cleanup_pids+=("$holder")
wait_port "$P1" 10 || fail "port holder did not listen"
P2=$(free_port) || fail "no free port"
conf2 "$T/f.conf" "$P2" "$P1"
timeout 60 python3 "$T/manager.py" abstract "$TARGET_BIN" "$T/f.conf" "$P2" "$P1" "$T/f.conf.sock" expect-fail </dev/null ||
	{ tail -n 5 "$T/target.log"; fail "failed start"; }
kill "$holder"

log "no NOTIFY_SOCKET, and one nobody listens on: serves as before"
for ns in "" "@rblk-nobody-$$" "$T/nobody.sock"; do
	PORT=$(free_port) || fail "no free port"
	write_conf "$T/n.conf" uring "$T/vol0.img" 16M
	: >"$T/target.log"
	if [ -n "$ns" ]; then export NOTIFY_SOCKET=$ns; else unset NOTIFY_SOCKET; fi
	start_target "$T/n.conf"
	unset NOTIFY_SOCKET
	"$LOGIN" --io 2 127.0.0.1 "$PORT" vol0 >/dev/null || fail "I/O with NOTIFY_SOCKET='$ns'"
	kill -TERM "$TARGET_PID"
	for _ in $(seq 50); do kill -0 "$TARGET_PID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$TARGET_PID" 2>/dev/null && fail "target still running 5 s after SIGTERM"
	grep -q "stopped cleanly" "$T/target.log" || { cat "$T/target.log"; fail "no clean stop (NOTIFY_SOCKET='$ns')"; }
	if [ -n "$ns" ]; then
		grep -q "sd_notify READY=1: " "$T/target.log" || fail "failed notification not logged"
	fi
	target_log_clean
done
echo PASS
