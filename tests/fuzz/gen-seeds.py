#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpora of the fuzzers (docs/fuzzing.md):

  tests/fuzz/corpus/proto/  16-byte parameter block + one PDU   (fuzz_proto.c)
  tests/fuzz/corpus/conn/   8-byte head + an initiator's stream (fuzz_conn.c)

Small valid PDUs and sessions, built from docs/protocol.md.  Rerun after a
wire change:  tests/fuzz/gen-seeds.py   (replaces every file in those dirs).
"""
import hashlib
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = 0x6B6C6272
LOGIN, LOGIN_RSP, CMD, RSP, DISCOVER, DISCOVER_RSP = 1, 2, 3, 4, 5, 6
KEEPALIVE, KEEPALIVE_RSP = 7, 8
READ, WRITE, FLUSH, DISCARD, WRITE_ZEROES = 1, 2, 3, 4, 5
FUA = 1
MAC_MAGIC = b"\xa5" * 32          # fuzz_conn.c: harness puts the right MAC


VERSION = 2                       # RBLK_PROTO_VERSION


def hdr(typ, length):
    return struct.pack("<BBHI", typ, VERSION, 0, length)


def name(s):
    b = s.encode()
    return b + b"\0" * (64 - len(b))


def login(volume, host="fuzz", depth=32, queue_id=0, mac=b"\0" * 32):
    body = struct.pack("<IHHII", MAGIC, queue_id, depth, 0, 0)
    # With a MAC, the initiator's own nonce (mutual authentication).
    ini_nonce = b"\0" * 32 if mac == b"\0" * 32 else b"\x5a" * 32
    body += name(volume) + name(host) + mac + ini_nonce
    return hdr(LOGIN, 8 + len(body)) + body


def login_rsp(status=0, depth=32, flags=0x1E, size=1 << 20, bs=512,
              max_io=1 << 20, inline=4096, max_sge=16, nonce=b"\0" * 32):
    body = struct.pack("<HHIQIIIHHQ", status, depth, flags, size, bs, max_io,
                       inline, max_sge, 0, 0x1234) + nonce + b"\0" * 16 \
        + bytes(range(16))  # vol_uuid
    return hdr(LOGIN_RSP, 8 + len(body)) + body


def cmd(op, tag, offset=0, length=0, flags=0, sges=(), data=b""):
    total = 64 + 16 * len(sges) + len(data)
    body = struct.pack("<BBHIQII", op, flags, len(sges), tag, offset, length, 0)
    body += b"\0" * 32
    for addr, rkey, ln in sges:
        body += struct.pack("<QII", addr, rkey, ln)
    return hdr(CMD, total) + body + data


def rsp(tag, status=0, value=0, data=b""):
    return hdr(RSP, 24 + len(data)) + struct.pack("<IHHQ", tag, status, 0, value) + data


def keepalive(seq, typ=KEEPALIVE, status=0):
    return hdr(typ, 24) + struct.pack("<HHIQ", status, 0, 0, seq)


def discover(host="fuzz"):
    return hdr(DISCOVER, 80) + struct.pack("<II", MAGIC, 0) + name(host)


def discover_rsp(entries):
    body = struct.pack("<HHI", 0, len(entries), 0)
    for vol, size, flags, bs in entries:
        body += name(vol) + struct.pack("<QII", size, flags, bs)
    return hdr(DISCOVER_RSP, 8 + len(body)) + body


def rdma_cm(queue_id=0, depth=32, status=0):
    return struct.pack("<IBBHHHII", MAGIC, VERSION, 0, queue_id, depth, status, 0, 0)


# ---- fuzz_proto: struct fz_params + PDU ----------------------------------

def params(depth=32, max_sge=4, tcp=0, max_io=1 << 20, inline=4096, bs4k=0,
           vol_flags=0x1E, size_shift=20, status=3):
    return struct.pack("<HBBIIBBBB", depth, max_sge, tcp, max_io, inline,
                       bs4k, vol_flags, size_shift, status)


def proto_seeds():
    rd = params()
    tc = params(tcp=1)
    yield "hdr-short", rd + hdr(CMD, 64)[:5]
    yield "login", rd + login("vol0")
    yield "login-mac", rd + login("sec", mac=bytes(range(32)))
    yield "login-rsp-ok", rd + login_rsp()
    yield "login-rsp-auth", rd + login_rsp(status=11, nonce=bytes(range(32)))
    yield "login-rsp-refused", rd + login_rsp(status=9, depth=0, bs=0)
    yield "cmd-read-sgl", rd + cmd(READ, 1, 4096, 8192,
                                   sges=((0x10000, 7, 4096), (0x20000, 7, 4096)))
    yield "cmd-write-sgl", rd + cmd(WRITE, 2, 0, 4096, FUA, sges=((0x10000, 7, 4096),))
    yield "cmd-write-inline", rd + cmd(WRITE, 3, 512, 512, data=b"\x11" * 512)
    yield "cmd-read-tcp", tc + cmd(READ, 4, 1024, 4096)
    yield "cmd-write-tcp", tc + cmd(WRITE, 5, 0, 1024, FUA, data=b"\x22" * 1024)
    yield "cmd-flush", rd + cmd(FLUSH, 6, 0xFFFFFFFFFFFFFFFF)
    yield "cmd-discard", rd + cmd(DISCARD, 7, 1 << 19, 1 << 19)
    yield "cmd-write-zeroes", rd + cmd(WRITE_ZEROES, 8, 0, 4096, FUA)
    yield "cmd-4k-ro", params(bs4k=1, vol_flags=1) + cmd(READ, 0, 4096, 4096,
                                                        sges=((0, 1, 4096),))
    yield "rsp-read-data", rd + rsp(9, 0, 16, b"\x33" * 16)
    yield "rsp-error", rd + rsp(10, 3)
    yield "keepalive", rd + keepalive(5)
    yield "keepalive-rsp", rd + keepalive(5, KEEPALIVE_RSP, 17)
    yield "discover", rd + discover("host-a")
    yield "discover-rsp", rd + discover_rsp([("vol0", 1 << 20, 0x1E, 512),
                                            ("ro", 1 << 20, 0x03, 4096)])
    yield "rdma-cm", rd + rdma_cm(1, 64)
    yield "rdma-cm-reject", rd + rdma_cm(0, 0, 16) + b"\0" * 36
    yield "name", rd + b"vol-1.a:b_c\0"


# ---- fuzz_conn: struct fz_head + stream ----------------------------------

F_MESSAGE, F_SEND_FAIL, F_DRAIN, F_FORCE_END = 1, 2, 4, 8
F_FETCH_FAIL, F_LAZY, F_TIMER, F_CTRL_FAIL = 16, 32, 64, 128


def head(flags=0, stop_at=0, chunks=(0,) * 6):
    return struct.pack("<BB6B", flags, stop_at, *chunks)


def io_mix_tcp(bs=512):
    return (cmd(READ, 0, 0, 4 * bs) + cmd(WRITE, 1, bs, 2 * bs, data=b"\x44" * (2 * bs)) +
            cmd(WRITE, 2, 0, bs, FUA, data=b"\x55" * bs) + cmd(FLUSH, 3) +
            cmd(DISCARD, 4, 8 * bs, 8 * bs) + cmd(WRITE_ZEROES, 5, 16 * bs, 4 * bs, FUA))


def io_mix_msg():
    return (cmd(READ, 0, 0, 8192, sges=((0x1000, 5, 4096), (0x3000, 5, 4096))) +
            cmd(WRITE, 1, 8192, 4096, sges=((0x8000, 5, 4096),)) +
            cmd(WRITE, 2, 0, 512, FUA, data=b"\x66" * 512) + cmd(FLUSH, 3) +
            cmd(DISCARD, 4, 4096, 4096) + cmd(WRITE_ZEROES, 5, 0, 1024))


def conn_seeds():
    tcp = login("vol0") + io_mix_tcp()
    yield "tcp-session", head() + tcp
    yield "tcp-session-bytewise", head(chunks=(1,) * 6) + tcp
    yield "tcp-session-split", head(chunks=(7, 3, 64, 200, 5, 1)) + tcp
    yield "tcp-session-lazy", head(F_LAZY, chunks=(13, 0, 0, 0, 0, 0)) + tcp
    yield "tcp-4k", head() + login("vol4k") + io_mix_tcp(4096)[:600] + \
        cmd(READ, 7, 512, 4096) + cmd(READ, 8, 1 << 30, 4096)
    yield "tcp-ro", head() + login("ro") + cmd(READ, 0, 0, 512) + \
        cmd(WRITE, 1, 0, 512, data=b"\0" * 512) + cmd(DISCARD, 2, 0, 512)
    yield "tcp-auth", head() + login("sec", "host-a") + \
        login("sec", "host-a", mac=MAC_MAGIC) + io_mix_tcp()
    yield "tcp-auth-wrong-mac", head() + login("sec") + login("sec", mac=b"\x01" * 32)
    yield "tcp-auth-no-answer", head() + login("sec") + login("sec")
    yield "tcp-acl-allowed", head() + login("acl", "host-a") + cmd(READ, 0, 0, 512)
    yield "tcp-acl-denied", head() + login("acl", "fuzz") + cmd(READ, 0, 0, 512)
    yield "tcp-no-volume", head() + login("nope")
    yield "tcp-discover", head() + discover("host-a")
    yield "tcp-discover-split", head(chunks=(3, 9, 1, 0, 0, 0)) + discover("fuzz") + login("vol0")
    yield "tcp-cmd-before-login", head() + cmd(READ, 0, 0, 512)
    yield "tcp-second-login", head() + login("vol0") + login("vol0")
    yield "tcp-keepalive", head() + login("vol0") + keepalive(7) + cmd(READ, 0, 0, 512) + keepalive(8)
    yield "tcp-keepalive-before-login", head() + keepalive(1)
    yield "tcp-keepalive-drain", head(F_DRAIN, stop_at=3, chunks=(64,) * 6) + login("vol0") + keepalive(2)
    yield "tcp-discover-after-login", head() + login("vol0") + discover()
    yield "tcp-login-rsp-to-target", head() + login_rsp()
    yield "tcp-rsp-after-login", head() + login("vol0") + rsp(0)
    yield "tcp-bad-tags", head(F_LAZY) + login("vol0", depth=4) + cmd(READ, 9, 0, 512) + \
        cmd(READ, 1, 0, 512) + cmd(READ, 1, 512, 512) + cmd(7, 2, 0, 512) + \
        cmd(READ, 3, 0, 512, flags=FUA)
    yield "tcp-deep-queue", head() + login("vol0", depth=1000) + cmd(READ, 999, 0, 512) + \
        cmd(READ, 127, 0, 512)
    yield "tcp-pool-pressure", head(F_LAZY) + login("vol0", depth=8) + \
        b"".join(cmd(READ, t, 0, 512 << 10) for t in range(4)) + \
        cmd(WRITE, 4, 0, 512, data=b"\x77" * 512)
    yield "tcp-pool-pressure-run", head() + login("vol0", depth=8) + \
        b"".join(cmd(READ, t, 0, 512 << 10) for t in range(4)) + \
        cmd(WRITE, 4, 0, 512, data=b"\x77" * 512)
    yield "tcp-bad-volume", head() + login("bad") + cmd(READ, 0, 0, 4096) + \
        cmd(WRITE, 1, 64 << 10, 512, data=b"\x01" * 512) + cmd(READ, 2, 256 << 10, 512) + \
        cmd(DISCARD, 3, 0, 512) + cmd(FLUSH, 4)
    yield "tcp-ctrl-fail", head(F_CTRL_FAIL) + login("vol0") + cmd(READ, 99, 0, 512) + cmd(READ, 0, 0, 512)
    yield "tcp-ctrl-fail-auth", head(F_CTRL_FAIL) + login("sec")
    yield "tcp-ctrl-fail-discover", head(F_CTRL_FAIL) + discover()
    yield "tcp-garbage-after", head() + login("vol0") + cmd(READ, 0, 0, 512) + \
        hdr(CMD, 63) + b"\0" * 60
    # A refused 1-byte WRITE leaves the next PDU at an odd stream offset.
    yield "tcp-odd-offset", head() + login("vol0") + cmd(WRITE, 0, 0, 1, data=b"\x01") + \
        cmd(READ, 1, 0, 512) + cmd(FLUSH, 2)
    yield "tcp-huge-len", head() + login("vol0") + hdr(CMD, 0xFFFFFFF0) + b"\0" * 56
    yield "tcp-write-short", head() + login("vol0") + cmd(WRITE, 0, 0, 4096, data=b"\x11" * 4096)[:2000]
    yield "tcp-send-fail", head(F_SEND_FAIL) + tcp
    yield "tcp-drain", head(F_DRAIN, stop_at=5, chunks=(64,) * 6) + tcp + io_mix_tcp()
    yield "tcp-drain-inflight", head(F_DRAIN | F_LAZY, stop_at=5, chunks=(64,) * 6) + \
        login("vol0") + b"".join(cmd(READ, t, 512 * t, 512) for t in range(8)) + \
        cmd(WRITE, 9, 0, 512, data=b"\x02" * 512)
    yield "tcp-force-end", head(F_FORCE_END | F_LAZY) + tcp
    # A 1 MiB READ, a header of an unknown type and 64 KiB more in one
    # send: the READ's answer comes first, then INVALID_OPCODE, then the
    # end (a black-box client saw the answer cut off by a reset).
    yield "tcp-fatal-after-read", head() + login("vol0") + cmd(READ, 1, 0, 1 << 20) + \
        hdr(99, 8) + b"\x5a" * 65536
    yield "tcp-fatal-after-read-lazy", head(F_LAZY, chunks=(0, 0, 0, 0, 0, 0)) + \
        login("vol0") + cmd(READ, 1, 0, 1 << 20) + cmd(READ, 2, 0, 512) + hdr(99, 8)
    yield "tcp-login-twice", head() + login("vol0") + login("vol0")
    yield "tcp-login-twice-busy", head(F_LAZY) + login("vol0") + cmd(READ, 0, 0, 4096) + \
        login("vol0")
    yield "tcp-keepalive-bad", head() + login("vol0") + cmd(READ, 0, 0, 512) + \
        keepalive(3, status=5)
    yield "tcp-tag-none", head(F_LAZY) + login("vol0") + cmd(READ, 0, 0, 512) + \
        cmd(FLUSH, 0xFFFFFFFF)
    yield "tcp-discover-busy", head(F_LAZY) + login("vol0") + cmd(READ, 0, 0, 4096) + discover()
    yield "tcp-timer", head(F_TIMER) + login("vol0") + cmd(FLUSH, 0)
    yield "tcp-timer-idle", head(F_TIMER) + hdr(LOGIN, 216)[:6]
    msg = login("vol0") + io_mix_msg()
    yield "msg-session", head(F_MESSAGE) + msg
    yield "msg-session-lazy", head(F_MESSAGE | F_LAZY) + msg
    yield "msg-fetch-fail", head(F_MESSAGE | F_FETCH_FAIL) + msg
    yield "msg-auth", head(F_MESSAGE) + login("sec") + login("sec", mac=MAC_MAGIC) + io_mix_msg()
    yield "msg-pool-pressure", head(F_MESSAGE | F_LAZY) + login("vol0", depth=8) + \
        b"".join(cmd(READ, t, 0, 512 << 10, sges=((0x100000 * t, 9, 512 << 10),))
                 for t in range(4)) + cmd(WRITE, 4, 0, 4096, sges=((0, 9, 4096),))
    yield "msg-bad-sgl", head(F_MESSAGE) + login("vol0") + \
        cmd(READ, 0, 0, 4096, sges=((0, 1, 1024),)) + cmd(WRITE, 1, 0, 4096) + \
        cmd(WRITE, 2, 0, 512, sges=((0, 1, 512),), data=b"\0" * 512) + \
        cmd(READ, 3, 0, 512, sges=((0, 1, 0), (0, 1, 512)))
    yield "msg-too-big", head(F_MESSAGE) + login("vol0") + cmd(WRITE, 0, 0, 8192, data=b"\0" * 8192)
    yield "msg-drain", head(F_MESSAGE | F_DRAIN, stop_at=4) + msg + io_mix_msg()
    yield "msg-bad-volume", head(F_MESSAGE) + login("bad") + \
        cmd(WRITE, 0, 0, 4096, sges=((0, 1, 4096),)) + cmd(READ, 1, 64 << 10, 512, sges=((0, 1, 512),))
    yield "msg-discover", head(F_MESSAGE) + discover("host-a")
    yield "msg-fatal-after-read", head(F_MESSAGE | F_LAZY) + login("vol0") + \
        cmd(READ, 1, 0, 512 << 10, sges=((0x100000, 9, 512 << 10),)) + hdr(99, 8)


def write(subdir, seeds):
    d = os.path.join(HERE, "corpus", subdir)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for label, data in seeds:
        with open(os.path.join(d, label), "wb") as f:
            f.write(data)
    return len(os.listdir(d))


def main():
    n1 = write("proto", proto_seeds())
    n2 = write("conn", conn_seeds())
    print(f"gen-seeds: {n1} proto seeds, {n2} conn seeds in {HERE}/corpus")
    return 0


if __name__ == "__main__":
    sys.exit(main())
