// SPDX-License-Identifier: MIT
/*
 * Hostile TCP client: sends one chosen bad PDU (or sequence) to a target
 * and checks that the answer is what docs/protocol.md demands, an error
 * status or a closed connection, and that the target still serves a fresh
 * LOGIN afterwards.
 *
 *   rblk-hostile HOST PORT VOLUME CASE|all|list [--bytes N] [--seed S]
 *                [--idle SECONDS]   (idle-no-login: how long to wait)
 *                [--offset BYTES]   (io-error: where a fault volume fails;
 *                                    not part of "all"/"list")
 *                [--conns N]        (no-read, silent-write, unfinished-write:
 *                                    connections)
 *                [--bind ADDR]      (connect from this local address)
 *                [--secret-vol V --exec CMD]  (secret-cleared, below)
 *                [--volumes N]      (discover-cut: volumes open to us)
 *
 * Two attacks are not part of "all": they hold their connections for
 * --idle seconds while the caller measures what a bystander still gets.
 *   no-read       N sessions each send 32 READs of 1 MiB and never read
 *   silent-write  N sessions each send a WRITE announcing 1 MiB and 1 byte
 *   write-no-read N sessions each send 32 WRITEs of 1 MiB with their data
 *                 (as far as the target takes it) and never read
 *   unfinished-write  N sessions each send a WRITE of 1 MiB with all of
 *                 its data but the last byte
 *   slow-read     one session sends 32 READs of 1 MiB and reads the
 *                 answers at 1.25 MiB/s (fails if the target closes it)
 * Each reports how many of its connections the target closed, and when.
 *
 * Two more need the caller's setup: secret-cleared (a volume with a
 * secret, --secret-vol, and a command, --exec, that clears that secret:
 * run between the challenge and the answer) and discover-cut (a target
 * with more than 256 volumes open to this host, --volumes N).
 *
 * Prints what came back ("status BAD_TAG tag 7", "closed", "nothing") and
 * one verdict line per case; exit 0 when every case was answered as the
 * protocol demands, 1 otherwise, 2 for usage errors.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "rblk_proto.h"

static const char *g_host, *g_port, *g_vol;
static unsigned g_garbage_bytes = 4096;
static unsigned g_seed = 1;
static unsigned g_idle = 15;
static uint64_t g_offset;	/* io-error: where the store fails */
static unsigned g_conns;	/* no-read, silent-write: 0 = their default */
static const char *g_bind;	/* local address to connect from */
static const char *g_secret_vol;	/* secret-cleared: a volume with a secret */
static const char *g_exec;		/* secret-cleared: run while challenged */
static unsigned g_min_vols;		/* discover-cut: volumes the target lists */

/* ---- socket helpers ------------------------------------------------- */

