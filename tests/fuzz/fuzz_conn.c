// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the target's connection logic (target/conn.c): a
 * byte stream from a hostile initiator goes in through a fake transport, on
 * a real reactor (run by hand, tgt_reactor_run_once) with `null` volumes.
 *
 * Input: struct fz_head (8 bytes: transport mode and events, see FZ_F_*,
 * and the chunk sizes the stream arrives in), then the stream.
 *
 *   stream mode (TCP-like, TGT_TP_F_INBAND_DATA): the stream arrives in
 *     the chosen chunk sizes, so PDUs are split and concatenated at any
 *     byte; WRITE data follows its capsule; READ data follows the RSP.
 *   message mode (RDMA-like): each whole PDU is one receive (at most one
 *     RDMA receive buffer); WRITE data is inline or "RDMA READ" from the
 *     descriptors (pattern bytes, or a failure with FZ_F_FETCH_FAIL).
 *
 * LOGIN with a secret: a LOGIN whose auth_mac is 32 bytes of 0xa5 gets the
 * right MAC for the nonce of this connection's last AUTH_REQUIRED put in by
 * the harness, so the fuzzer reaches the authenticated session; any other
 * MAC is passed as sent (and fails).
 *
 * Every PDU the target sends is decoded with proto/ and must be valid (an
 * OK LOGIN_RSP with a sane geometry, RSP statuses, READ data length, zeroes
 * from the null backend) and follow version 2's rules: a LOGIN_RSP's auth
 * field is the nonce (AUTH_REQUIRED), the target's proof MAC_T over this
 * connection's nonces (OK after a challenge) or zero; a status that closes
 * the connection (a RSP for RBLK_TAG_NONE, a refused LOGIN, a
 * DISCOVER_RSP) comes after the answers of every command taken, and
 * nothing comes after it.  Each input is one connection that must be freed
 * at the end (the peer closes, or the target stops), with every pool chunk
 * back and nothing left on the reactor, so there is no state from one input
 * to the next.  A broken rule aborts (a crash to libFuzzer).
 *
 * Volumes (registered once): vol0 (512 B blocks, 64 MiB), vol4k (4 KiB
 * blocks), ro (read-only), sec (secret), acl (allow_hosts host-a), bad
 * (I/O below 64 KiB fails with EIO, below 128 KiB cannot be submitted).
 * tests/fuzz/gen-seeds.py writes sessions for each.
 */
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "auth.h"
#include "backend.h"
#include "conn.h"
#include "log.h"
#include "server.h"
#include "volume.h"

struct fz_head {
	uint8_t flags;		/* FZ_F_* */
	uint8_t stop_at;	/* FZ_F_DRAIN: after stop_at * 64 stream bytes */
	uint8_t chunks[6];	/* arrival sizes, cycled; 0 = all the rest */
};
_Static_assert(sizeof(struct fz_head) == 8, "head is 8 bytes");

#define FZ_F_MESSAGE	(1u << 0)	/* message transport (RDMA-like) */
#define FZ_F_SEND_FAIL	(1u << 1)	/* RSPs of odd tags fail to send */
#define FZ_F_DRAIN	(1u << 2)	/* the target stops (drains) at stop_at */
#define FZ_F_FORCE_END	(1u << 3)	/* at the end the target stops, not the peer */
#define FZ_F_FETCH_FAIL	(1u << 4)	/* message mode: RDMA READ of WRITE data fails */
#define FZ_F_LAZY	(1u << 5)	/* one reactor turn per chunk, not until idle */
#define FZ_F_TIMER	(1u << 6)	/* login_timeout armed (never fires) */
#define FZ_F_CTRL_FAIL	(1u << 7)	/* control PDUs but an OK LOGIN_RSP: -ENOMEM */

/* One RDMA receive buffer (target/rdma_int.h RX_SIZE). */
#define FZ_RX_SIZE	(sizeof(struct rblk_wire_cmd) + \
			 RBLK_MAX_SGE * sizeof(struct rblk_wire_sge) + RBLK_DEFAULT_INLINE)
