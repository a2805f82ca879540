// SPDX-License-Identifier: MIT
/*
 * rdma_probe: a deliberately misbehaving RDMA initiator for the VM tests,
 * plus a connect/disconnect cycler for leak checks.
 *
 *   rdma_probe HOST PORT VOLUME CASE      one hostile case; exit 0 when the
 *                                         target reacted as CASE expects
 *   rdma_probe HOST PORT VOLUME cycles N  N x (connect, LOGIN, one 4 KiB
 *                                         write+read, close) via the client
 *                                         library; exit 0 when all worked
 *   rdma_probe HOST PORT VOLUME prelogin N WINDOW HOLD_S
 *                                         N connects (depth 1024) that never
 *                                         LOGIN, WINDOW of them open at once,
 *                                         the last WINDOW held HOLD_S s
 *   rdma_probe HOST PORT VOLUME hog N HOLD_S
 *                                         N logged-in connections that each
 *                                         send a full queue of 1 MiB READs
 *                                         (odd ones) or READs and WRITEs
 *                                         (even ones) and never take the
 *                                         answers; held HOLD_S s
 *   rdma_probe HOST PORT VOLUME hog-writes N HOLD_S
 *                                         the same with WRITEs only and no
 *                                         receive after LOGIN: the RDMA
 *                                         READs of their data queue behind
 *                                         an answer that meets RNR and
 *                                         never complete
 *   rdma_probe list                       the case names
 *
 * RBLK_PROBE_SRC=ADDR: connect from that local address (another host for
 * the target's per-host caps).
 *
 * Hostile cases speak raw verbs (proto/rdma_verbs.h) so they can send what
 * the client library never would.  Each prints "RESULT: ..." with what it
 * saw.  Expectations:
 *   - refused connect (bad private data): REJECTED carrying a status;
 *   - a capsule the target can parse: an error status on the same QP, and
 *     the connection still works (a good READ follows and must succeed);
 *   - a transfer naming memory outside what we registered (bad rkey, bad
 *     address, descriptor longer than the MR): the RDMA operation fails with
 *     a remote access error, which is fatal to an RC QP, so the target must
 *     close this connection (and only this one) within a few seconds;
 *   - a SEND larger than the target's receive buffers: same, closed;
 *   - a PDU the target cannot frame or take in this state (a READ before
 *     LOGIN, a SEND shorter than its header says): the target says why
 *     (a LOGIN_RSP before LOGIN, a RSP for RBLK_TAG_NONE after) and then
 *     closes this connection (docs/protocol.md, "Errors that close the
 *     connection").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "helpers.h"
#include "log.h"
#include "rblk_client.h"
#include "rblk_proto.h"
#include "rdma_verbs.h"

#define BUF_SIZE	(256u << 10)
#define SLOT		8192
#define NSLOTS		8
#define TMO_MS		10000

enum expect {
	EXP_REJECT,		/* CM reject with a status */
	EXP_STATUS,		/* error status, connection survives */
	EXP_CLOSED,		/* target closes this connection */
	EXP_TOLD_CLOSED,	/* target sends want_status, then closes */
};

struct probe {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	uint8_t *msg;			/* NSLOTS recv slots + send area */
	struct ibv_mr *msg_mr;
	uint8_t *data;			/* I/O buffer the target may access */
	struct ibv_mr *data_mr;
	struct rblk_login_rsp lrsp;
	int connected;
	unsigned depth;			/* asked at connect and LOGIN; 0: NSLOTS */
	unsigned rx;			/* receives posted at connect; 0: NSLOTS */
	bool no_repost;			/* LOGIN_RSP's receive is not posted again */
};

struct hcase {
	const char *name;
	enum expect exp;
	int want_status;		/* EXP_STATUS / EXP_REJECT: status wanted */
	const char *what;
};