static int dial(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int fd, one = 1;

	if (getaddrinfo(g_host, g_port, &hints, &res))
		return -1;
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && g_bind && res->ai_family == AF_INET) {
		struct sockaddr_in src = { .sin_family = AF_INET };

		if (inet_pton(AF_INET, g_bind, &src.sin_addr) != 1 ||
		    bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Reads exactly len bytes within timeout_ms.  1 = got them, 0 = the
 * connection closed (EOF or reset), -1 = timeout. */
static int recv_exact(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -1;
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

/* Waits until the target closes the connection, skipping whatever it
 * sends.  true if it closed within timeout_ms. */
static bool wait_closed(int fd, int timeout_ms)
{
	uint8_t junk[4096];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return false;
		n = recv(fd, junk, sizeof(junk), 0);
		if (n <= 0)
			return true;
	}
}

/* ---- protocol helpers ------------------------------------------------ */

static int login(int fd, const char *vol, unsigned depth,
		 struct rblk_login_rsp *rsp)
{
	struct rblk_login l = { .queue_depth = depth };
	uint8_t buf[sizeof(struct rblk_wire_login_rsp)];
	uint8_t pdu[sizeof(struct rblk_wire_login)];
	int r;

	snprintf(l.volume, sizeof(l.volume), "%s", vol);
	snprintf(l.host, sizeof(l.host), "hostile");
	if (rblk_send_all(fd, pdu, rblk_encode_login(pdu, &l)))
		return -1;
	r = recv_exact(fd, buf, sizeof(buf), 3000);
	if (r <= 0)
		return -1;
	return rblk_decode_login_rsp(buf, sizeof(buf), rsp) == RBLK_S_OK ? 0 : -1;
}

static int dial_login_depth(unsigned depth, struct rblk_login_rsp *rsp)
{
	int fd = dial();

	if (fd < 0) {
		printf("  cannot connect\n");
		return -1;
	}
	if (login(fd, g_vol, depth, rsp) || rsp->status != RBLK_S_OK) {
		printf("  LOGIN to %s failed\n", g_vol);
		close(fd);
		return -1;
	}
	return fd;
}

static int dial_login(struct rblk_login_rsp *rsp)
{
	return dial_login_depth(8, rsp);
}

static size_t make_cmd(void *buf, uint8_t op, uint8_t flags, uint32_t tag,
		       uint64_t off, uint32_t len, uint32_t inline_len)
{
	struct rblk_cmd c = {
		.opcode = op, .flags = flags, .tag = tag, .offset = off,
		.length = len,
	};

	return rblk_encode_cmd(buf, &c, sizeof(struct rblk_wire_cmd) + inline_len);
}

/*
 * Reads one RSP (and the READ data it announces).  Returns 1 with *rsp
 * filled, 0 when closed, -1 on timeout, -2 when the RSP itself is bad.
 */
static int read_rsp(int fd, struct rblk_rsp *rsp, int timeout_ms)
{
	uint8_t hdr[sizeof(struct rblk_wire_rsp)];
	uint32_t len;
	uint8_t type;
	int r = recv_exact(fd, hdr, sizeof(hdr), timeout_ms);

	if (r <= 0)
		return r;
	if (rblk_decode_hdr(hdr, sizeof(hdr), RBLK_MAX_PDU, &type, &len) != RBLK_S_OK ||
	    type != RBLK_PDU_RSP)
		return -2;
	if (rblk_decode_rsp(hdr, sizeof(hdr), rsp) != RBLK_S_OK)
		return -2;
	if (len > sizeof(hdr)) {	/* READ data: checked by decode, skipped */
		uint8_t *data = malloc(len - sizeof(hdr));

		r = recv_exact(fd, data, len - sizeof(hdr), timeout_ms);
		free(data);
		if (r <= 0)
			return r;
	}
	return 1;
}

static void show(int r, const struct rblk_rsp *rsp)
{
	if (r == 1)
		printf("  got: status %s tag %u value %llu\n",
		       rblk_status_str(rsp->status), rsp->tag,
		       (unsigned long long)rsp->value);
	else
		printf("  got: %s\n", r == 0 ? "closed" : r == -1 ? "nothing (timeout)"
							     : "malformed RSP");
}

/* Expects an RSP with status st (and tag when tag >= 0). */
static bool expect_status(int fd, int st, int64_t tag)
{
	struct rblk_rsp rsp;
	int r = read_rsp(fd, &rsp, 3000);

	show(r, &rsp);
	if (r != 1)
		return false;
	if (rsp.status != st) {
		printf("  want status %s\n", rblk_status_str(st));
		return false;
	}
	if (tag >= 0 && rsp.tag != (uint32_t)tag) {
		printf("  want tag %lld\n", (long long)tag);
		return false;
	}
	return true;
}

/* The connection still works: a FLUSH right after is answered OK. */
static bool still_serves(int fd, uint32_t tag)
{
	uint8_t cmd[64];

	if (rblk_send_all(fd, cmd, make_cmd(cmd, RBLK_OP_FLUSH, 0, tag, 0, 0, 0)))
		return false;
	printf("  follow-up FLUSH:\n");
	return expect_status(fd, RBLK_S_OK, tag);
}

static bool expect_closed(int fd)
{
	bool closed = wait_closed(fd, 3000);

	printf("  got: %s\n", closed ? "closed" : "connection left open");
	return closed;
}

/* What a client is waiting for when the target finds its stream broken. */
enum waiting { AWAIT_LOGIN_RSP, AWAIT_DISCOVER_RSP, AWAIT_RSP };

/*
 * A framing or state error: the target says why with the PDU the client
 * is waiting for (a RSP for RBLK_TAG_NONE once logged in) carrying
 * status want, then closes.
 */
static bool expect_fatal(int fd, int want, enum waiting w)
{
	uint8_t buf[sizeof(struct rblk_wire_login_rsp)];
	struct rblk_login_rsp lr;
	struct rblk_rsp rsp;
	uint16_t st = RBLK_S__MAX, count;
	int r;

	switch (w) {
	case AWAIT_RSP:
		r = read_rsp(fd, &rsp, 3000);
		show(r, &rsp);
		if (r != 1 || rsp.tag != RBLK_TAG_NONE) {
			printf("  want a RSP for tag 0x%x\n", RBLK_TAG_NONE);
			return false;
		}
		st = rsp.status;
		break;
	case AWAIT_LOGIN_RSP:
		r = recv_exact(fd, buf, sizeof(struct rblk_wire_login_rsp), 3000);
		if (r == 1 && rblk_decode_login_rsp(buf, sizeof(struct rblk_wire_login_rsp),
						    &lr) == RBLK_S_OK)
			st = lr.status;
		printf("  got: %s %s\n", r == 1 ? "LOGIN_RSP" : "no LOGIN_RSP",
		       r == 1 ? rblk_status_str(st) : "");
		break;
	case AWAIT_DISCOVER_RSP:
		r = recv_exact(fd, buf, sizeof(struct rblk_wire_discover_rsp), 3000);
		if (r != 1 || rblk_decode_discover_rsp(buf, sizeof(struct rblk_wire_discover_rsp),
						       &st, &count, NULL) != RBLK_S_OK || count)
			st = RBLK_S__MAX;
		printf("  got: %s %s\n", st < RBLK_S__MAX ? "DISCOVER_RSP" : "no DISCOVER_RSP",
		       st < RBLK_S__MAX ? rblk_status_str(st) : "");
		break;
	}
	if (st != want) {
		printf("  want status %s\n", rblk_status_str(want));
		return false;
	}
	return expect_closed(fd);
}

/* ---- cases ------------------------------------------------------------ */

static bool read_into(int fd, uint32_t tag, uint64_t off, uint32_t len,
		      uint8_t *buf);

static bool case_truncated(void)
{
	struct rblk_login_rsp lr;
	uint8_t cmd[64];
	int fd = dial_login(&lr), r;
	struct rblk_rsp rsp;

	if (fd < 0)
		return false;
	make_cmd(cmd, RBLK_OP_READ, 0, 1, 0, 4096, 0);
	rblk_send_all(fd, cmd, 30);	/* capsule cut short */
	r = read_rsp(fd, &rsp, 500);
	show(r, &rsp);
	close(fd);
	/* The target must wait for the rest, not act on half a capsule. */
	return r == -1;
}

static bool case_truncated_write(void)
{
	struct rblk_login_rsp lr;
	uint8_t *pdu = calloc(1, 64 + 65536);
	int fd = dial_login(&lr), r;
	struct rblk_rsp rsp;

	if (fd < 0)
		return false;
	make_cmd(pdu, RBLK_OP_WRITE, 0, 2, lr.size / 2, 65536, 65536);
	rblk_send_all(fd, pdu, 64 + 1000);	/* payload cut short, then gone */
	r = read_rsp(fd, &rsp, 500);
	show(r, &rsp);
	close(fd);
	free(pdu);
	return r == -1;
}

/*
 * A WRITE whose payload is cut short by FIN was never received: nothing is
 * written and nothing answers it (REMOTE_ACCESS would name an RDMA fault
 * that did not happen), while a FLUSH received whole before it is still
 * answered; then the target closes.
 */
static bool case_write_fin(void)
{
	const uint32_t len = 65536;
	uint8_t *before = malloc(len), *after = malloc(len);
	uint8_t *pdu = malloc(64 + len);
	struct rblk_login_rsp lr;
	struct rblk_rsp rsp;
	int fd = -1, rd = dial_login(&lr), r, flushed = 0, other = 0;
	uint64_t off;
	bool ok = false;

	if (rd < 0)
		goto out;
	off = lr.size / 2 + (1u << 20);
	if (!read_into(rd, 1, off, len, before))
		goto out;
	fd = dial_login(&lr);
	if (fd < 0)
		goto out;
	make_cmd(pdu, RBLK_OP_FLUSH, 0, 3, 0, 0, 0);
	rblk_send_all(fd, pdu, 64);
	make_cmd(pdu, RBLK_OP_WRITE, 0, 4, off, len, len);
	for (uint32_t i = 0; i < len; i++)
		pdu[64 + i] = (uint8_t)~before[i];	/* differs everywhere */
	rblk_send_all(fd, pdu, 64 + 1000);
	shutdown(fd, SHUT_WR);
	printf("  FLUSH, then a WRITE cut short by FIN:\n");
	/* generous: the FLUSH goes to the disk of a possibly loaded host */
	while ((r = read_rsp(fd, &rsp, 10000)) == 1) {
		show(r, &rsp);
		if (rsp.tag == 3 && rsp.status == RBLK_S_OK)
			flushed++;
		else
			other++;
	}
	show(r, &rsp);
	if (r != 0 || flushed != 1 || other) {
		printf("  want: the FLUSH answered OK, nothing for the WRITE, closed\n");
		goto out;
	}
	if (!read_into(rd, 2, off, len, after))
		goto out;
	ok = !memcmp(before, after, len);
	printf("  volume: %s\n", ok ? "unchanged" : "CHANGED by the cut WRITE");
out:
	if (fd >= 0)
		close(fd);
	if (rd >= 0)
		close(rd);
	free(before);
	free(after);
	free(pdu);
	return ok;
}

static bool case_oversized(void)
{
	struct rblk_login_rsp lr;
	uint8_t cmd[64];
	int fd = dial_login(&lr);
	bool ok;

	if (fd < 0)
		return false;
	make_cmd(cmd, RBLK_OP_WRITE, 0, 1, 0, 4096, 0);
	memcpy(cmd + 4, &(uint32_t){ htole32(0xfffffff0u) }, 4);
	rblk_send_all(fd, cmd, sizeof(cmd));
	/* [V5]: closed before reading the body */
	ok = expect_fatal(fd, RBLK_S_TOO_LARGE, AWAIT_RSP);
	close(fd);
	return ok;
}

/*
 * [V5] The largest PDU is 64 + 16 x max_sge + max_io: one of exactly that
 * size is read (a READ with inline data, refused INVALID_FIELD, its bytes
 * skipped) and the connection stays; one byte more closes it before the
 * body is read.
 */
static bool case_max_pdu(void)
{
	const uint32_t max = 64 + 16 * RBLK_MAX_SGE + RBLK_MAX_IO_SIZE;
	struct rblk_login_rsp lr;
	uint8_t *pdu = calloc(1, max);
	int fd = dial_login(&lr);
	bool ok;

	if (fd < 0) {
		free(pdu);
		return false;
	}
	make_cmd(pdu, RBLK_OP_READ, 0, 1, 0, 4096, max - 64);
	printf("  READ of %u bytes, the largest PDU:\n", max);
	ok = !rblk_send_all(fd, pdu, max) && expect_status(fd, RBLK_S_INVALID_FIELD, 1) &&
	     still_serves(fd, 2);
	close(fd);
	if (ok)
		fd = dial_login(&lr);
	if (ok && fd >= 0) {
		make_cmd(pdu, RBLK_OP_WRITE, 0, 1, 0, 4096, max + 1 - 64);
		printf("  a PDU of %u bytes (only its capsule sent):\n", max + 1);
		rblk_send_all(fd, pdu, 64);
		ok = expect_fatal(fd, RBLK_S_TOO_LARGE, AWAIT_RSP);
		close(fd);
	}
	free(pdu);
	return ok && fd >= 0;
}

static bool simple_status(uint8_t op, uint8_t flags, uint32_t tag, uint64_t off,
			  uint32_t len, uint32_t inl, int want, int64_t want_tag,
			  void (*mangle)(uint8_t *cmd), bool follow_up)
{
	struct rblk_login_rsp lr;
	uint8_t *pdu = calloc(1, 64 + inl);
	int fd = dial_login(&lr);
	bool ok;

	if (fd < 0) {
		free(pdu);
		return false;
	}
	if (off == UINT64_MAX - 1)
		off = lr.size;			/* "at the end" */
	else if (off == UINT64_MAX - 2)
		off = lr.size - 512;		/* "straddles the end" */
	if (tag == UINT32_MAX - 1)
		tag = lr.queue_depth;		/* first invalid tag */
	if (want_tag == -2)
		want_tag = tag;
	make_cmd(pdu, op, flags, tag, off, len, inl);
	if (mangle)
		mangle(pdu);
	rblk_send_all(fd, pdu, 64 + inl);
	ok = expect_status(fd, want, want_tag);
	if (ok && follow_up)
		ok = still_serves(fd, 0);
	close(fd);
	free(pdu);
	return ok;
}

static bool case_out_of_range(void)
{
	return simple_status(RBLK_OP_READ, 0, 3, UINT64_MAX - 1, 4096, 0,
			     RBLK_S_OUT_OF_RANGE, -2, NULL, true) &&
	       simple_status(RBLK_OP_READ, 0, 3, UINT64_MAX - 511, 512, 0,
			     RBLK_S_OUT_OF_RANGE, -2, NULL, true);
}

static bool case_beyond_end(void)
{
	/* Straddling writes carry their payload: it must be skipped. */
	return simple_status(RBLK_OP_READ, 0, 4, UINT64_MAX - 2, 1024, 0,
			     RBLK_S_OUT_OF_RANGE, -2, NULL, true) &&
	       simple_status(RBLK_OP_WRITE, 0, 4, UINT64_MAX - 2, 8192, 8192,
			     RBLK_S_OUT_OF_RANGE, -2, NULL, true);
}

static bool case_misaligned(void)
{
	return simple_status(RBLK_OP_READ, 0, 1, 100, 4096, 0,
			     RBLK_S_MISALIGNED, -2, NULL, true);
}

static void set_version(uint8_t *c) { c[1] = RBLK_PROTO_VERSION + 1; }
static void set_hdr_rsvd(uint8_t *c) { c[2] = 1; }
static void set_rsvd0(uint8_t *c) { c[28] = 1; }
static void set_rsvd(uint8_t *c) { c[40] = 0x80; }
static void set_opcode(uint8_t *c) { c[8] = 9; }
static void set_nsge(uint8_t *c) { c[10] = 0xff; c[11] = 0xff; }

static bool case_bad_opcode(void)
{
	return simple_status(RBLK_OP_READ, 0, 5, 0, 4096, 0,
			     RBLK_S_INVALID_OPCODE, -2, set_opcode, true);
}

static bool case_reserved(void)
{
	return simple_status(RBLK_OP_READ, 0, 6, 0, 4096, 0,
			     RBLK_S_INVALID_FIELD, -2, set_rsvd0, true) &&
	       simple_status(RBLK_OP_READ, 0, 6, 0, 4096, 0,
			     RBLK_S_INVALID_FIELD, -2, set_rsvd, true) &&
	       /* FUA on a READ is a flag not allowed for the opcode */
	       simple_status(RBLK_OP_READ, RBLK_CMD_F_FUA, 6, 0, 4096, 0,
			     RBLK_S_INVALID_FIELD, -2, NULL, true) &&
	       simple_status(RBLK_OP_WRITE, 0x80, 6, 0, 512, 512,
			     RBLK_S_INVALID_FIELD, -2, NULL, true);
}

static bool case_bad_tag(void)
{
	return simple_status(RBLK_OP_READ, 0, UINT32_MAX - 1, 0, 4096, 0,
			     RBLK_S_BAD_TAG, -2, NULL, true) &&
	       simple_status(RBLK_OP_FLUSH, 0, 0xdeadbeef, 0, 0, 0,
			     RBLK_S_BAD_TAG, 0xdeadbeef, NULL, true);
}

static bool case_huge_nsge(void)
{
	return simple_status(RBLK_OP_READ, 0, 7, 0, 4096, 0,
			     RBLK_S_TOO_LARGE, -2, set_nsge, true);
}

static bool case_write_no_data(void)
{
	/* [V24]: on TCP a WRITE must carry its data in-band */
	return simple_status(RBLK_OP_WRITE, 0, 1, 0, 4096, 0,
			     RBLK_S_INVALID_FIELD, -2, NULL, true);
}

static bool case_too_large_io(void)
{
	return simple_status(RBLK_OP_READ, 0, 1, 0, RBLK_MAX_IO_SIZE + 512, 0,
			     RBLK_S_TOO_LARGE, -2, NULL, true);
}

/* A READ mangled by mangle, before or after LOGIN: told want, closed. */
static bool closes_after(void (*mangle)(uint8_t *cmd), bool do_login, int want)
{
	struct rblk_login_rsp lr;
	uint8_t cmd[64];
	int fd = do_login ? dial_login(&lr) : dial();
	bool ok;

	if (fd < 0)
		return false;
	make_cmd(cmd, RBLK_OP_READ, 0, 1, 0, 4096, 0);
	if (mangle)
		mangle(cmd);
	rblk_send_all(fd, cmd, sizeof(cmd));
	ok = expect_fatal(fd, want, do_login ? AWAIT_RSP : AWAIT_LOGIN_RSP);
	close(fd);
	return ok;
}

/* [V1] before LOGIN too: a DISCOVER of another version gets a DISCOVER_RSP */
static bool discover_bad_version(void)
{
	uint8_t pdu[sizeof(struct rblk_wire_discover)];
	int fd = dial();
	bool ok;

	if (fd < 0)
		return false;
	rblk_encode_discover(pdu, "hostile");
	set_version(pdu);
	rblk_send_all(fd, pdu, sizeof(pdu));
	ok = expect_fatal(fd, RBLK_S_BAD_VERSION, AWAIT_DISCOVER_RSP);
	close(fd);
	return ok;
}

static bool case_bad_version(void)
{
	return closes_after(set_version, true, RBLK_S_BAD_VERSION) &&
	       closes_after(set_version, false, RBLK_S_BAD_VERSION) &&
	       discover_bad_version();
}

static bool case_hdr_reserved(void)
{
	return closes_after(set_hdr_rsvd, true, RBLK_S_INVALID_FIELD) &&
	       closes_after(set_hdr_rsvd, false, RBLK_S_INVALID_FIELD);
}

static bool case_cmd_before_login(void)
{
	return closes_after(NULL, false, RBLK_S_NOT_LOGGED_IN);
}

static bool case_wrong_type(void)
{
	struct rblk_login_rsp lr;
	struct rblk_rsp rsp = { .tag = 1 };
	uint8_t pdu[64];
	int fd = dial_login(&lr);
	bool ok;

	if (fd < 0)
		return false;
	/* a RSP sent to the target */
	rblk_send_all(fd, pdu, rblk_encode_rsp(pdu, &rsp, 0));
	ok = expect_fatal(fd, RBLK_S_INVALID_OPCODE, AWAIT_RSP);
	close(fd);
	return ok;
}

static bool case_second_login(void)
{
	struct rblk_login_rsp lr;
	struct rblk_login l = { .queue_depth = 4 };
	uint8_t pdu[sizeof(struct rblk_wire_login)];
	int fd = dial_login(&lr);
	bool ok;

	if (fd < 0)
		return false;
	snprintf(l.volume, sizeof(l.volume), "%s", g_vol);
	snprintf(l.host, sizeof(l.host), "hostile");
	rblk_send_all(fd, pdu, rblk_encode_login(pdu, &l));
	ok = expect_closed(fd);
	close(fd);
	return ok;
}

static bool login_refused(const char *vol, void (*mangle)(uint8_t *), int want)
{
	struct rblk_login l = { .queue_depth = 4 };
	uint8_t pdu[sizeof(struct rblk_wire_login)];
	uint8_t buf[sizeof(struct rblk_wire_login_rsp)];
	struct rblk_login_rsp rsp;
	int fd = dial(), r;
	bool ok;

	if (fd < 0)
		return false;
	snprintf(l.volume, sizeof(l.volume), "%s", vol);
	snprintf(l.host, sizeof(l.host), "hostile");
	rblk_encode_login(pdu, &l);
	if (mangle)
		mangle(pdu);
	rblk_send_all(fd, pdu, sizeof(pdu));
	r = recv_exact(fd, buf, sizeof(buf), 3000);
	if (r == 1 && rblk_decode_login_rsp(buf, sizeof(buf), &rsp) == RBLK_S_OK) {
		printf("  got: LOGIN_RSP %s\n", rblk_status_str(rsp.status));
		ok = rsp.status == want && expect_closed(fd);
	} else {
		printf("  got: %s\n", r == 0 ? "closed" : "no/garbled LOGIN_RSP");
		ok = false;
	}
	close(fd);
	return ok;
}

static void bad_magic(uint8_t *p) { p[8] ^= 0xff; }
static void bad_name(uint8_t *p) { memset(p + 24, 'x', RBLK_NAME_MAX); }
static void zero_depth(uint8_t *p) { p[14] = p[15] = 0; }
/* [V32]: "vol0\0...junk" must not log in to vol0 (nor host "hostile") */
static void volume_junk(uint8_t *p) { memcpy(p + 24 + 60, "junk", 4); }
static void host_junk(uint8_t *p) { memcpy(p + 88 + 60, "junk", 4); }

static bool case_login_bad(void)
{
	return login_refused("no-such-volume", NULL, RBLK_S_NO_SUCH_VOLUME) &&
	       login_refused(g_vol, bad_magic, RBLK_S_INVALID_FIELD) &&
	       login_refused(g_vol, bad_name, RBLK_S_INVALID_FIELD) &&
	       login_refused(g_vol, zero_depth, RBLK_S_INVALID_FIELD) &&
	       login_refused(g_vol, volume_junk, RBLK_S_INVALID_FIELD) &&
	       login_refused(g_vol, host_junk, RBLK_S_INVALID_FIELD);
}

static bool case_ctrl_too_long(void)
{
	struct rblk_login l = { .queue_depth = 4 };
	uint8_t pdu[sizeof(struct rblk_wire_login)];
	int fd = dial();
	bool ok;

	if (fd < 0)
		return false;
	snprintf(l.volume, sizeof(l.volume), "%s", g_vol);
	snprintf(l.host, sizeof(l.host), "hostile");
	rblk_encode_login(pdu, &l);
	memcpy(pdu + 4, &(uint32_t){ htole32(1u << 20) }, 4);
	rblk_send_all(fd, pdu, sizeof(pdu));
	ok = expect_fatal(fd, RBLK_S_TOO_LARGE, AWAIT_LOGIN_RSP);
	close(fd);
	return ok;
}

static bool case_dup_tag(void)
{
	struct rblk_login_rsp lr;
	uint8_t two[128];
	struct rblk_rsp rsp;
	int fd = dial_login(&lr), r, got_ok = 0, got_bad = 0;

	if (fd < 0)
		return false;
	/* Two 1 MiB READs with tag 5 in one segment: the second is parsed
	 * while the first is still at the disk. */
	make_cmd(two, RBLK_OP_READ, 0, 5, 0, 1u << 20, 0);
	make_cmd(two + 64, RBLK_OP_READ, 0, 5, 1u << 20, 1u << 20, 0);
	rblk_send_all(fd, two, sizeof(two));
	for (int i = 0; i < 2; i++) {
		r = read_rsp(fd, &rsp, 3000);
		show(r, &rsp);
		if (r != 1 || rsp.tag != 5)
			break;
		got_ok += rsp.status == RBLK_S_OK;
		got_bad += rsp.status == RBLK_S_BAD_TAG;
	}
	r = got_ok == 1 && got_bad == 1 && still_serves(fd, 0);
	close(fd);
	return r;
}

static bool case_garbage(void)
{
	uint8_t *junk = malloc(g_garbage_bytes);
	bool ok;
	int fd;

	srand(g_seed);
	for (unsigned i = 0; i < g_garbage_bytes; i++)
		junk[i] = rand();
	if (g_garbage_bytes > 1)
		junk[1] = 0x77;	/* never a valid version */
	fd = dial();
	if (fd < 0) {
		free(junk);
		return false;
	}
	rblk_send_all(fd, junk, g_garbage_bytes);
	if (g_garbage_bytes < sizeof(struct rblk_wire_hdr)) {
		/* Not even a header yet: the target must wait for more. */
		ok = !wait_closed(fd, 500);
		printf("  got: %s\n", ok ? "nothing (waiting for a header)" : "closed");
	} else {
		ok = expect_closed(fd);
	}
	close(fd);
	free(junk);
	return ok;
}

static bool case_idle_no_login(void)
{
	/* Connect, send half a header, then nothing: the target must drop
	 * the connection by itself (login timeout). */
	uint8_t half[4] = { RBLK_PDU_LOGIN, RBLK_PROTO_VERSION, 0, 0 };
	int fd = dial();
	bool closed;

	if (fd < 0)
		return false;
	rblk_send_all(fd, half, sizeof(half));
	closed = wait_closed(fd, g_idle * 1000);
	printf("  got: %s\n", closed ? "closed" : "still open");
	close(fd);
	return closed;
}

static bool case_discover(void)
{
	uint8_t pdu[sizeof(struct rblk_wire_discover)], hdr[sizeof(struct rblk_wire_discover_rsp)];
	uint8_t ent[sizeof(struct rblk_wire_discover_entry)], cmd[64];
	struct rblk_discover_entry e;
	uint16_t st, count;
	int fd = dial(), found = 0;
	bool ok;

	if (fd < 0)
		return false;
	rblk_send_all(fd, pdu, rblk_encode_discover(pdu, "hostile"));
	/* a command pipelined behind DISCOVER must not be executed */
	rblk_send_all(fd, cmd, make_cmd(cmd, RBLK_OP_FLUSH, 0, 0, 0, 0, 0));
	if (recv_exact(fd, hdr, sizeof(hdr), 3000) != 1 ||
	    rblk_decode_discover_rsp(hdr, sizeof(hdr), &st, &count, NULL) != RBLK_S_OK) {
		printf("  got: no/garbled DISCOVER_RSP\n");
		close(fd);
		return false;
	}
	for (unsigned i = 0; i < count; i++) {
		if (recv_exact(fd, ent, sizeof(ent), 3000) != 1 ||
		    rblk_decode_discover_entry(ent, &e) != RBLK_S_OK)
			break;
		found += !strcmp(e.volume, g_vol);
	}
	printf("  got: DISCOVER_RSP %s, %u volume(s), %s listed\n",
	       rblk_status_str(st), count, found ? g_vol : "not");
	ok = st == RBLK_S_OK && found == 1 && expect_closed(fd);
	close(fd);
	return ok;
}

/* Not in "all": needs a fault volume failing reads at --offset. */
static bool case_io_error(void)
{
	return simple_status(RBLK_OP_READ, 0, 2, g_offset, 4096, 0,
			     RBLK_S_IO_ERROR, -2, NULL, true) &&
	       simple_status(RBLK_OP_WRITE, RBLK_CMD_F_FUA, 3, g_offset, 4096,
			     4096, RBLK_S_IO_ERROR, -2, NULL, true) &&
	       /* next to the fault everything works */
	       simple_status(RBLK_OP_READ, 0, 2, g_offset ? 0 : 1u << 20,
			     4096, 0, RBLK_S_OK, -2, NULL, true);
}

/* READ into buf; true when answered OK with exactly len bytes. */
static bool read_into(int fd, uint32_t tag, uint64_t off, uint32_t len,
		      uint8_t *buf)
{
	uint8_t cmd[64], hdr[sizeof(struct rblk_wire_rsp)];
	struct rblk_rsp rsp;

	rblk_send_all(fd, cmd, make_cmd(cmd, RBLK_OP_READ, 0, tag, off, len, 0));
	if (recv_exact(fd, hdr, sizeof(hdr), 3000) != 1 ||
	    rblk_decode_rsp(hdr, sizeof(hdr), &rsp) != RBLK_S_OK ||
	    rsp.status != RBLK_S_OK || rsp.value != len)
		return false;
	return recv_exact(fd, buf, len, 3000) == 1;
}

/*
 * WRITE_ZEROES (and DISCARD when offered) in the last MiB of the volume
 * reads back as zeroes while the data around it stays.
 */
static bool zero_op(uint8_t op)
{
	const uint32_t len = 65536;
	struct rblk_login_rsp lr;
	uint8_t *pdu = malloc(64 + 3 * len), *back = malloc(3 * len);
	uint64_t base;
	bool ok = false;
	int fd = dial_login(&lr);

	if (fd < 0)
		goto out;
	base = lr.size - (1u << 20);
	for (uint32_t i = 0; i < 3 * len; i++)
		pdu[64 + i] = (uint8_t)(i * 7 + 1);
	rblk_send_all(fd, pdu, make_cmd(pdu, RBLK_OP_WRITE, 0, 1, base, 3 * len, 3 * len));
	rblk_send_all(fd, pdu + 64, 3 * len);
	if (!expect_status(fd, RBLK_S_OK, 1))
		goto out;
	rblk_send_all(fd, pdu, make_cmd(pdu, op, 0, 2, base + len, len, 0));
	if (!expect_status(fd, RBLK_S_OK, 2))
		goto out;
	if (!read_into(fd, 3, base, 3 * len, back)) {
		printf("  read back failed\n");
		goto out;
	}
	ok = !memcmp(back, pdu + 64, len) &&
	     !memcmp(back + 2 * len, pdu + 64 + 2 * len, len);
	for (uint32_t i = 0; ok && i < len; i++)
		ok = back[len + i] == 0;
	printf("  read back: %s\n", ok ? "zeroes where cleared, data around it intact"
				      : "WRONG DATA");
out:
	if (fd >= 0)
		close(fd);
	free(pdu);
	free(back);
	return ok;
}

static bool case_write_zeroes(void)
{
	return zero_op(RBLK_OP_WRITE_ZEROES);
}

static bool case_discard(void)
{
	struct rblk_login_rsp lr;
	int fd = dial_login(&lr);

	if (fd < 0)
		return false;
	close(fd);
	if (!(lr.vol_flags & RBLK_VOL_F_DISCARD)) {
		printf("  volume does not offer DISCARD: expecting NOT_SUPPORTED\n");
		return simple_status(RBLK_OP_DISCARD, 0, 1, 0, 4096, 0,
				     RBLK_S_NOT_SUPPORTED, -2, NULL, true);
	}
	return zero_op(RBLK_OP_DISCARD);
}

/*
 * [V34] DISCARD / WRITE_ZEROES longer than the LOGIN_RSP limit (by one
 * block, and the 4 GiB - 512 the length field allows): TOO_LARGE on the
 * command's tag, ahead of the range check, and the connection serves on.
 */
static bool case_range_too_large(void)
{
	static const struct { uint8_t op; uint32_t flag; const char *name; } ops[] = {
		{ RBLK_OP_DISCARD, RBLK_VOL_F_DISCARD, "DISCARD" },
		{ RBLK_OP_WRITE_ZEROES, RBLK_VOL_F_WRITE_ZEROES, "WRITE_ZEROES" },
	};
	struct rblk_login_rsp lr;
	uint8_t cmd[64];
	uint32_t tag = 1;
	bool ok = true;
	int fd = dial_login(&lr);

	if (fd < 0)
		return false;
	printf("  limits: max_discard %u, max_write_zeroes %u\n",
	       lr.max_discard, lr.max_write_zeroes);
	for (unsigned i = 0; ok && i < 2; i++) {
		uint32_t max = ops[i].op == RBLK_OP_DISCARD ? lr.max_discard
							    : lr.max_write_zeroes;
		uint32_t lens[2] = { max + lr.block_size, 0xfffffe00u };

		if (!(lr.vol_flags & ops[i].flag)) {
			printf("  %s not offered, limit must be 0\n", ops[i].name);
			ok = max == 0;
			continue;
		}
		for (unsigned j = 0; ok && j < 2; j++, tag++) {
			printf("  %s of %u bytes:\n", ops[i].name, lens[j]);
			rblk_send_all(fd, cmd, make_cmd(cmd, ops[i].op, 0, tag, 0, lens[j], 0));
			ok = expect_status(fd, RBLK_S_TOO_LARGE, tag);
		}
		/* one block in the last MiB (hostile space) still works */
		if (ok) {
			printf("  %s of one block:\n", ops[i].name);
			rblk_send_all(fd, cmd, make_cmd(cmd, ops[i].op, 0, tag,
						   lr.size - lr.block_size,
						   lr.block_size, 0));
			ok = expect_status(fd, RBLK_S_OK, tag);
			tag++;
		}
	}
	ok = ok && still_serves(fd, tag);
	close(fd);
	return ok;
}

static bool case_garbage_after_login(void)
{
	struct rblk_login_rsp lr;
	uint8_t *junk = malloc(g_garbage_bytes);
	int fd = dial_login(&lr);
	bool ok;

	if (fd < 0) {
		free(junk);
		return false;
	}
	srand(g_seed + 1);
	for (unsigned i = 0; i < g_garbage_bytes; i++)
		junk[i] = rand();
	if (g_garbage_bytes > 1)
		junk[1] = 0;	/* version 0: bad */
	rblk_send_all(fd, junk, g_garbage_bytes);
	ok = expect_closed(fd);
	close(fd);
	free(junk);
	return ok;
}

static bool case_flood_no_read(void)
{
	/* Many bad commands while never reading: the target must bound
	 * what it queues and not stall others (checked by the caller's
	 * good client); we then read everything back. */
	struct rblk_login_rsp lr;
	uint8_t cmd[64];
	struct rblk_rsp rsp;
	int fd = dial_login(&lr), r, n = 0;

	if (fd < 0)
		return false;
	make_cmd(cmd, RBLK_OP_READ, 0, 1, 100, 4096, 0);	/* misaligned */
	for (int i = 0; i < 20000; i++)
		if (rblk_send_all(fd, cmd, sizeof(cmd)))
			break;
	while ((r = read_rsp(fd, &rsp, 2000)) == 1 &&
	       rsp.status == RBLK_S_MISALIGNED)
		n++;
	printf("  got: %d MISALIGNED answers\n", n);
	close(fd);
	return n == 20000;
}

/*
 * A READ with k (1..7) bytes of inline data and a valid READ in one send:
 * the second PDU starts at an odd offset of the target's receive buffer.
 * The first is refused INVALID_FIELD [V23], the second must be served.
 */
static bool case_unaligned(void)
{
	struct rblk_login_rsp lr;
	uint8_t two[64 + 7 + 64];
	int fd = dial_login(&lr);
	bool ok = fd >= 0;

	for (unsigned k = 1; ok && k <= 7; k++) {
		struct rblk_rsp rsp;
		int got_bad = 0, got_ok = 0;

		memset(two, 0xa5, sizeof(two));
		make_cmd(two, RBLK_OP_READ, 0, 1, 0, 512, k);
		make_cmd(two + 64 + k, RBLK_OP_READ, 0, 2, 4096, 4096, 0);
		printf("  READ with %u inline byte(s), then a READ at offset %u:\n",
		       k, 64 + k);
		if (rblk_send_all(fd, two, 64 + k + 64))
			ok = false;
		for (int i = 0; ok && i < 2; i++) {
			int r = read_rsp(fd, &rsp, 3000);

			show(r, &rsp);
			if (r != 1)
				ok = false;
			else if (rsp.tag == 1 && rsp.status == RBLK_S_INVALID_FIELD)
				got_bad++;
			else if (rsp.tag == 2 && rsp.status == RBLK_S_OK &&
				 rsp.value == 4096)
				got_ok++;
		}
		ok = ok && got_bad == 1 && got_ok == 1;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * Holds fds for g_idle seconds without reading a byte and reports which
 * ones the target closed (POLLRDHUP sees the FIN behind unread data) and
 * after how long.  Returns how many were closed.
 */
static unsigned hold_unread(int *fds, unsigned n)
{
	struct pollfd *p = calloc(n, sizeof(*p));
	struct timespec t0, t;
	unsigned closed = 0;
	double first = -1, last = -1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < n; i++) {
		p[i].fd = fds[i];
		p[i].events = POLLRDHUP;
	}
	for (;;) {
		double el;
		int left;

		clock_gettime(CLOCK_MONOTONIC, &t);
		el = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
		left = (int)((g_idle - el) * 1000);
		if (closed == n || left <= 0)
			break;
		if (poll(p, n, left > 200 ? 200 : left) < 0 && errno != EINTR)
			break;
		for (unsigned i = 0; i < n; i++) {
			if (p[i].fd < 0 || !(p[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
				continue;
			p[i].fd = -1;	/* poll ignores it from now on */
			closed++;
			if (first < 0)
				first = el;
			last = el;
		}
	}
	printf("  %u of %u connection(s) closed by the target", closed, n);
	if (closed)
		printf(" (first after %.1f s, last after %.1f s)", first, last);
	printf("\n");
	free(p);
	return closed;
}

/*
 * A 1 MiB WRITE whose data comes in pieces with pauses (1 byte, 3000
 * bytes, 100 KiB, 300 KiB, the rest): the target grows the WRITE's chunk
 * as the bytes come (copying what it had), and must write exactly what
 * was sent.  Read back and compared.
 */
static bool case_trickle_write(void)
{
	const uint32_t len = 1u << 20;
	const uint32_t piece[] = { 1, 3000, 100 << 10, 300 << 10, len };
	uint8_t *pdu = malloc(64 + len), *back = malloc(len);
	struct rblk_login_rsp lr;
	int fd = dial_login(&lr);
	uint32_t sent = 0;
	uint64_t off;
	bool ok = false;

	if (fd < 0)
		goto out;
	off = lr.size / 2 + (4u << 20);
	make_cmd(pdu, RBLK_OP_WRITE, 0, 5, off, len, len);
	srand(g_seed + 7);
	for (uint32_t i = 0; i < len; i++)
		pdu[64 + i] = rand();
	rblk_send_all(fd, pdu, 64);
	for (unsigned i = 0; sent < len; i++) {
		uint32_t n = piece[i] < len - sent ? piece[i] : len - sent;

		rblk_send_all(fd, pdu + 64 + sent, n);
		sent += n;
		usleep(50000);
	}
	printf("  1 MiB WRITE sent in pieces:\n");
	if (!expect_status(fd, RBLK_S_OK, 5) || !read_into(fd, 6, off, len, back))
		goto out;
	ok = !memcmp(back, pdu + 64, len);
	printf("  read back: %s\n", ok ? "the same" : "DIFFERENT");
out:
	if (fd >= 0)
		close(fd);
	free(pdu);
	free(back);
	return ok;
}

static void close_all(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
}

/* Sessions that send 32 READs of 1 MiB each and never read an answer. */
static bool case_no_read(void)
{
	unsigned n = g_conns ? g_conns : 4, sent = 0;
	int *fds = calloc(n, sizeof(*fds));
	struct rblk_login_rsp lr;
	uint8_t cmd[64];

	for (unsigned i = 0; i < n; i++) {
		fds[i] = dial_login_depth(32, &lr);
		if (fds[i] < 0) {
			n = i;
			break;
		}
		for (uint32_t tag = 0; tag < lr.queue_depth && tag < 32; tag++) {
			uint64_t off = ((uint64_t)(i * 32 + tag) << 20) % lr.size;

			make_cmd(cmd, RBLK_OP_READ, 0, tag, off, 1u << 20, 0);
			if (rblk_send_all(fds[i], cmd, sizeof(cmd)))
				break;
			sent++;
		}
	}
	printf("  %u session(s), %u READs of 1 MiB sent; never reading\n", n, sent);
	fflush(stdout);
	hold_unread(fds, n);
	close_all(fds, n);
	return n > 0;
}

/*
 * A session that sends 32 READs of 1 MiB and reads the answers slowly
 * but steadily (64 KiB every 50 ms, 1.25 MiB/s) for --idle seconds:
 * answers that move, however slowly, must not be taken for a client
 * that stopped reading.  Fails if the target closes it.
 */
static bool case_slow_read(void)
{
	struct rblk_login_rsp lr;
	struct timespec t0, t;
	uint8_t cmd[64], *buf = malloc(65536);
	size_t got = 0;
	int fd = dial_login_depth(32, &lr);
	bool ok = true;

	if (fd < 0) {
		free(buf);
		return false;
	}
	for (uint32_t tag = 0; tag < lr.queue_depth && tag < 32; tag++) {
		make_cmd(cmd, RBLK_OP_READ, 0, tag, (uint64_t)tag << 20, 1u << 20, 0);
		rblk_send_all(fd, cmd, sizeof(cmd));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ssize_t n = recv(fd, buf, 65536, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			ok = false;
			break;
		}
		if (n > 0)
			got += (size_t)n;
		usleep(50000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < (time_t)g_idle);
	printf("  read %zu KiB of answers slowly in %u s: %s\n", got >> 10, g_idle,
	       ok ? "still open" : "CLOSED by the target");
	close(fd);
	free(buf);
	return ok && got > 0;
}

/* Sessions that send 32 WRITEs of 1 MiB (data and all, as far as the
 * target reads it within a second) and never read an answer. */
static bool case_write_no_read(void)
{
	const uint32_t len = 1u << 20;
	unsigned n = g_conns ? g_conns : 16;
	int *fds = calloc(n, sizeof(*fds));
	size_t pdu_len = 64 + len, *off = calloc(n, sizeof(*off)), total = 0;
	uint8_t *pdu = malloc(pdu_len);
	struct rblk_login_rsp lr;
	struct timespec t0, t;

	memset(pdu, 0xab, pdu_len);
	for (unsigned i = 0; i < n; i++) {
		fds[i] = dial_login_depth(32, &lr);
		if (fds[i] < 0) {
			n = i;
			break;
		}
	}
	/* Round robin, never blocking: off[i] counts bytes of 32 PDUs. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		bool moved = false;

		for (unsigned i = 0; i < n; i++) {
			size_t in_pdu = off[i] % pdu_len;
			uint32_t tag = off[i] / pdu_len;
			ssize_t k;

			if (tag >= 32 || tag >= lr.queue_depth)
				continue;
			if (!in_pdu)
				make_cmd(pdu, RBLK_OP_WRITE, 0, tag,
					 ((uint64_t)tag << 20) % lr.size, len, len);
			k = send(fds[i], pdu + in_pdu, pdu_len - in_pdu,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k > 0) {
				off[i] += k;
				total += k;
				moved = true;
			}
		}
		if (!moved)
			usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 2);
	printf("  %u session(s), %zu MiB of 1 MiB WRITEs sent; never reading\n",
	       n, total >> 20);
	fflush(stdout);
	hold_unread(fds, n);
	close_all(fds, n);
	free(off);
	free(pdu);
	return n > 0;
}

/* Sessions that each announce a 1 MiB WRITE and send 1 byte of it. */
static bool case_silent_write(void)
{
	unsigned n = g_conns ? g_conns : 32;
	int *fds = calloc(n, sizeof(*fds));
	struct rblk_login_rsp lr;
	uint8_t pdu[65];

	for (unsigned i = 0; i < n; i++) {
		fds[i] = dial_login(&lr);
		if (fds[i] < 0) {
			n = i;
			break;
		}
		make_cmd(pdu, RBLK_OP_WRITE, 0, 1, lr.size / 2, 1u << 20, 1u << 20);
		pdu[64] = 0xee;
		rblk_send_all(fds[i], pdu, sizeof(pdu));	/* 65 bytes of 1 MiB + 64 */
	}
	printf("  %u session(s), each a WRITE of 1 MiB with 1 byte sent\n", n);
	fflush(stdout);
	hold_unread(fds, n);
	close_all(fds, n);
	return n > 0;
}

/* ---- whole answers up to the close (errors that close a connection) ---- */

/*
 * Like recv_exact, but tells a clean close (FIN: 0) from a reset
 * (-ECONNRESET); -1 on timeout.  slow: read in 16 KiB steps with a pause
 * between them, so that the target's answer waits in its socket.
 */
static int recv_all(int fd, void *buf, size_t len, int timeout_ms, bool slow)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		size_t step = slow && len > 16384 ? 16384 : len;
		ssize_t n;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -1;
		n = recv(fd, p, step, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ECONNRESET ? -ECONNRESET : -1;
		if (n == 0)
			return 0;
		p += n;
		len -= n;
		if (slow)
			usleep(2000);
	}
	return 1;
}

/*
 * The next PDU, whatever its type, into buf (cap bytes; the rest of a
 * longer one is read and dropped).  Returns its length with *type set, 0
 * when the target closed cleanly, -ECONNRESET when it reset the
 * connection, -1 on timeout or a broken header.
 */
static int read_pdu(int fd, uint8_t *buf, size_t cap, uint8_t *type,
		    int timeout_ms, bool slow)
{
	uint8_t junk[16384];
	uint32_t len, got;
	int r = recv_all(fd, buf, sizeof(struct rblk_wire_hdr), timeout_ms, false);

	if (r <= 0)
		return r;
	if (rblk_decode_hdr(buf, sizeof(struct rblk_wire_hdr), RBLK_MAX_PDU,
			    type, &len) != RBLK_S_OK)
		return -1;
	got = sizeof(struct rblk_wire_hdr);
	if (len > got) {
		uint32_t n = len < cap ? len : (uint32_t)cap;

		r = recv_all(fd, buf + got, n - got, timeout_ms, slow);
		if (r <= 0)
			return r;
		for (got = n; got < len; got += sizeof(junk) < len - got ?
						  sizeof(junk) : len - got) {
			r = recv_all(fd, junk, sizeof(junk) < len - got ?
				     sizeof(junk) : len - got, timeout_ms, slow);
			if (r <= 0)
				return r;
		}
	}
	return (int)len;
}

static const char *end_str(int r)
{
	return r == 0 ? "closed (FIN)" : r == -ECONNRESET ? "RESET" : "nothing (timeout)";
}

/*
 * A 1 MiB READ, then a header of an unknown type in the same send, then
 * 64 KiB more that the target never parses.  The target tells the peer
 * INVALID_OPCODE and closes, but only once the READ's answer is out
 * (docs/protocol.md, "Errors that close the connection"): the peer must
 * get the READ's whole data, then the status, then a clean close.  The
 * client reads slowly, so the answer is still in the target's socket when
 * it closes: a close with unread input resets the connection and throws
 * that away.
 */
static bool case_fatal_after_read(void)
{
	const uint32_t len = 1u << 20;
	uint8_t *buf = malloc(64 + len), two[72], *junk = calloc(1, 65536);
	bool ok = true;

	for (int i = 0; ok && i < 5; i++) {
		struct rblk_login_rsp lr;
		int fd = dial_login(&lr), r, got_read = 0, got_fatal = 0;
		uint8_t type;

		if (fd < 0) {
			ok = false;
			break;
		}
		make_cmd(two, RBLK_OP_READ, 0, 1, 0, len, 0);
		memset(two + 64, 0, 8);
		two[64] = 99;			/* no such PDU type */
		two[65] = RBLK_PROTO_VERSION;
		two[68] = 8;
		rblk_send_all(fd, two, sizeof(two));
		usleep(100000);
		/* The target stopped parsing; these bytes stay unread. */
		send(fd, junk, 65536, MSG_NOSIGNAL | MSG_DONTWAIT);
		usleep(200000);
		while ((r = read_pdu(fd, buf, 64 + len, &type, 5000, true)) > 0) {
			struct rblk_rsp rsp;

			if (type != RBLK_PDU_RSP ||
			    rblk_decode_rsp(buf, sizeof(struct rblk_wire_rsp), &rsp) != RBLK_S_OK) {
				printf("  got: PDU type %u\n", type);
				ok = false;
				continue;
			}
			show(1, &rsp);
			if (rsp.tag == 1 && rsp.status == RBLK_S_OK &&
			    (uint32_t)r == sizeof(struct rblk_wire_rsp) + len && !got_fatal)
				got_read++;
			else if (rsp.tag == RBLK_TAG_NONE &&
				 rsp.status == RBLK_S_INVALID_OPCODE && got_read)
				got_fatal++;
			else
				ok = false;
		}
		printf("  then: %s\n", end_str(r));
		if (got_read != 1 || got_fatal != 1 || r != 0) {
			printf("  want: the READ's answer with all its data, then the status, then a clean close\n");
			ok = false;
		}
		close(fd);
	}
	free(buf);
	free(junk);
	return ok;
}

/* Reads LOGIN_RSPs until the connection ends; their statuses in st[]. */
static int login_rsps(int fd, uint16_t *st, int max, int *end)
{
	uint8_t buf[sizeof(struct rblk_wire_login_rsp)];
	struct rblk_login_rsp lr;
	uint8_t type;
	int n = 0, r;

	while ((r = read_pdu(fd, buf, sizeof(buf), &type, 3000, false)) > 0) {
		if (type != RBLK_PDU_LOGIN_RSP ||
		    rblk_decode_login_rsp(buf, (size_t)r, &lr) != RBLK_S_OK) {
			printf("  got: PDU type %u\n", type);
			n = -1;
			break;
		}
		printf("  got: LOGIN_RSP %s\n", rblk_status_str(lr.status));
		if (n >= 0 && n < max)
			st[n] = lr.status;
		n++;
	}
	*end = r;
	printf("  then: %s\n", end_str(r));
	return n;
}

static size_t login_pdu(uint8_t *pdu, const char *vol)
{
	struct rblk_login l = { .queue_depth = 4 };

	snprintf(l.volume, sizeof(l.volume), "%s", vol);
	snprintf(l.host, sizeof(l.host), "hostile");
	return rblk_encode_login(pdu, &l);
}

/*
 * Every LOGIN the target reads gets a LOGIN_RSP: a second one on a logged
 * in connection (sent with the first, or later) is refused with
 * INVALID_OPCODE and the connection closes cleanly.  A LOGIN behind a
 * command sent before LOGIN is not read: the client gets the one
 * LOGIN_RSP (NOT_LOGGED_IN) it waits for, then a clean close.
 */
static bool case_login_twice(void)
{
	const size_t ll = sizeof(struct rblk_wire_login);
	uint8_t two[2 * sizeof(struct rblk_wire_login) + 64];
	uint16_t st[4];
	int fd, n, end;
	bool ok;

	printf("  LOGIN and LOGIN in one send:\n");
	login_pdu(two, g_vol);
	login_pdu(two + ll, g_vol);
	fd = dial();
	if (fd < 0)
		return false;
	rblk_send_all(fd, two, 2 * ll);
	n = login_rsps(fd, st, 4, &end);
	close(fd);
	ok = n == 2 && st[0] == RBLK_S_OK && st[1] == RBLK_S_INVALID_OPCODE && end == 0;

	printf("  LOGIN, then another 0.2 s later:\n");
	fd = dial();
	if (fd < 0)
		return false;
	rblk_send_all(fd, two, ll);
	usleep(200000);
	rblk_send_all(fd, two, ll);
	n = login_rsps(fd, st, 4, &end);
	close(fd);
	ok = ok && n == 2 && st[0] == RBLK_S_OK && st[1] == RBLK_S_INVALID_OPCODE &&
	     end == 0;

	printf("  a READ before LOGIN, and a LOGIN, in one send:\n");
	make_cmd(two, RBLK_OP_READ, 0, 1, 0, 4096, 0);
	login_pdu(two + 64, g_vol);
	fd = dial();
	if (fd < 0)
		return false;
	rblk_send_all(fd, two, 64 + ll);
	n = login_rsps(fd, st, 4, &end);
	close(fd);
	ok = ok && n == 1 && st[0] == RBLK_S_NOT_LOGGED_IN && end == 0;
	if (!ok)
		printf("  want: OK then INVALID_OPCODE (twice), NOT_LOGGED_IN alone, each followed by a clean close\n");
	return ok;
}

/*
 * [V33] A malformed KEEPALIVE (longer than 24 bytes, a status, a reserved
 * byte) is told INVALID_FIELD, and one before LOGIN NOT_LOGGED_IN, as
 * every framing error: then the connection closes.
 */
static bool bad_keepalive(void (*mangle)(uint8_t *ka, size_t *len), bool do_login,
			  int want)
{
	struct rblk_login_rsp lr;
	uint8_t ka[32] = { 0 };
	size_t len = rblk_encode_keepalive(ka, RBLK_PDU_KEEPALIVE, 0, 7, 0);
	int fd = do_login ? dial_login(&lr) : dial();
	bool ok;

	if (fd < 0)
		return false;
	if (mangle)
		mangle(ka, &len);
	rblk_send_all(fd, ka, len);
	ok = expect_fatal(fd, want, do_login ? AWAIT_RSP : AWAIT_LOGIN_RSP);
	close(fd);
	return ok;
}

static void ka_long(uint8_t *ka, size_t *len) { *len = 32; ka[4] = 32; }
static void ka_status(uint8_t *ka, size_t *len) { ka[8] = RBLK_S_IO_ERROR; }
static void ka_rsvd(uint8_t *ka, size_t *len) { ka[12] = 1; }

static bool case_bad_keepalive(void)
{
	return bad_keepalive(ka_long, true, RBLK_S_INVALID_FIELD) &&
	       bad_keepalive(ka_status, true, RBLK_S_INVALID_FIELD) &&
	       bad_keepalive(ka_rsvd, true, RBLK_S_INVALID_FIELD) &&
	       bad_keepalive(NULL, false, RBLK_S_NOT_LOGGED_IN);
}

/*
 * A command with tag 0xFFFFFFFF: its answer would read as a connection
 * error (RBLK_TAG_NONE), so it is one: told BAD_TAG for that tag, closed.
 */
static bool case_tag_none(void)
{
	struct rblk_login_rsp lr;
	uint8_t cmd[64];
	int fd = dial_login(&lr);
	bool ok;

	if (fd < 0)
		return false;
	rblk_send_all(fd, cmd, make_cmd(cmd, RBLK_OP_FLUSH, 0, RBLK_TAG_NONE, 0, 0, 0));
	ok = expect_fatal(fd, RBLK_S_BAD_TAG, AWAIT_RSP);
	close(fd);
	return ok;
}

/*
 * Not in "all": a challenge whose volume's secret is cleared (--exec)
 * before the answer comes.  The answer, with a MAC no secret made, must
 * be AUTH_FAILED: the challenge stays bound to the secret it was issued
 * under, and an OK after a challenge would have to carry a proof.
 */
static bool case_secret_cleared(void)
{
	uint8_t pdu[sizeof(struct rblk_wire_login)];
	uint8_t buf[sizeof(struct rblk_wire_login_rsp)];
	struct rblk_login l = { .queue_depth = 4 };
	struct rblk_login_rsp lr;
	int fd, rc;
	bool ok;

	if (!g_secret_vol || !g_exec) {
		printf("  needs --secret-vol VOLUME --exec CMD\n");
		return false;
	}
	fd = dial();
	if (fd < 0)
		return false;
	snprintf(l.volume, sizeof(l.volume), "%s", g_secret_vol);
	snprintf(l.host, sizeof(l.host), "hostile");
	rblk_send_all(fd, pdu, rblk_encode_login(pdu, &l));
	if (recv_exact(fd, buf, sizeof(buf), 3000) != 1 ||
	    rblk_decode_login_rsp(buf, sizeof(buf), &lr) != RBLK_S_OK ||
	    lr.status != RBLK_S_AUTH_REQUIRED) {
		printf("  got no AUTH_REQUIRED for %s\n", g_secret_vol);
		close(fd);
		return false;
	}
	printf("  challenged; running: %s\n", g_exec);
	fflush(stdout);
	rc = system(g_exec);
	if (rc != 0) {
		printf("  the command failed (%d)\n", rc);
		close(fd);
		return false;
	}
	memset(l.auth_mac, 0x11, sizeof(l.auth_mac));	/* no secret made it */
	memset(l.ini_nonce, 0x22, sizeof(l.ini_nonce));
	rblk_send_all(fd, pdu, rblk_encode_login(pdu, &l));
	ok = recv_exact(fd, buf, sizeof(buf), 3000) == 1 &&
	     rblk_decode_login_rsp(buf, sizeof(buf), &lr) == RBLK_S_OK;
	printf("  answer with a made-up MAC: %s\n", ok ? rblk_status_str(lr.status)
						      : "no LOGIN_RSP");
	ok = ok && lr.status == RBLK_S_AUTH_FAILED && expect_closed(fd);
	close(fd);
	return ok;
}

/*
 * Not in "all": a target with more volumes open to us (--volumes N) than
 * one DISCOVER_RSP holds lists 256 and says the list is cut.
 */
static bool case_discover_cut(void)
{
	uint8_t pdu[sizeof(struct rblk_wire_discover)], hdr[sizeof(struct rblk_wire_discover_rsp)];
	uint8_t ent[sizeof(struct rblk_wire_discover_entry)];
	uint16_t st, count;
	uint32_t flags;
	int fd = dial();
	bool ok;

	if (fd < 0)
		return false;
	rblk_send_all(fd, pdu, rblk_encode_discover(pdu, "hostile"));
	if (recv_exact(fd, hdr, sizeof(hdr), 3000) != 1 ||
	    rblk_decode_discover_rsp(hdr, sizeof(hdr), &st, &count, &flags) != RBLK_S_OK) {
		printf("  got: no/garbled DISCOVER_RSP\n");
		close(fd);
		return false;
	}
	for (unsigned i = 0; i < count; i++)
		if (recv_exact(fd, ent, sizeof(ent), 3000) != 1)
			break;
	printf("  got: DISCOVER_RSP %s, %u volume(s)%s (%u open to us)\n",
	       rblk_status_str(st), count,
	       flags & RBLK_DISCOVER_F_CUT ? ", marked cut" : ", not marked cut",
	       g_min_vols);
	ok = st == RBLK_S_OK && expect_closed(fd);
	if (g_min_vols > RBLK_DISCOVER_MAX)
		ok = ok && count == RBLK_DISCOVER_MAX && (flags & RBLK_DISCOVER_F_CUT);
	else
		ok = ok && count == g_min_vols && !(flags & RBLK_DISCOVER_F_CUT);
	close(fd);
	return ok;
}

/* Sessions that each send a 1 MiB WRITE but its last byte. */
static bool case_unfinished_write(void)
{
	const uint32_t len = 1u << 20;
	unsigned n = g_conns ? g_conns : 32;
	int *fds = calloc(n, sizeof(*fds));
	uint8_t *pdu = malloc(64 + len);
	struct rblk_login_rsp lr;

	memset(pdu, 0xcd, 64 + len);
	for (unsigned i = 0; i < n; i++) {
		fds[i] = dial_login(&lr);
		if (fds[i] < 0) {
			n = i;
			break;
		}
		make_cmd(pdu, RBLK_OP_WRITE, 0, 1, lr.size / 2, len, len);
		/* Never blocks long: the target takes it all but the byte. */
		rblk_send_all(fds[i], pdu, 64 + len - 1);
	}
	printf("  %u session(s), each a WRITE of 1 MiB with all but its last byte sent\n", n);
	fflush(stdout);
	hold_unread(fds, n);
	close_all(fds, n);
	free(pdu);
	return n > 0;
}

struct hcase {
	const char *name;
	bool (*fn)(void);
	bool not_in_all;
};

static const struct hcase cases[] = {
	{ .name = "truncated", .fn = case_truncated },
	{ .name = "truncated-write", .fn = case_truncated_write },
	{ .name = "write-fin", .fn = case_write_fin },
	{ .name = "oversized", .fn = case_oversized },
	{ .name = "max-pdu", .fn = case_max_pdu },
	{ .name = "out-of-range", .fn = case_out_of_range },
	{ .name = "beyond-end", .fn = case_beyond_end },
	{ .name = "misaligned", .fn = case_misaligned },
	{ .name = "bad-version", .fn = case_bad_version },
	{ .name = "hdr-reserved", .fn = case_hdr_reserved },
	{ .name = "bad-opcode", .fn = case_bad_opcode },
	{ .name = "reserved", .fn = case_reserved },
	{ .name = "bad-tag", .fn = case_bad_tag },
	{ .name = "dup-tag", .fn = case_dup_tag },
	{ .name = "unaligned", .fn = case_unaligned },
	{ .name = "huge-nsge", .fn = case_huge_nsge },
	{ .name = "too-large-io", .fn = case_too_large_io },
	{ .name = "write-no-data", .fn = case_write_no_data },
	{ .name = "cmd-before-login", .fn = case_cmd_before_login },
	{ .name = "wrong-type", .fn = case_wrong_type },
	{ .name = "second-login", .fn = case_second_login },
	{ .name = "login-bad", .fn = case_login_bad },
	{ .name = "ctrl-too-long", .fn = case_ctrl_too_long },
	{ .name = "garbage", .fn = case_garbage },
	{ .name = "garbage-after-login", .fn = case_garbage_after_login },
	{ .name = "flood-no-read", .fn = case_flood_no_read },
	{ .name = "idle-no-login", .fn = case_idle_no_login },
	{ .name = "discover", .fn = case_discover },
	{ .name = "write-zeroes", .fn = case_write_zeroes },
	{ .name = "discard", .fn = case_discard },
	{ .name = "range-too-large", .fn = case_range_too_large },
	{ .name = "trickle-write", .fn = case_trickle_write },
	{ .name = "fatal-after-read", .fn = case_fatal_after_read },
	{ .name = "login-twice", .fn = case_login_twice },
	{ .name = "bad-keepalive", .fn = case_bad_keepalive },
	{ .name = "tag-none", .fn = case_tag_none },
	{ .name = "secret-cleared", .fn = case_secret_cleared, .not_in_all = true },
	{ .name = "discover-cut", .fn = case_discover_cut, .not_in_all = true },
	{ .name = "unfinished-write", .fn = case_unfinished_write, .not_in_all = true },
	{ .name = "io-error", .fn = case_io_error, .not_in_all = true },
	{ .name = "no-read", .fn = case_no_read, .not_in_all = true },
	{ .name = "slow-read", .fn = case_slow_read, .not_in_all = true },
	{ .name = "silent-write", .fn = case_silent_write, .not_in_all = true },
	{ .name = "write-no-read", .fn = case_write_no_read, .not_in_all = true },
};

static bool run_case(const struct hcase *c)
{
	struct rblk_login_rsp lr;
	bool ok;
	int fd;

	printf("case %s:\n", c->name);
	fflush(stdout);
	ok = c->fn();
	/* Whatever happened, the target must still take a fresh LOGIN. */
	fd = dial_login(&lr);
	if (fd < 0) {
		printf("  target no longer serves LOGIN\n");
		ok = false;
	} else {
		close(fd);
	}
	printf("case %s: %s\n", c->name, ok ? "ok" : "FAILED");
	fflush(stdout);
	return ok;
}

int main(int argc, char **argv)
{
	const unsigned n = ARRAY_SIZE(cases);
	bool all_ok = true, found = false;
	const char *which;

	if (argc < 5) {
		fprintf(stderr, "usage: rblk-hostile HOST PORT VOLUME CASE|all|list [--bytes N] [--seed S] [--idle S]\n"
			"       [--conns N] [--bind ADDR] [--offset BYTES] [--secret-vol V --exec CMD] [--volumes N]\n");
		return 2;
	}
	g_host = argv[1];
	g_port = argv[2];
	g_vol = argv[3];
	which = argv[4];
	for (int i = 5; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--bytes"))
			g_garbage_bytes = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			g_seed = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--offset"))
			g_offset = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--idle"))
			g_idle = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--conns"))
			g_conns = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--bind"))
			g_bind = argv[i + 1];
		else if (!strcmp(argv[i], "--secret-vol"))
			g_secret_vol = argv[i + 1];
		else if (!strcmp(argv[i], "--exec"))
			g_exec = argv[i + 1];
		else if (!strcmp(argv[i], "--volumes"))
			g_min_vols = strtoul(argv[i + 1], NULL, 0);
	}
	if (!g_garbage_bytes)
		g_garbage_bytes = 1;
	if (!strcmp(which, "list")) {
		for (unsigned i = 0; i < n; i++)
			if (!cases[i].not_in_all)
				printf("%s\n", cases[i].name);
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		if (strcmp(which, "all") ? strcmp(which, cases[i].name)
					  : cases[i].not_in_all)
			continue;
		found = true;
		if (!run_case(&cases[i]))
			all_ok = false;
	}
	if (!found) {
		fprintf(stderr, "rblk-hostile: unknown case %s (try 'list')\n", which);
		return 2;
	}
	return all_ok ? 0 : 1;
}