#define FZ_MAX_CTRL	4096			/* TCP control PDU limit */
#define FZ_MAC_MAGIC	0xa5
#define FZ_TURNS	4096

#define CHECK(cond) do {							\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: broken rule: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

struct fz_conn {
	struct tgt_conn c;		/* first: conn.c's view */
	struct tgt_event kick_ev;
	bool kick_busy;
	bool paused;			/* conn.c said -EAGAIN */
	bool rd_closed;			/* no more bytes will be read */
	bool drain_reading;		/* target stopping: still reading */
	bool wr_dead;
	uint8_t *rbuf;
	size_t rhead, rtail;
	struct tgt_req *data_req;	/* stream mode: WRITE payload due */
	uint32_t data_need, data_got;
	bool data_stuck;		/* closing: its chunk will not grow */
	uint32_t skip;			/* rest of a refused PDU to drop */
	const uint8_t *cur;		/* message mode: PDU being offered */
	uint32_t cur_len;
	uint8_t nonce[RBLK_NONCE_LEN];	/* last challenge */
	bool challenged;		/* got AUTH_REQUIRED */
	uint8_t login[sizeof(struct rblk_wire_login)];	/* last LOGIN offered */
	bool told;			/* the closing status went out */
};

static struct tgt_server fz_srv;
static struct tgt_reactor *fz_r;
static struct fz_conn *fz_live;		/* NULL once freed */
static unsigned fz_flags;
static const struct rblk_secret fz_secret = {
	.len = 32, .key = "rblk-fuzz-secret-0123456789abcde",
};

/* RBLK_FUZZ_LOG=debug: one line per PDU the target sends. */
static bool fz_trace;

static struct fz_conn *fz_of(struct tgt_conn *c)
{
	return (struct fz_conn *)c;
}

static bool msg_mode(void)
{
	return fz_flags & FZ_F_MESSAGE;
}

static void fz_drain_check(struct fz_conn *f);
static void fz_settle(struct fz_conn *f);

/* ---- what the target sends ------------------------------------------- */

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* [V2 auth] What the auth field of a LOGIN_RSP must be. */
static void check_login_auth(struct fz_conn *f, const struct rblk_login_rsp *r)
{
	struct rblk_login l;

	if (r->status == RBLK_S_AUTH_REQUIRED) {
		CHECK(!all_zero(r->auth, RBLK_NONCE_LEN));
		memcpy(f->nonce, r->auth, RBLK_NONCE_LEN);
		f->challenged = true;
		return;
	}
	if (r->status != RBLK_S_OK || !f->challenged) {
		CHECK(all_zero(r->auth, RBLK_NONCE_LEN));
		return;
	}
	/* OK after a challenge: the target's proof over the answer's
	 * nonce and ours (only "sec" has a secret, the harness's). */
	CHECK(rblk_decode_login(f->login, sizeof(f->login), &l) == RBLK_S_OK);
	CHECK(rblk_auth_verify(&fz_secret, RBLK_AUTH_TARGET, f->nonce, l.ini_nonce,
			       l.volume, l.host, r->auth) == 0);
}

/*
 * A status that ends the connection goes out once no command is running
 * (their answers first), and is the last PDU.  SHUTTING_DOWN answers of a
 * stopping target are not such a status.
 */
static void check_order(struct fz_conn *f, bool closing_status)
{
	CHECK(!f->told);
	if (!closing_status)
		return;
	CHECK(f->c.nbusy == 0);
	f->told = true;
}