static const struct hcase cases[] = {
	{ "cm-bad-magic", EXP_REJECT, RBLK_S_INVALID_FIELD, "connect private data with a wrong magic" },
	{ "cm-bad-version", EXP_REJECT, RBLK_S_BAD_VERSION, "connect private data with version 99" },
	{ "cm-depth0", EXP_REJECT, RBLK_S_INVALID_FIELD, "connect asking for queue depth 0" },
	/* The CM pads private data to 56 bytes with zeros: version 0. */
	{ "cm-short", EXP_REJECT, RBLK_S_BAD_VERSION, "connect with 4 bytes of private data" },
	{ "io-before-login", EXP_TOLD_CLOSED, RBLK_S_NOT_LOGGED_IN, "READ before LOGIN" },
	{ "bad-opcode", EXP_STATUS, RBLK_S_INVALID_OPCODE, "capsule with opcode 99" },
	{ "too-many-sge", EXP_STATUS, RBLK_S_TOO_LARGE, "READ with more descriptors than negotiated" },
	{ "sge-sum", EXP_STATUS, RBLK_S_INVALID_FIELD, "descriptor lengths not adding up to the length" },
	{ "out-of-range", EXP_STATUS, RBLK_S_OUT_OF_RANGE, "READ past the end of the volume" },
	{ "bad-tag", EXP_STATUS, RBLK_S_BAD_TAG, "tag >= granted depth" },
	{ "bad-rkey-read", EXP_CLOSED, 0, "READ into a wrong rkey" },
	{ "bad-rkey-write", EXP_CLOSED, 0, "WRITE (RDMA READ) from a wrong rkey" },
	{ "bad-addr-read", EXP_CLOSED, 0, "READ into an address outside the registered buffer" },
	{ "overlong-read", EXP_CLOSED, 0, "READ descriptor running past the end of the MR" },
	{ "overlong-write", EXP_CLOSED, 0, "WRITE descriptor running past the end of the MR" },
	{ "huge-send", EXP_CLOSED, 0, "SEND bigger than the target's receive buffers" },
	{ "short-capsule", EXP_TOLD_CLOSED, RBLK_S_INVALID_FIELD, "SEND of 8 bytes, header saying 216" },
};

static void probe_close(struct probe *p)
{
	struct rdma_cm_event *ev;

	if (p->connected) {
		rdma_disconnect(p->id);
		if (rblk_rdma_wait_event(p->ch, RDMA_CM_EVENT_DISCONNECTED, 1000,
					 &ev) != -ETIMEDOUT && ev)
			rdma_ack_cm_event(ev);
	}
	rblk_rdma_qp_destroy(p->id);
	if (p->cc)
		rblk_rdma_cq_rearm(p->cc, p->cq);
	rblk_rdma_cq_destroy(p->cc, p->cq);
	rblk_rdma_mr_dereg(p->data_mr);
	rblk_rdma_mr_dereg(p->msg_mr);
	rblk_rdma_pd_free(p->pd);
	rblk_rdma_id_destroy(p->id);
	rblk_rdma_channel_destroy(p->ch);
	free(p->msg);
	free(p->data);
}

static int post_recv(struct probe *p, unsigned i)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)(p->msg + i * SLOT), .length = SLOT,
		.lkey = p->msg_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &s, .num_sge = 1 };

	return rblk_rdma_post_recv(p->id->qp, &wr);
}

/* Sends len bytes placed at the send area (after the recv slots). */
static int send_msg(struct probe *p, uint32_t len)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)(p->msg + NSLOTS * SLOT), .length = len,
		.lkey = p->msg_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1000, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};

	return rblk_rdma_post_send(p->id->qp, &wr);
}

/*
 * Waits for the next receive (skipping send completions).  Returns the slot
 * index, -ECONNRESET when the QP failed/flushed or the target disconnected,
 * -ETIMEDOUT.
 */
static int wait_recv(struct probe *p, int timeout_ms, uint32_t *len)
{
	int64_t deadline = rblk_now_ms() + timeout_ms;
	struct rdma_cm_event *ev;
	struct ibv_wc wc;

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = p->cc->fd, .events = POLLIN },
			{ .fd = p->ch->fd, .events = POLLIN },
		};
		int n, left;

		if (rblk_rdma_cq_rearm(p->cc, p->cq) < 0)
			return -EIO;
		while ((n = rblk_rdma_poll(p->cq, 1, &wc)) == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				printf("  wc %s (wr %lu)\n", rblk_rdma_wc_str(wc.status),
				       (unsigned long)wc.wr_id);
				return -ECONNRESET;
			}
			if (wc.opcode & IBV_WC_RECV) {
				*len = wc.byte_len;
				return (int)wc.wr_id;
			}
		}
		if (rblk_rdma_get_event(p->ch, 0, &ev) == 0) {
			int type = ev->event;

			printf("  cm event %s\n", rblk_rdma_event_str(ev->event));
			rdma_ack_cm_event(ev);
			if (type == RDMA_CM_EVENT_DISCONNECTED) {
				p->connected = 0;
				return -ECONNRESET;
			}
		}
		left = (int)(deadline - rblk_now_ms());
		if (left <= 0)
			return -ETIMEDOUT;
		poll(pfd, 2, left);
	}
}

/* RBLK_PROBE_SRC: bind the cm_id to that local address first, so that
 * the target sees the connection come from it.  0 or -errno. */
static int bind_src(struct rdma_cm_id *id)
{
	const char *src = getenv("RBLK_PROBE_SRC");
	struct sockaddr_in sin = { .sin_family = AF_INET };

	if (!src || !*src)
		return 0;
	if (inet_pton(AF_INET, src, &sin.sin_addr) != 1)
		return -EINVAL;
	return rblk_cm_err(rdma_bind_addr(id, (struct sockaddr *)&sin));
}

/* Connects with the given private data; 0, or -ECONNREFUSED with the
 * reject's status in *rej_status. */
static int probe_connect(struct probe *p, const char *host, const char *port,
			 const void *pdata, uint8_t plen, int *rej_status)
{
	struct rblk_rdma_qp_caps caps = { 64, NSLOTS, 1, 1, 0 };
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct ibv_device_attr dev;
	int ret;

	*rej_status = -1;
	if ((ret = rblk_rdma_channel_create(&p->ch)) ||
	    (ret = rblk_rdma_id_create(p->ch, p, &p->id)) ||
	    (ret = bind_src(p->id)) ||
	    (ret = rblk_rdma_resolve(p->id, host, port, RBLK_DEFAULT_RDMA_PORT,
				     TMO_MS)) ||
	    (ret = rblk_ibv_err(ibv_query_device(p->id->verbs, &dev))) ||
	    (ret = rblk_rdma_pd_alloc(p->id->verbs, &p->pd)) ||
	    (ret = rblk_rdma_cq_create(p->id->verbs, 128, p, &p->cc, &p->cq)) ||
	    (ret = rblk_rdma_qp_create(p->id, p->pd, p->cq, p->cq, NULL, p, &caps)))
		return ret;
	p->msg = aligned_alloc(4096, (NSLOTS + 1) * SLOT + (64u << 10));
	p->data = aligned_alloc(4096, BUF_SIZE);
	if (!p->msg || !p->data)
		return -ENOMEM;
	memset(p->msg, 0, (NSLOTS + 1) * SLOT + (64u << 10));
	if ((ret = rblk_rdma_mr_reg(p->pd, p->msg, (NSLOTS + 1) * SLOT + (64u << 10),
				    IBV_ACCESS_LOCAL_WRITE, &p->msg_mr)) ||
	    (ret = rblk_rdma_mr_reg(p->pd, p->data, BUF_SIZE,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_WRITE, &p->data_mr)))
		return ret;
	for (unsigned i = 0; i < (p->rx ? p->rx : NSLOTS); i++)
		if ((ret = post_recv(p, i)))
			return ret;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pdata;
	cp.private_data_len = plen;
	cp.responder_resources = (uint8_t)(dev.max_qp_rd_atom > 16 ? 16 : dev.max_qp_rd_atom);
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if ((ret = rblk_cm_err(rdma_connect(p->id, &cp))))
		return ret;
	ret = rblk_rdma_wait_event(p->ch, RDMA_CM_EVENT_ESTABLISHED, TMO_MS, &ev);
	if (ret && ev && ev->event == RDMA_CM_EVENT_REJECTED) {
		struct rblk_rdma_cm r;

		if (rblk_decode_rdma_cm(ev->param.conn.private_data,
					ev->param.conn.private_data_len, &r) == RBLK_S_OK)
			*rej_status = r.status;
	}
	if (ev)
		rdma_ack_cm_event(ev);
	if (!ret)
		p->connected = 1;
	return ret;
}

static int probe_login(struct probe *p, const char *volume)
{
	struct rblk_login l = { .queue_depth = p->depth ? p->depth : NSLOTS };
	uint32_t len;
	int slot, ret;

	strcpy(l.volume, volume);
	strcpy(l.host, "rdma-probe");
	ret = send_msg(p, (uint32_t)rblk_encode_login(p->msg + NSLOTS * SLOT, &l));
	if (ret)
		return ret;
	slot = wait_recv(p, TMO_MS, &len);
	if (slot < 0)
		return slot;
	if (rblk_decode_login_rsp(p->msg + slot * SLOT, len, &p->lrsp) != RBLK_S_OK)
		return -EPROTO;
	if (!p->no_repost)
		post_recv(p, (unsigned)slot);
	if (p->lrsp.status != RBLK_S_OK) {
		printf("  login refused: %s\n", rblk_status_str(p->lrsp.status));
		return -EACCES;
	}
	return 0;
}

/* Sends a command with the given descriptors and waits for its answer:
 * returns the status (>= 0) or -errno (-ECONNRESET: connection closed). */