static void check_ctrl_pdu(struct fz_conn *f, const uint8_t *pdu, size_t len)
{
	uint8_t type;
	uint32_t length;

	CHECK(rblk_decode_hdr(pdu, len, UINT32_MAX, &type, &length) == RBLK_S_OK);
	CHECK(length == len);
	if (fz_trace)
		fprintf(stderr, "fuzz_conn: sent PDU type %u, %zu bytes, status %u\n",
			type, len, len >= 10 && type != RBLK_PDU_RSP ?
			pdu[8] | pdu[9] << 8 : pdu[12] | pdu[13] << 8);
	switch (type) {
	case RBLK_PDU_LOGIN_RSP: {
		struct rblk_login_rsp r;

		CHECK(rblk_decode_login_rsp(pdu, len, &r) == RBLK_S_OK);
		CHECK(r.status < RBLK_S__MAX);
		if (r.status == RBLK_S_OK) {
			CHECK(f->c.state == TGT_CONN_LIVE);
			CHECK(r.queue_depth <= fz_srv.cfg.max_queue_depth);
		}
		check_login_auth(f, &r);
		check_order(f, r.status != RBLK_S_OK && r.status != RBLK_S_AUTH_REQUIRED);
		break;
	}
	case RBLK_PDU_DISCOVER_RSP: {
		const size_t fixed = sizeof(struct rblk_wire_discover_rsp);
		uint16_t status, count;

		CHECK(rblk_decode_discover_rsp(pdu, fixed, &status, &count, NULL) == RBLK_S_OK);
		check_order(f, true);
		for (unsigned i = 0; i < count; i++) {
			struct rblk_discover_entry e;

			CHECK(rblk_decode_discover_entry(pdu + fixed + i *
				sizeof(struct rblk_wire_discover_entry), &e) == RBLK_S_OK);
		}
		CHECK(status != RBLK_S_OK || count >= 1);	/* vol0 is open to all */
		break;
	}
	case RBLK_PDU_RSP: {
		struct rblk_rsp r;

		/* error RSP not tied to a slot */
		CHECK(len == sizeof(struct rblk_wire_rsp));
		CHECK(rblk_decode_rsp(pdu, len, &r) == RBLK_S_OK);
		CHECK(r.status != RBLK_S_OK && r.value == 0);
		check_order(f, r.tag == RBLK_TAG_NONE && r.status != RBLK_S_SHUTTING_DOWN);
		break;
	}
	case RBLK_PDU_KEEPALIVE_RSP: {
		uint16_t status;
		uint64_t seq, size;

		/* the answer to a KEEPALIVE, or the notice of a stopping target
		 * or of a volume that grew; a session never shrinks */
		CHECK(rblk_decode_keepalive(pdu, len, type, &status, &seq, &size) == RBLK_S_OK);
		CHECK(!f->c.sess || size >= f->c.sess->size);
		CHECK(f->c.state != TGT_CONN_NEW);
		CHECK(status == RBLK_S_OK || status == RBLK_S_SHUTTING_DOWN);
		check_order(f, false);
		break;
	}
	default:
		CHECK(!"target sent a PDU type it never sends");
	}
}

static void fz_sent_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_req *req = (struct tgt_req *)
		((char *)ev - offsetof(struct tgt_req, ev));
	struct tgt_conn *c = req->conn;

	tgt_conn_get(c);
	tgt_req_sent(req, res);
	if (res < 0) {
		fz_of(c)->wr_dead = true;
		tgt_conn_close(c, true, NULL);
	}
	fz_drain_check(fz_of(c));
	fz_settle(fz_of(c));
	tgt_conn_put(c);
}