static int command(struct probe *p, struct rblk_cmd *c, const struct rblk_sge *sgl,
		   unsigned nsge, int timeout_ms)
{
	uint8_t *out = p->msg + NSLOTS * SLOT;
	uint32_t len = sizeof(struct rblk_wire_cmd) + nsge * sizeof(struct rblk_wire_sge);
	struct rblk_rsp rsp;
	uint32_t rlen;
	int slot, ret;

	c->nsge = (uint16_t)nsge;
	rblk_encode_cmd(out, c, len);
	for (unsigned i = 0; i < nsge; i++)
		rblk_encode_sge(out + sizeof(struct rblk_wire_cmd) +
				i * sizeof(struct rblk_wire_sge), &sgl[i]);
	ret = send_msg(p, len);
	if (ret)
		return ret;
	slot = wait_recv(p, timeout_ms, &rlen);
	if (slot < 0)
		return slot;
	ret = rblk_decode_rsp(p->msg + slot * SLOT, rlen, &rsp);
	post_recv(p, (unsigned)slot);
	if (ret != RBLK_S_OK || rsp.tag != c->tag)
		return -EPROTO;
	return rsp.status;
}

/*
 * After a PDU the target cannot take: the status it sends (a LOGIN_RSP
 * before LOGIN, a RSP for RBLK_TAG_NONE after), >= 0, once the connection
 * then closes; -EPROTO for another answer, -errno when none came.
 */
static int told_then_closed(struct probe *p, bool logged_in)
{
	struct rblk_login_rsp lr;
	struct rblk_rsp rsp;
	uint32_t len;
	int slot = wait_recv(p, TMO_MS, &len), st = -EPROTO;

	if (slot < 0)
		return slot;
	if (logged_in) {
		if (rblk_decode_rsp(p->msg + slot * SLOT, len, &rsp) == RBLK_S_OK &&
		    rsp.tag == RBLK_TAG_NONE)
			st = rsp.status;
	} else if (rblk_decode_login_rsp(p->msg + slot * SLOT, len, &lr) == RBLK_S_OK) {
		st = lr.status;
	}
	post_recv(p, (unsigned)slot);
	printf("  told: %s\n", st >= 0 ? rblk_status_str(st) : "not a status PDU");
	if (st >= 0 && wait_recv(p, TMO_MS, &len) != -ECONNRESET) {
		printf("  but the connection stayed up\n");
		return -EPROTO;
	}
	return st;
}

static int good_read(struct probe *p)
{
	struct rblk_cmd c = { .opcode = RBLK_OP_READ, .tag = 1, .length = 4096 };
	struct rblk_sge s = { (uintptr_t)p->data, p->data_mr->rkey, 4096 };

	return command(p, &c, &s, 1, TMO_MS);
}