static void fz_send_rsp(struct tgt_req *req)
{
	struct fz_conn *f = fz_of(req->conn);
	struct rblk_rsp r;
	int res = 0;

	CHECK(req->rsp_len == sizeof(struct rblk_wire_rsp));
	if (fz_trace)
		fprintf(stderr, "fuzz_conn: RSP tag %u %s: %s, %u data bytes\n",
			req->tag, rblk_opcode_str(req->opcode),
			rblk_status_str(req->status), req->data_len);
	CHECK(rblk_decode_rsp(req->rsp, req->rsp_len, &r) == RBLK_S_OK);
	CHECK(r.tag == req->tag && r.status == req->status);
	check_order(f, false);
	CHECK(req->tag < f->c.depth && req->busy);
	if (r.status == RBLK_S_OK &&
	    (req->opcode == RBLK_OP_READ || req->opcode == RBLK_OP_WRITE))
		CHECK(r.value == req->length && req->length);
	else
		CHECK(r.value == 0);
	if (req->data_len) {
		/* In-band READ data: exactly the command's length, zeroes
		 * from the null backend. */
		CHECK(!msg_mode() && req->opcode == RBLK_OP_READ);
		CHECK(req->data_len == req->length && req->buf);
		for (uint32_t i = 0; i < req->data_len; i++)
			CHECK(((const uint8_t *)req->buf)[i] == 0);
	} else {
		CHECK(msg_mode() || r.status != RBLK_S_OK ||
		      req->opcode != RBLK_OP_READ);
	}
	if (f->wr_dead || ((fz_flags & FZ_F_SEND_FAIL) && (req->tag & 1)))
		res = -EPIPE;
	req->ev.done = fz_sent_done;
	tgt_reactor_defer(f->c.r, &req->ev, res);
}

static int fz_send_pdu(struct tgt_conn *c, const void *pdu, size_t len)
{
	const uint8_t *b = pdu;

	check_ctrl_pdu(fz_of(c), pdu, len);
	/* An accepted LOGIN still gets through, so error RSPs can fail. */
	if ((fz_flags & FZ_F_CTRL_FAIL) &&
	    !(b[0] == RBLK_PDU_LOGIN_RSP && !b[8] && !b[9]))
		return -ENOMEM;
	return 0;
}

/* ---- receive path ------------------------------------------------------- */

static void fz_parse(struct fz_conn *f);

static void fz_kick_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct fz_conn *f = (struct fz_conn *)
		((char *)ev - offsetof(struct fz_conn, kick_ev));

	f->kick_busy = false;
	fz_parse(f);
	fz_drain_check(f);
	fz_settle(f);
	tgt_conn_put(&f->c);
}

/* Parse again on the next loop turn (never from inside conn.c). */
static void fz_kick(struct fz_conn *f)
{
	if (f->kick_busy)
		return;
	f->kick_busy = true;
	f->kick_ev.done = fz_kick_done;
	tgt_conn_get(&f->c);
	tgt_reactor_defer(f->c.r, &f->kick_ev, 0);
}

static void fz_data_finished(struct fz_conn *f, int err)
{
	struct tgt_req *req = f->data_req;

	f->data_req = NULL;
	tgt_req_data_done(req, err);
}

/* Message mode: the RDMA READ of a WRITE's data, or its inline copy. */
static void fz_fetch_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_req *req = (struct tgt_req *)
		((char *)ev - offsetof(struct tgt_req, ev));

	tgt_req_data_done(req, res);
}

static int fz_fetch_data(struct tgt_req *req)
{
	struct fz_conn *f = fz_of(req->conn);
	uint32_t inl;
	int res = 0;

	CHECK(req->opcode == RBLK_OP_WRITE && req->length);
	/* A stream takes its chunk as the payload comes (GROW_DATA). */
	CHECK(msg_mode() ? req->buf != NULL : req->buf == NULL);
	if (!msg_mode()) {
		f->data_req = req;
		f->data_need = req->length;
		f->data_got = 0;
		return 0;
	}
	/* Called from inside tgt_conn_pdu with the capsule in f->cur. */
	CHECK(f->cur && f->cur_len >= sizeof(struct rblk_wire_cmd));
	inl = f->cur_len - sizeof(struct rblk_wire_cmd) -
	      16u * (f->cur[10] | f->cur[11] << 8);
	if (inl) {
		CHECK(inl == req->length);
		memcpy(req->buf, f->cur + f->cur_len - inl, inl);
	} else if ((fz_flags & FZ_F_FETCH_FAIL) && (req->tag & 1)) {
		return -ENOBUFS;	/* cannot start: no callback */
	} else if (fz_flags & FZ_F_FETCH_FAIL) {
		res = -EREMOTEIO;
	} else {
		memset(req->buf, 0x5a, req->length);
	}
	req->ev.done = fz_fetch_done;
	tgt_reactor_defer(f->c.r, &req->ev, res);
	return 0;
}

/* A LOGIN asking for the harness MAC gets the right one for its nonce. */
static void fix_mac(struct fz_conn *f, uint8_t *pdu, size_t len)
{
	uint8_t *mac = pdu + offsetof(struct rblk_wire_login, auth_mac);
	const uint8_t *wvol = pdu + offsetof(struct rblk_wire_login, volume);
	const uint8_t *whost = pdu + offsetof(struct rblk_wire_login, host);
	char vol[RBLK_NAME_MAX], host[RBLK_NAME_MAX];

	if (len != sizeof(struct rblk_wire_login) || pdu[0] != RBLK_PDU_LOGIN)
		return;
	for (unsigned i = 0; i < RBLK_MAC_LEN; i++)
		if (mac[i] != FZ_MAC_MAGIC)
			return;
	if (!memchr(wvol, 0, RBLK_NAME_MAX) || !memchr(whost, 0, RBLK_NAME_MAX))
		return;
	memcpy(vol, wvol, sizeof(vol));
	memcpy(host, whost, sizeof(host));
	CHECK(rblk_auth_mac(&fz_secret, RBLK_AUTH_INITIATOR, f->nonce,
			    pdu + offsetof(struct rblk_wire_login, ini_nonce),
			    vol, host, mac) == 0);
}

/* Offers `need` bytes of a PDU of `len` bytes from an exactly sized copy
 * (a read past what the transport holds is caught).  Returns what
 * tgt_conn_pdu returned. */
static int fz_offer(struct fz_conn *f, const uint8_t *p, uint32_t need,
		    uint32_t len)
{
	/* Stream mode: the same alignment as in the stream, as the TCP
	 * transport hands PDUs over (malloc gives 16); a PDU after one of odd
	 * length sits at an odd address. */
	unsigned odd = !msg_mode() ? (p - f->rbuf) % 8 : 0;
	uint8_t *mem = malloc(need + odd), *copy = mem + odd;
	int ret;

	CHECK(mem != NULL);
	memcpy(copy, p, need);
	fix_mac(f, copy, need);
	if (need == sizeof(f->login) && copy[0] == RBLK_PDU_LOGIN)
		memcpy(f->login, copy, need);
	f->cur = copy;
	f->cur_len = need;
	ret = tgt_conn_pdu(&f->c, copy, need, len);
	f->cur = NULL;
	free(mem);
	return ret;
}

static void fz_parse(struct fz_conn *f)
{
	while (!f->paused) {
		const uint8_t *p = f->rbuf + f->rhead;
		size_t avail = f->rtail - f->rhead;
		uint32_t len, need;
		uint8_t type;
		int st, ret;

		if (f->data_req) {
			uint32_t n = f->data_need - f->data_got;

			if (n > avail)
				n = avail;
			if (!n)
				return;
			/* Grow as tcp.c does, from 4 KiB, at least doubling
			 * (more steps than tcp.c's 64 KiB start). */
			if (!f->data_req->buf || f->data_req->buf_cap < f->data_got + n) {
				uint32_t want = f->data_got + n;

				if (f->c.state == TGT_CONN_CLOSING && !f->drain_reading) {
					f->data_stuck = true;	/* as tcp.c */
					return;
				}
				if (want < 2 * f->data_req->buf_cap)
					want = 2 * f->data_req->buf_cap;
				if (tgt_req_data_room(f->data_req, f->data_got,
						      f->data_got + n, want)) {
					f->paused = true;
					return;
				}
				CHECK(f->data_req->buf_cap >= f->data_got + n);
			}
			memcpy((uint8_t *)f->data_req->buf + f->data_got, p, n);
			f->data_got += n;
			f->rhead += n;
			if (f->data_got < f->data_need)
				return;
			fz_data_finished(f, 0);
			continue;
		}
		if (f->skip) {
			uint32_t n = f->skip < avail ? f->skip : avail;

			f->rhead += n;
			f->skip -= n;
			if (f->skip)
				return;
			continue;
		}
		if (f->c.state == TGT_CONN_CLOSING && !f->c.draining)
			return;
		if (avail < sizeof(struct rblk_wire_hdr))
			return;
		st = rblk_decode_hdr(p, avail, msg_mode() ? FZ_RX_SIZE : RBLK_MAX_PDU,
				     &type, &len);
		if (st != RBLK_S_OK) {
			/* framing error: told, closed gracefully (tcp.c, rdma.c) */
			tgt_conn_fatal(&f->c, st, type, NULL);
			return;
		}
		if (msg_mode())
			need = len;	/* a receive holds the whole PDU */
		else if (type == RBLK_PDU_CMD)
			need = sizeof(struct rblk_wire_cmd);
		else if (len > FZ_MAX_CTRL) {
			tgt_conn_fatal(&f->c, RBLK_S_TOO_LARGE, type, NULL);
			return;
		} else
			need = len;
		if (avail < need)
			return;
		ret = fz_offer(f, p, need, len);
		if (ret == -EAGAIN) {
			/* out of pool or over a cap: back-pressure */
			f->paused = true;
			return;
		}
		if (ret < 0) {
			if (ret != -ECONNABORTED)
				tgt_conn_close(&f->c, true, NULL);
			return;
		}
		f->rhead += need;
		if (f->data_req)
			f->data_got = 0;
		else
			f->skip = len - need;
	}
}