static int run_case(const struct hcase *hc, const char *host, const char *port,
		    const char *volume)
{
	struct rblk_rdma_cm cm = { .queue_id = 0, .queue_depth = NSLOTS };
	struct wire { uint8_t b[sizeof(struct rblk_wire_rdma_cm)]; } pd;
	struct probe p;
	struct rblk_cmd c = { .opcode = RBLK_OP_READ, .tag = 0, .length = 8192 };
	struct rblk_sge s[RBLK_MAX_SGE + 1];
	uint8_t plen = sizeof(pd.b);
	int rej, ret, st = -1;
	const char *name = hc->name;

	memset(&p, 0, sizeof(p));
	if (!strcmp(name, "cm-depth0"))
		cm.queue_depth = 0;
	rblk_encode_rdma_cm(pd.b, &cm);
	if (!strcmp(name, "cm-bad-magic"))
		pd.b[0] ^= 0xff;
	if (!strcmp(name, "cm-bad-version"))
		pd.b[4] = 99;
	if (!strcmp(name, "cm-short"))
		plen = 4;
	ret = probe_connect(&p, host, port, pd.b, plen, &rej);
	if (hc->exp == EXP_REJECT) {
		printf("RESULT: %s: connect %s, reject status %d (%s)\n", name,
		       strerror(-ret), rej, rej >= 0 ? rblk_status_str(rej) : "-");
		probe_close(&p);
		return ret == -ECONNREFUSED && rej == hc->want_status ? 0 : 1;
	}
	if (ret) {
		printf("RESULT: %s: connect failed: %s\n", name, strerror(-ret));
		probe_close(&p);
		return 1;
	}
	if (!strcmp(name, "io-before-login")) {
		uint8_t *out = p.msg + NSLOTS * SLOT;

		s[0] = (struct rblk_sge) { (uintptr_t)p.data, p.data_mr->rkey, 8192 };
		c.nsge = 1;
		rblk_encode_cmd(out, &c, sizeof(struct rblk_wire_cmd) + sizeof(struct rblk_wire_sge));
		rblk_encode_sge(out + sizeof(struct rblk_wire_cmd), &s[0]);
		ret = send_msg(&p, sizeof(struct rblk_wire_cmd) + sizeof(struct rblk_wire_sge));
		st = ret ? ret : told_then_closed(&p, false);
		goto check;
	}
	ret = probe_login(&p, volume);
	if (ret) {
		printf("RESULT: %s: login failed: %s\n", name, strerror(-ret));
		probe_close(&p);
		return 1;
	}
	for (unsigned i = 0; i <= RBLK_MAX_SGE; i++)
		s[i] = (struct rblk_sge) { (uintptr_t)p.data + i * 4096,
					   p.data_mr->rkey, 4096 };
	s[0].length = 8192;
	if (!strcmp(name, "bad-opcode")) {
		c.opcode = 99;
		st = command(&p, &c, s, 1, TMO_MS);
	} else if (!strcmp(name, "too-many-sge")) {
		c.length = 4096 * (p.lrsp.max_sge + 1u);
		for (unsigned i = 0; i <= p.lrsp.max_sge && i <= RBLK_MAX_SGE; i++)
			s[i].length = 4096;
		st = command(&p, &c, s, p.lrsp.max_sge + 1u, TMO_MS);
	} else if (!strcmp(name, "sge-sum")) {
		s[0].length = 4096;
		st = command(&p, &c, s, 1, TMO_MS);
	} else if (!strcmp(name, "out-of-range")) {
		c.offset = p.lrsp.size;
		st = command(&p, &c, s, 1, TMO_MS);
	} else if (!strcmp(name, "bad-tag")) {
		c.tag = p.lrsp.queue_depth;
		st = command(&p, &c, s, 1, TMO_MS);
	} else if (!strcmp(name, "bad-rkey-read") || !strcmp(name, "bad-rkey-write")) {
		if (strstr(name, "write"))
			c.opcode = RBLK_OP_WRITE;
		c.length = 16384;	/* above the inline size: needs RDMA READ */
		s[0].rkey ^= 0x5a5a00;
		s[0].length = 16384;
		st = command(&p, &c, s, 1, TMO_MS);
	} else if (!strcmp(name, "bad-addr-read")) {
		s[0].addr = (uintptr_t)p.data + BUF_SIZE + (1u << 20);
		st = command(&p, &c, s, 1, TMO_MS);
	} else if (!strcmp(name, "overlong-read") || !strcmp(name, "overlong-write")) {
		if (strstr(name, "write"))
			c.opcode = RBLK_OP_WRITE;
		c.length = 65536;
		s[0].addr = (uintptr_t)p.data + BUF_SIZE - 4096;
		s[0].length = 65536;
		st = command(&p, &c, s, 1, TMO_MS);
	} else if (!strcmp(name, "huge-send")) {
		uint8_t *out = p.msg + NSLOTS * SLOT;

		rblk_encode_cmd(out, &(struct rblk_cmd) { .opcode = RBLK_OP_WRITE,
				.length = 60000 }, 60000 + sizeof(struct rblk_wire_cmd));
		ret = send_msg(&p, 60000 + sizeof(struct rblk_wire_cmd));
		uint32_t len;

		st = ret ? ret : wait_recv(&p, TMO_MS, &len);
		if (st >= 0)
			st = 0;		/* a response: not what we want */
	} else if (!strcmp(name, "short-capsule")) {
		/* The send area still holds our LOGIN (216 bytes). */
		ret = send_msg(&p, 8);
		st = ret ? ret : told_then_closed(&p, true);
	}
check:
	if (st >= 0)
		printf("RESULT: %s: status %d (%s)\n", name, st, rblk_status_str(st));
	else
		printf("RESULT: %s: %s\n", name, st == -ECONNRESET ?
		       "connection closed by target" : strerror(-st));
	if (hc->exp == EXP_TOLD_CLOSED) {
		probe_close(&p);
		return st == hc->want_status ? 0 : 1;
	}
	if (hc->exp == EXP_STATUS) {
		int ok = st == hc->want_status;

		/* The connection must still work after an error status. */
		if (ok && strcmp(name, "io-before-login")) {
			ret = good_read(&p);
			printf("  follow-up READ: %d (%s)\n", ret,
			       ret >= 0 ? rblk_status_str(ret) : strerror(-ret));
			ok = ret == RBLK_S_OK;
		}
		probe_close(&p);
		return ok ? 0 : 1;
	}
	probe_close(&p);
	return st == -ECONNRESET ? 0 : 1;
}

static int cycles(const char *host, const char *port, const char *volume, int n)
{
	void *buf = aligned_alloc(4096, 8192);
	int fails = 0;

	if (!buf)
		return 1;
	for (int i = 0; i < n; i++) {
		struct rblk_client_opts o = {
			.host = host, .port = port, .volume = volume,
			.hostname = "rdma-probe", .transport = "rdma",
			.queue_id = (unsigned)i, .queue_depth = 4,
		};
		struct rblk_io w = { .opcode = RBLK_OP_WRITE, .offset = 4096 * (i % 64),
				     .length = 4096, .buf = buf };
		struct rblk_io r = { .opcode = RBLK_OP_READ, .offset = w.offset,
				     .length = 4096, .buf = (char *)buf + 4096 };
		struct rblk_io *done[2];
		struct rblk_queue *q;
		char err[256];
		int ret, got = 0;

		memset(buf, i & 0xff, 4096);
		ret = rblk_queue_open(&o, &q, NULL, err, sizeof(err));
		if (ret) {
			printf("cycle %d: open: %s\n", i, err);
			fails++;
			continue;
		}
		ret = rblk_queue_reg_buffer(q, buf, 8192);
		if (!ret)
			ret = rblk_queue_submit(q, &w);
		while (!ret && got < 1) {
			ret = rblk_queue_reap(q, done, 1, 2, TMO_MS);
			got += ret > 0 ? ret : 0;
			ret = ret < 0 ? ret : (ret == 0 ? -ETIMEDOUT : 0);
		}
		if (!ret)
			ret = rblk_queue_submit(q, &r);
		while (!ret && got < 2) {
			ret = rblk_queue_reap(q, done, 1, 2, TMO_MS);
			got += ret > 0 ? ret : 0;
			ret = ret < 0 ? ret : (ret == 0 ? -ETIMEDOUT : 0);
		}
		if (ret || w.status || r.status ||
		    memcmp(buf, (char *)buf + 4096, 4096)) {
			printf("cycle %d: I/O failed: %d w=%d r=%d\n", i, ret,
			       w.status, r.status);
			fails++;
		}
		rblk_queue_close(q);
	}
	free(buf);
	printf("RESULT: cycles: %d of %d failed\n", fails, n);
	return fails ? 1 : 0;
}

/* ---- pre-login connections ------------------------------------------------ */

/* One connection that never sends LOGIN: the smallest QP we can make. */
struct idle_conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	bool established, gone;
};

static void idle_close(struct idle_conn *c)
{
	struct rdma_cm_event *ev;

	if (c->established && !c->gone) {
		rdma_disconnect(c->id);
		if (rblk_rdma_wait_event(c->ch, RDMA_CM_EVENT_DISCONNECTED, 200,
					 &ev) != -ETIMEDOUT && ev)
			rdma_ack_cm_event(ev);
	}
	rblk_rdma_qp_destroy(c->id);
	if (c->cc)
		rblk_rdma_cq_rearm(c->cc, c->cq);
	rblk_rdma_cq_destroy(c->cc, c->cq);
	rblk_rdma_pd_free(c->pd);
	rblk_rdma_id_destroy(c->id);
	rblk_rdma_channel_destroy(c->ch);
	memset(c, 0, sizeof(*c));
}

/* 0 established, -ECONNREFUSED (status in *rej), other -errno. */
static int idle_open(struct idle_conn *c, const char *host, const char *port,
		     unsigned depth, int *rej)
{
	struct rblk_rdma_qp_caps caps = { 4, 4, 1, 1, 0 };
	struct rblk_rdma_cm req = { .queue_depth = (uint16_t)depth };
	uint8_t pdata[sizeof(struct rblk_wire_rdma_cm)];
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	int ret;

	*rej = -1;
	if ((ret = rblk_rdma_channel_create(&c->ch)) ||
	    (ret = rblk_rdma_id_create(c->ch, c, &c->id)) ||
	    (ret = rblk_rdma_resolve(c->id, host, port, RBLK_DEFAULT_RDMA_PORT,
				     TMO_MS)) ||
	    (ret = rblk_rdma_pd_alloc(c->id->verbs, &c->pd)) ||
	    (ret = rblk_rdma_cq_create(c->id->verbs, 16, c, &c->cc, &c->cq)) ||
	    (ret = rblk_rdma_qp_create(c->id, c->pd, c->cq, c->cq, NULL, c, &caps)))
		return ret;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pdata;
	cp.private_data_len = (uint8_t)rblk_encode_rdma_cm(pdata, &req);
	cp.responder_resources = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if ((ret = rblk_cm_err(rdma_connect(c->id, &cp))))
		return ret;
	ret = rblk_rdma_wait_event(c->ch, RDMA_CM_EVENT_ESTABLISHED, TMO_MS, &ev);
	if (ret && ev && ev->event == RDMA_CM_EVENT_REJECTED) {
		struct rblk_rdma_cm r;

		if (rblk_decode_rdma_cm(ev->param.conn.private_data,
					ev->param.conn.private_data_len, &r) == RBLK_S_OK)
			*rej = r.status;
		ret = -ECONNREFUSED;
	}
	if (ev)
		rdma_ack_cm_event(ev);
	if (!ret)
		c->established = true;
	return ret;
}