/* Target stopping: once nothing runs, stop reading (as tcp.c does). */
static void fz_drain_check(struct fz_conn *f)
{
	if (!f->drain_reading || f->c.nbusy || f->data_req)
		return;
	f->drain_reading = false;
	f->rd_closed = true;
}

static bool fz_reading(const struct fz_conn *f)
{
	return !f->rd_closed &&
	       (f->c.state != TGT_CONN_CLOSING || f->drain_reading);
}

/* A WRITE whose payload can no longer arrive goes back to conn.c. */
static void fz_settle(struct fz_conn *f)
{
	if (f->data_req && (f->rhead == f->rtail || f->data_stuck) &&
	    !fz_reading(f)) {
		f->data_stuck = false;
		fz_data_finished(f, -ESHUTDOWN);
	}
}

static void fz_resume(struct tgt_conn *c)
{
	fz_of(c)->paused = false;
	fz_kick(fz_of(c));
}

static void fz_shutdown(struct tgt_conn *c, bool force)
{
	struct fz_conn *f = fz_of(c);

	if (force) {
		f->drain_reading = false;
		f->rd_closed = true;
		f->wr_dead = true;
	} else if (c->draining && !f->rd_closed) {
		f->drain_reading = true;
	} else {
		f->rd_closed = true;
	}
	f->paused = false;
	fz_kick(f);
}

static void fz_free(struct tgt_conn *c)
{
	struct fz_conn *f = fz_of(c);

	CHECK(f == fz_live);
	CHECK(c->nbusy == 0 && c->share.bytes == 0 && c->ndisk == 0 && c->nfetch == 0);
	CHECK(!c->share.pin[TGT_PIN_RX] && !c->share.pin[TGT_PIN_TX] && !c->share.grant);
	CHECK(!f->kick_busy && c->share.wait == TGT_SHARE_NONE &&
	      !c->share.ev_queued && !c->login_timer);
	CHECK(c->state == TGT_CONN_CLOSING);
	free(f->rbuf);
	free(f);
	fz_live = NULL;
}

static int fz_listen(struct tgt_server *srv, const char *addr,
		     struct tgt_listener **lp)
{
	return -EOPNOTSUPP;
}

static int fz_listener_fd(struct tgt_listener *l)
{
	return -1;
}

static int fz_accept(struct tgt_listener *l)
{
	return -EOPNOTSUPP;
}

static void fz_unlisten(struct tgt_listener *l)
{
}