/* Counts the connections of w[0..n) the target closed since last time. */
static unsigned idle_reap(struct idle_conn *w, unsigned n)
{
	struct rdma_cm_event *ev;
	unsigned gone = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!w[i].established || w[i].gone)
			continue;
		int ret;

		while ((ret = rblk_rdma_get_event(w[i].ch, 0, &ev)) == 0) {
			if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
				w[i].gone = true;
			else
				printf("  connection %u: %s\n", i,
				       rblk_rdma_event_str(ev->event));
			rdma_ack_cm_event(ev);
		}
		if (ret != -EAGAIN)
			printf("  connection %u: %s\n", i, strerror(-ret));
		gone += w[i].gone;
	}
	return gone;
}

/*
 * n connect attempts asking for depth 1024, none of which ever sends
 * LOGIN; at most window stay open (the oldest is closed to make room).
 * Then the last window are held for hold_s seconds, counting the ones the
 * target closes (login_timeout).  Prints what happened; exit 0 unless a
 * connect failed in another way than a reject carrying a status.
 */
static int prelogin(const char *host, const char *port, unsigned n,
		    unsigned window, unsigned hold_s)
{
	struct idle_conn *w = calloc(window, sizeof(*w));
	unsigned ok = 0, rejected = 0, other = 0, open = 0, gone;
	int64_t t0 = rblk_now_ms(), t_hold;

	if (!w)
		return 1;
	for (unsigned i = 0; i < n; i++) {
		struct idle_conn *c = &w[i % window];
		int rej, ret;

		if (c->id)
			idle_close(c);
		ret = idle_open(c, host, port, RBLK_MAX_QUEUE_DEPTH, &rej);
		if (!ret) {
			ok++;
			continue;
		}
		if (ret == -ECONNREFUSED && rej == RBLK_S_NO_RESOURCES)
			rejected++;
		else {
			if (other++ < 5)
				printf("connect %u: %s (reject status %d)\n", i,
				       strerror(-ret), rej);
		}
		idle_close(c);
	}
	for (unsigned i = 0; i < window; i++)
		open += w[i].established;
	printf("RESULT: prelogin: %u attempts in %.1f s: %u accepted, %u rejected NO_RESOURCES, %u other failures; %u open now\n",
	       n, (rblk_now_ms() - t0) / 1000.0, ok, rejected, other, open);
	printf("HOLDING %u\n", open);
	fflush(stdout);
	t_hold = rblk_now_ms();
	do {
		gone = idle_reap(w, window);
		if (gone == open)
			break;
		usleep(100000);
	} while (rblk_now_ms() - t_hold < (int64_t)hold_s * 1000);
	printf("RESULT: prelogin: %u of %u open connections closed by the target within %.1f s\n",
	       gone, open, (rblk_now_ms() - t_hold) / 1000.0);
	for (unsigned i = 0; i < window; i++)
		if (w[i].id)
			idle_close(&w[i]);
	free(w);
	return other ? 1 : 0;
}

/* ---- clients that never take their answers ------------------------------ */

#define HOG_DEPTH	32
#define HOG_IO		(1u << 20)
#define HOG_CAPSULE	256		/* per-tag capsule area in the send area */

/*
 * Connects asking for HOG_DEPTH, logs in, then sends HOG_DEPTH capsules at
 * once (1 MiB each, as 8 descriptors of 128 KiB over our 256 KiB buffer:
 * READs only, READs and WRITEs alternately, or WRITEs only) and from then
 * on neither reposts a receive nor polls its CQ: the first NSLOTS answers
 * (none for WRITEs only) land in receives nobody looks at, every later
 * response SEND meets RNR
 * (we asked for infinite RNR retries, as the client library does), and
 * every RDMA READ of a WRITE's data posted after it waits behind it on
 * the send queue, so the target's chunks for those commands (answers not
 * taken, payloads that never arrive) stay pinned until it gives up on us.
 */
enum hog_kind { HOG_READS, HOG_MIXED, HOG_WRITES };