#define FZ_OPS(tp_flags) {						\
		.name = "fuzz", .flags = (tp_flags),			\
		.listen = fz_listen, .listener_fd = fz_listener_fd,	\
		.accept = fz_accept, .unlisten = fz_unlisten,		\
		.fetch_data = fz_fetch_data, .send_rsp = fz_send_rsp,	\
		.send_pdu = fz_send_pdu, .resume = fz_resume,		\
		.shutdown = fz_shutdown, .free = fz_free,		\
	}
static const struct tgt_transport_ops fz_stream_ops =
	FZ_OPS(TGT_TP_F_INBAND_DATA | TGT_TP_F_GROW_DATA);
static const struct tgt_transport_ops fz_msg_ops = FZ_OPS(0);

/* ---- a flaky null backend for volume "bad" ------------------------------- */

#define FZ_BAD_EIO	(64u << 10)	/* I/O starting below: -EIO */
#define FZ_BAD_NOMEM	(128u << 10)	/* below (and above EIO): submit fails */

static void fz_eio_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_io *io = (struct tgt_io *)ev;

	io->complete(io, -EIO);
}

static int fz_flaky_submit(struct tgt_io *io, void *ctx)
{
	if (io->op == TGT_IO_FLUSH || io->offset >= FZ_BAD_NOMEM)
		return tgt_backend_null.submit(io, ctx);
	if (io->offset >= FZ_BAD_EIO)
		return -ENOMEM;
	io->ev.done = fz_eio_done;
	tgt_reactor_defer(io->r, &io->ev, 0);
	return 0;
}

static const struct tgt_backend_ops fz_backend_flaky = {
	.name = "fuzz-flaky",
	.flags = TGT_BE_F_NO_STORE,
	.submit = fz_flaky_submit,
};

/* ---- setup (once per process) -------------------------------------------- */

static struct tgt_volume *add_null_volume(const char *name, uint64_t size,
					  uint32_t bs, bool ro, char **hosts,
					  unsigned n_hosts)
{
	struct tgt_volume_cfg cfg = {
		.size = size, .read_only = ro, .allow_hosts = hosts,
		.n_allow_hosts = n_hosts, .allow_any_host = !n_hosts,
	};
	struct tgt_volume *v;
	char err[256];

	snprintf(cfg.name, sizeof(cfg.name), "%s", name);
	snprintf(cfg.backend, sizeof(cfg.backend), "null");
	if (tgt_volume_open(&v, &cfg, err, sizeof(err)) ||
	    tgt_export_add(v, &cfg, err, sizeof(err))) {
		fprintf(stderr, "fuzz_conn: volume %s: %s\n", name, err);
		abort();
	}
	v->block_size = bs;	/* null volumes open with 512 */
	return v;
}

/* The peer every fuzzed connection comes from (address ACL entries). */
static const struct sockaddr_in fz_peer = {
	.sin_family = AF_INET, .sin_port = 0x409c,	/* 40000 */
	.sin_addr = { .s_addr = 0x0900000a },		/* 10.0.0.9 */
};

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct tgt_reactor_params p = {
		.id = 0, .ring_entries = 64, .buffer_bytes = 2u << 20,
		.priv = &fz_srv,
	};
	static char *acl_hosts[] = { "host-a", "192.0.2.1" };
	const char *lvl = getenv("RBLK_FUZZ_LOG");

	/* Quiet unless asked (RBLK_FUZZ_LOG=info when reproducing). */
	rblk_log_level = -1;
	if (lvl && rblk_log_set_level(lvl))
		fprintf(stderr, "fuzz_conn: RBLK_FUZZ_LOG=%s: not a level\n", lvl);
	fz_trace = rblk_log_level >= RBLK_LOG_DEBUG;
	tgt_config_init(&fz_srv.cfg);
	fz_srv.cfg.max_queue_depth = 128;
	CHECK(tgt_exports_init(1) == 0);
	add_null_volume("vol0", 64u << 20, 512, false, NULL, 0);
	add_null_volume("vol4k", 1u << 30, 4096, false, NULL, 0);
	add_null_volume("ro", 1u << 20, 512, true, NULL, 0);
	add_null_volume("sec", 1u << 20, 512, false, NULL, 0);
	add_null_volume("acl", 1u << 20, 512, false, acl_hosts, 2);
	/* null, except I/O below 128 KiB fails (same registry slot: no
	 * reactor context either way). */
	add_null_volume("bad", 1u << 20, 512, false, NULL, 0)->be = &fz_backend_flaky;
	CHECK(tgt_export_set_secret("sec", &fz_secret) == 0);
	if (tgt_reactor_create(&fz_r, &p)) {
		fprintf(stderr, "fuzz_conn: cannot create a reactor (io_uring)\n");
		abort();
	}
	return 0;
}

/* ---- one input -------------------------------------------------------------- */

/* Runs the reactor: one turn, or until nothing is left to dispatch. */
static void fz_run(bool until_idle)
{
	for (unsigned i = 0; i < FZ_TURNS; i++) {
		int n = tgt_reactor_run_once(fz_r, false);

		CHECK(n >= 0);
		if (!n || !until_idle)
			return;
	}
	CHECK(!"reactor never went idle");
}

/* Drives the connection to its end; it must be freed. */
static void fz_finish(void)
{
	struct fz_conn *f = fz_live;

	if (f && (fz_flags & FZ_F_FORCE_END)) {
		tgt_conns_stop(fz_r, false);
		fz_run(true);
		if (fz_live)
			tgt_conns_stop(fz_r, true);
	} else if (f) {
		/* The peer closed its end. */
		f->rd_closed = true;
		tgt_conn_get(&f->c);
		if (f->data_req)
			fz_data_finished(f, -ECONNRESET);
		if (f->c.state != TGT_CONN_CLOSING)
			tgt_conn_close(&f->c, false, "peer closed the connection");
		tgt_conn_put(&f->c);
	}
	for (unsigned i = 0; fz_live && i < FZ_TURNS; i++) {
		fz_run(true);
		/* A login timer's cancellation completes through the ring. */
		if (fz_live && fz_live->c.login_timer)
			CHECK(tgt_reactor_run_once(fz_r, true) >= 0);
	}
	CHECK(fz_live == NULL);		/* connection never freed */
	fz_run(true);
	CHECK(tgt_bufpool_in_use(tgt_reactor_pool(fz_r)) == 0);
	CHECK(atomic_load(&fz_srv.conns_open) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_head h;
	struct fz_conn *f;
	size_t n, pos = 0;
	unsigned ci = 0;
	bool stopped = false;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	data += sizeof(h);
	n = size - sizeof(h);
	fz_flags = h.flags;
	fz_srv.cfg.login_timeout = (fz_flags & FZ_F_TIMER) ? 3600 : 0;

	f = calloc(1, sizeof(*f));
	CHECK(f != NULL);
	f->rbuf = malloc(n ? n : 1);
	CHECK(f->rbuf != NULL);
	fz_live = f;
	tgt_conn_init(&f->c, msg_mode() ? &fz_msg_ops : &fz_stream_ops, &fz_srv,
		      fz_r, "10.0.0.9:40000", (const struct sockaddr *)&fz_peer);

	while (pos < n && fz_live && fz_reading(fz_live)) {
		size_t want = h.chunks[ci++ % sizeof(h.chunks)];

		if (!want || want > n - pos)
			want = n - pos;
		if ((fz_flags & FZ_F_DRAIN) && !stopped && pos >= h.stop_at * 64u) {
			stopped = true;
			tgt_conns_stop(fz_r, false);
			/* lazy: capsules may come before anything finished */
			if (!(fz_flags & FZ_F_LAZY))
				fz_run(true);
			continue;
		}
		f = fz_live;
		memcpy(f->rbuf + f->rtail, data + pos, want);
		f->rtail += want;
		pos += want;
		tgt_conn_get(&f->c);
		fz_parse(f);
		fz_drain_check(f);
		fz_settle(f);
		tgt_conn_put(&f->c);
		fz_run(!(fz_flags & FZ_F_LAZY));
	}
	fz_finish();
	return 0;
}