static int hog_open(struct probe *p, const char *host, const char *port,
		    const char *volume, enum hog_kind kind)
{
	struct rblk_rdma_cm cm = { .queue_depth = HOG_DEPTH };
	uint8_t pd[sizeof(struct rblk_wire_rdma_cm)];
	uint8_t *area;
	int rej, ret;

	p->depth = HOG_DEPTH;
	if (kind == HOG_WRITES) {
		/* One receive, for the LOGIN_RSP: the first answer after it
		 * meets RNR, and every RDMA READ of WRITE data posted after
		 * that answer waits behind it for good. */
		p->rx = 1;
		p->no_repost = true;
	}
	rblk_encode_rdma_cm(pd, &cm);
	ret = probe_connect(p, host, port, pd, sizeof(pd), &rej);
	if (ret)
		return ret;
	if ((ret = probe_login(p, volume)))
		return ret;
	area = p->msg + NSLOTS * SLOT;
	for (unsigned t = 0; t < p->lrsp.queue_depth && t < HOG_DEPTH; t++) {
		bool write = kind == HOG_WRITES || (kind == HOG_MIXED && (t & 1));
		struct rblk_cmd c = { .opcode = write ? RBLK_OP_WRITE : RBLK_OP_READ,
				      .tag = (uint16_t)t, .length = HOG_IO,
				      .offset = (uint64_t)t * HOG_IO % (p->lrsp.size - HOG_IO + 1) &
						~(uint64_t)4095 };
		uint8_t *out = area + t * HOG_CAPSULE;
		unsigned nsge = HOG_IO / (128u << 10);
		uint32_t len = sizeof(struct rblk_wire_cmd) + nsge * sizeof(struct rblk_wire_sge);
		struct ibv_sge s = { .addr = (uintptr_t)out, .length = len,
				     .lkey = p->msg_mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 2000 + t, .sg_list = &s, .num_sge = 1,
					  .opcode = IBV_WR_SEND };

		c.nsge = (uint16_t)nsge;
		rblk_encode_cmd(out, &c, len);
		for (unsigned i = 0; i < nsge; i++) {
			struct rblk_sge d = { (uintptr_t)p->data + (i & 1) * (128u << 10),
					      p->data_mr->rkey, 128u << 10 };

			rblk_encode_sge(out + sizeof(struct rblk_wire_cmd) +
					i * sizeof(struct rblk_wire_sge), &d);
		}
		if ((ret = rblk_rdma_post_send(p->id->qp, &wr)))
			return ret;
	}
	return 0;
}

static int hog(const char *host, const char *port, const char *volume,
	       unsigned n, unsigned hold_s, bool writes_only)
{
	struct probe *p = calloc(n, sizeof(*p));
	unsigned open = 0, gone = 0;
	int64_t t0;

	if (!p)
		return 1;
	for (unsigned i = 0; i < n; i++) {
		int ret = hog_open(&p[i], host, port, volume,
				   writes_only ? HOG_WRITES : (i & 1) ? HOG_READS : HOG_MIXED);

		if (ret) {
			printf("hog %u: %s\n", i, strerror(-ret));
			continue;
		}
		open++;
	}
	printf("FLOODING %u\n", open);
	fflush(stdout);
	t0 = rblk_now_ms();
	while (gone < open && rblk_now_ms() - t0 < (int64_t)hold_s * 1000) {
		struct rdma_cm_event *ev;

		for (unsigned i = 0; i < n; i++) {
			if (!p[i].connected)
				continue;
			while (rblk_rdma_get_event(p[i].ch, 0, &ev) == 0) {
				if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
					p[i].connected = 0;
					gone++;
					printf("  hog %u: closed by the target after %.1f s\n",
					       i, (rblk_now_ms() - t0) / 1000.0);
				}
				rdma_ack_cm_event(ev);
			}
		}
		usleep(100000);
	}
	printf("RESULT: hog: %u of %u flooding connections closed by the target within %.1f s\n",
	       gone, open, (rblk_now_ms() - t0) / 1000.0);
	for (unsigned i = 0; i < n; i++)
		probe_close(&p[i]);
	free(p);
	return open == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	rblk_log_init("rdma_probe");
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
			printf("%s\t%s\n", cases[i].name, cases[i].what);
		return 0;
	}
	if (argc == 6 && !strcmp(argv[4], "cycles"))
		return cycles(argv[1], argv[2], argv[3], atoi(argv[5]));
	if (argc == 7 && (!strcmp(argv[4], "hog") || !strcmp(argv[4], "hog-writes")))
		return hog(argv[1], argv[2], argv[3], (unsigned)atoi(argv[5]),
			   (unsigned)atoi(argv[6]), !strcmp(argv[4], "hog-writes"));
	if (argc == 8 && !strcmp(argv[4], "prelogin"))
		return prelogin(argv[1], argv[2], (unsigned)atoi(argv[5]),
				(unsigned)atoi(argv[6]), (unsigned)atoi(argv[7]));
	if (argc != 5) {
		fprintf(stderr, "usage: rdma_probe HOST PORT VOLUME CASE|cycles N|prelogin N WINDOW HOLD_S|hog N HOLD_S|hog-writes N HOLD_S | list\n");
		return 2;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (!strcmp(cases[i].name, argv[4])) {
			int ret = run_case(&cases[i], argv[1], argv[2], argv[3]);

			printf("VERDICT: %s\n", ret ? "unexpected" : "ok");
			return ret;
		}
	}
	fprintf(stderr, "rdma_probe: unknown case %s\n", argv[4]);
	return 2;
}
