// SPDX-License-Identifier: MIT
/*
 * Target RDMA transport (librdmacm + libibverbs), reactor-thread half;
 * docs/rdma.md has the design.  In short:
 *
 * - Main thread (rdma_listen.c): one listening cm_id per listen_rdma
 *   address.  A CONNECT
 *   REQUEST is validated (CM private data), then the connection is built
 *   there (its own CM event channel via rdma_migrate_id, CQ + completion
 *   channel, RC QP, receive buffers posted), accepted, and handed to a
 *   reactor.  Refusals carry a status in the reject's private data.
 * - Reactor thread: both channel fds are waited on with IORING_OP_POLL_ADD
 *   in the reactor's io_uring; every work request's wr_id points at a
 *   struct tgt_event whose done() gets the completion (res = byte count or
 *   -errno), so completions dispatch like every other reactor event.
 * - WRITE: inline data is copied out of the capsule; otherwise RDMA READs
 *   from the initiator's keyed SGL into the request's pool buffer.  READ:
 *   RDMA WRITE(s) from the pool buffer chained with the response SEND in
 *   one ibv_post_send.  The reactor's pool is registered with the PD for
 *   local access only: initiators can never touch target memory.
 * - A failed transfer (bad rkey, address, length from the initiator) puts
 *   an RC QP in the error state, so the status cannot be delivered on it:
 *   that connection (only) is closed.
 * - Teardown: disconnect (QP to error), drain (a send marker WR comes back
 *   last; posted receives are counted back), then once conn.c dropped its
 *   references: cancel the polls, destroy QP, CQ, channel, MRs, PD
 *   reference, cm_id, channel.
 *
 * This file is the data path (receives, send queue, RDMA READ/WRITE,
 * responses, LOGIN's buffers) and the start of a close; the calls go one
 * way: rdma.c -> rdma_poll.c (completion and CM event polling) ->
 * rdma_teardown.c (drain, failure, destroy), and rdma_listen.c -> rdma.c.
 */
#include "transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "rdma_int.h"
#include "server.h"

static void sq_fail_waiting(struct rdma_conn *rc);
static void flush_posts(struct rdma_conn *rc);

static void start_disconnect(struct rdma_conn *rc)
{
	if (rc->disconnecting)
		return;
	/* What this turn queued goes first (it flushes if the QP failed),
	 * so the drain marker comes back after it.  A post that fails there
	 * closes the connection, which gets here again first. */
	flush_posts(rc);
	if (rc->disconnecting)
		return;
	rc->disconnecting = true;
	/* rdma_disconnect moves the QP to error (flushing what is posted)
	 * and tells the initiator; before ESTABLISHED it can fail. */
	if (rdma_disconnect(rc->id))
		rblk_rdma_qp_to_error(rc->id->qp);
	sq_fail_waiting(rc);
	tgt_rdma_post_drain(rc);
	tgt_rdma_watch_sends(rc);
}

/* Graceful close: disconnect once every response went out. */
static void maybe_disconnect(struct rdma_conn *rc)
{
	if (rc->closing && !rc->disconnecting && tgt_conn_quiet(&rc->c) &&
	    rc->ctl_inflight == 0)
		start_disconnect(rc);
}

/* ---- receive path -------------------------------------------------------- */

static int post_rx(struct rdma_conn *rc, struct rx_slot *s)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf,
		.length = RX_SIZE,
		.lkey = s->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uintptr_t)&s->ev,
		.sg_list = &sge,
		.num_sge = 1,
	};

	int ret = rblk_rdma_post_recv(rc->id->qp, &wr);

	if (!ret)
		rc->rx_posted++;
	return ret;
}

/*
 * For a command on a live connection: returns -EBUSY when its tag still
 * waits for our response's send completion (see rsp_busy); otherwise
 * remembers its descriptors when its tag is free, for fetch_data (WRITE)
 * or send_rsp (READ).  conn.c validates the command itself afterwards.
 */
static int note_cmd(struct rdma_conn *rc, const uint8_t *buf, uint32_t len)
{
	struct rblk_sge sgl[RBLK_MAX_SGE];
	struct rblk_cmd cmd = { .tag = 0 };
	struct tgt_conn *c = &rc->c;
	struct tag_sgl *t;
	int st;

	if (c->state != TGT_CONN_LIVE)
		return 0;
	st = rblk_decode_cmd(buf, len, &c->lim, &cmd, sgl);
	if (st != RBLK_S_BAD_TAG && cmd.tag < rc->io_depth && rc->rsp_busy[cmd.tag])
		return -EBUSY;
	if (st != RBLK_S_OK || cmd.tag >= c->depth || c->reqs[cmd.tag].busy)
		return 0;
	t = &rc->sgl[cmd.tag];
	t->n = cmd.inline_len ? 0 : cmd.nsge;
	memcpy(t->sge, sgl, t->n * sizeof(sgl[0]));
	return 0;
}

/* Offers one received PDU to conn.c.  Returns 0 when consumed (slot
 * reposted), -EAGAIN when conn.c is out of buffers or -EBUSY when its tag
 * waits for a send completion (keep it), or -errno when the connection
 * was closed. */
static int offer(struct rdma_conn *rc, struct rx_slot *s)
{
	struct tgt_conn *c = &rc->c;
	uint32_t length;
	uint8_t type = 0;	/* stays 0 when not even a header came */
	int ret, st;

	st = rblk_decode_hdr(s->buf, s->len, RX_SIZE, &type, &length);
	if (st == RBLK_S_OK && length != s->len)
		st = RBLK_S_INVALID_FIELD;	/* one PDU per SEND */
	if (st != RBLK_S_OK) {
		rblk_warn("rdma: %s: malformed PDU header (%s): closing",
			  c->peer, rblk_status_str(st));
		tgt_conn_fatal(c, st, type, NULL);
		return -EPROTO;
	}
	if (type == RBLK_PDU_CMD && note_cmd(rc, s->buf, length) == -EBUSY)
		return -EBUSY;
	/* DISCOVER is refused while commands are in flight: one whose
	 * answer went out but whose send completion is not taken yet
	 * (held back, rdma_poll.c) is not in flight for the client. */
	if (type == RBLK_PDU_DISCOVER && rc->rsp_unreaped)
		return -EBUSY;
	rc->cur_pdu = s->buf;
	ret = tgt_conn_pdu(c, s->buf, length, length);
	rc->cur_pdu = NULL;
	if (ret == -EAGAIN)
		return ret;
	if (ret) {
		/* -ECONNABORTED: conn.c is closing it (maybe after telling
		 * the peer why); forcing would drop that status. */
		if (ret != -ECONNABORTED)
			tgt_conn_close(c, true, "protocol error");
		return ret;
	}
	if (!rc->disconnecting && !rc->failed) {
		ret = post_rx(rc, s);
		if (ret) {
			tgt_rdma_fail(rc, "cannot repost a receive");
			return ret;
		}
	}
	return 0;
}

/* Offers pending PDUs in arrival order until one has to wait again. */
static void run_pending(struct rdma_conn *rc)
{
	while (rc->pend_head && rc->c.state != TGT_CONN_CLOSING) {
		struct rx_slot *s = rc->pend_head;

		int ret = offer(rc, s);

		if (ret == -EAGAIN || ret == -EBUSY)
			return;
		rc->pend_head = s->next;
		if (!rc->pend_head)
			rc->pend_tail = NULL;
	}
}

static void rx_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rx_slot *s = EV_OWNER(ev, struct rx_slot, ev);
	struct rdma_conn *rc = s->rc;

	rc->rx_posted--;
	if (res < 0 || rc->disconnecting) {
		/* Flushed, failed (the CQ loop closes), or too late to
		 * answer anyway. */
		if (rc->disconnecting)
			tgt_rdma_check_drained(rc, false);
		return;
	}
	s->len = (uint32_t)res;
	s->next = NULL;
	if (rc->c.state == TGT_CONN_CLOSING && !rc->c.draining)
		return;
	if (rc->pend_head) {
		rc->pend_tail->next = s;
		rc->pend_tail = s;
		return;
	}
	res = offer(rc, s);
	if (res == -EAGAIN || res == -EBUSY)
		rc->pend_head = rc->pend_tail = s;
}

static void resume_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rdma_conn *rc = EV_OWNER(ev, struct rdma_conn, resume_ev);

	rc->resume_queued = false;
	run_pending(rc);
	tgt_rdma_watch_sends(rc);
	tgt_conn_put(&rc->c);
}

void tgt_rdma_resume(struct tgt_conn *c)
{
	struct rdma_conn *rc = RC(c);

	tgt_conn_defer_once(c, &rc->resume_ev, &rc->resume_queued);
}

/* ---- send queue budget ------------------------------------------------------ */

/*
 * Data WRs are posted within rc->sq_free (SQ_DATA_MAX at most, whatever
 * the depth, so that a QP made for a deep queue stays small); a request
 * whose chain does not fit waits in order in rc->sq_wait_*.  What a
 * request holds is given back when its signaled WR (the last of its chain)
 * completes, flushed or not.  tgt_req.tp is the transport's: */
#define SQ_HELD(req)	((req)->tp.u64[0])	/* WRs it holds */
#define SQ_NEXT(req)	((req)->tp.ptr[1])	/* wait FIFO link */
#define SQ_KIND(req)	((req)->tp.u64[2])
#define SQ_FETCH	1
#define SQ_RSP		2

static unsigned sq_need(struct rdma_conn *rc, struct tgt_req *req)
{
	unsigned n = rc->sgl[req->tag].n;

	if (SQ_KIND(req) == SQ_FETCH)
		return n;
	return (req->opcode == RBLK_OP_READ && req->status == RBLK_S_OK ? n : 0) + 1;
}

/* True (room taken) when req may post now; else it joins the FIFO. */
static bool sq_take(struct rdma_conn *rc, struct tgt_req *req, unsigned kind)
{
	unsigned n;

	SQ_KIND(req) = kind;
	SQ_HELD(req) = 0;
	n = sq_need(rc, req);
	if (!rc->sq_wait_head && rc->sq_free >= n) {
		rc->sq_free -= n;
		SQ_HELD(req) = n;
		return true;
	}
	SQ_NEXT(req) = NULL;
	if (rc->sq_wait_tail)
		SQ_NEXT(rc->sq_wait_tail) = req;
	else
		rc->sq_wait_head = req;
	rc->sq_wait_tail = req;
	return false;
}

static void sq_give(struct rdma_conn *rc, struct tgt_req *req)
{
	rc->sq_free += SQ_HELD(req);
	SQ_HELD(req) = 0;
}

/* The connection is going: what waits for room fails (on the next turn). */
static void sq_fail_waiting(struct rdma_conn *rc)
{
	struct tgt_req *req;

	while ((req = rc->sq_wait_head)) {
		rc->sq_wait_head = SQ_NEXT(req);
		tgt_reactor_defer(rc->c.r, &req->ev, -ECONNRESET);
	}
	rc->sq_wait_tail = NULL;
}

static int post_fetch(struct rdma_conn *rc, struct tgt_req *req);
static int post_rsp(struct rdma_conn *rc, struct tgt_req *req);

/* ---- doorbell batching ------------------------------------------------------ */

/*
 * Rings the doorbell once for every WR queued this turn.  What the device
 * did not take never completes, so the requests it belongs to fail here;
 * the connection fails with it.
 */
static void flush_posts(struct rdma_conn *rc)
{
	struct ibv_send_wr *head = rc->post_head, *bad = NULL, *wr, *next;
	int err;

	if (!head)
		return;
	rc->post_head = rc->post_tail = NULL;
	err = rblk_ibv_err(ibv_post_send(rc->id->qp, head, &bad));
	if (!err)
		return;
	for (wr = bad ? bad : head; wr; wr = next) {
		next = wr->next;
		if (wr->send_flags & IBV_SEND_SIGNALED)
			tgt_reactor_defer(rc->c.r,
					  (struct tgt_event *)(uintptr_t)wr->wr_id, err);
	}
	tgt_rdma_fail(rc, "cannot post to the send queue");
}

static void post_flush_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rdma_conn *rc = EV_OWNER(ev, struct rdma_conn, post_ev);

	rc->post_queued = false;
	flush_posts(rc);
	tgt_conn_put(&rc->c);
}

/*
 * Posts the chain wr[0..n-1] for tag: a short one joins this turn's batch
 * (its doorbell rings at the end of the turn, after every completion the
 * turn ran), a long one goes at once, after the batch to keep the order.
 */
static int queue_wrs(struct rdma_conn *rc, uint16_t tag,
		     const struct ibv_send_wr *wr, const struct ibv_sge *sge,
		     unsigned n)
{
	struct tag_wrs *t = &rc->wrs[tag];

	if (n > BATCH_WRS) {
		flush_posts(rc);
		if (rc->failed)
			return -ECONNRESET;
		return rblk_rdma_post_send(rc->id->qp, (struct ibv_send_wr *)wr);
	}
	for (unsigned i = 0; i < n; i++) {
		t->sge[i] = sge[i];
		t->wr[i] = wr[i];
		t->wr[i].sg_list = &t->sge[i];
		t->wr[i].next = i + 1 < n ? &t->wr[i + 1] : NULL;
	}
	if (rc->post_tail)
		rc->post_tail->next = &t->wr[0];
	else
		rc->post_head = &t->wr[0];
	rc->post_tail = &t->wr[n - 1];
	tgt_conn_defer_once(&rc->c, &rc->post_ev, &rc->post_queued);
	return 0;
}

/* Posts waiting requests, in order, while they fit. */
static void sq_run(struct rdma_conn *rc)
{
	struct tgt_req *req;

	while ((req = rc->sq_wait_head) && !rc->disconnecting && !rc->failed) {
		unsigned n = sq_need(rc, req);
		int ret;

		if (rc->sq_free < n)
			return;
		rc->sq_wait_head = SQ_NEXT(req);
		if (!rc->sq_wait_head)
			rc->sq_wait_tail = NULL;
		rc->sq_free -= n;
		SQ_HELD(req) = n;
		ret = SQ_KIND(req) == SQ_FETCH ? post_fetch(rc, req) :
						 post_rsp(rc, req);
		if (ret) {
			sq_give(rc, req);
			tgt_reactor_defer(rc->c.r, &req->ev, ret);
			tgt_rdma_fail(rc, "cannot post to the send queue");
		}
	}
}

/* ---- data path ------------------------------------------------------------ */

static void data_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_req *req = EV_OWNER(ev, struct tgt_req, ev);
	struct rdma_conn *rc = RC(req->conn);

	if (SQ_KIND(req) == SQ_FETCH)
		rc->fetches--;
	sq_give(rc, req);
	if (rc->sq_wait_head)
		sq_run(rc);
	tgt_req_data_done(req, res < 0 ? res : 0);
}

static int post_fetch(struct rdma_conn *rc, struct tgt_req *req)
{
	struct tag_sgl *t = &rc->sgl[req->tag];
	struct ibv_send_wr wr[RBLK_MAX_SGE];
	struct ibv_sge sge[RBLK_MAX_SGE];
	uint32_t off = 0;

	for (unsigned i = 0; i < t->n; i++) {
		sge[i] = (struct ibv_sge) {
			.addr = (uintptr_t)req->buf + off,
			.length = t->sge[i].length,
			.lkey = rc->pool_lkey,
		};
		wr[i] = (struct ibv_send_wr) {
			.wr_id = (uintptr_t)&rc->unsig_ev,
			.next = i + 1 < t->n ? &wr[i + 1] : NULL,
			.sg_list = &sge[i],
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
		};
		wr[i].wr.rdma.remote_addr = t->sge[i].addr;
		wr[i].wr.rdma.rkey = t->sge[i].rkey;
		off += t->sge[i].length;
	}
	/* Only the last is signaled: RC completes them in order. */
	wr[t->n - 1].wr_id = (uintptr_t)&req->ev;
	wr[t->n - 1].send_flags = IBV_SEND_SIGNALED;
	return queue_wrs(rc, req->tag, wr, sge, t->n);
}

int tgt_rdma_fetch_data(struct tgt_req *req)
{
	struct rdma_conn *rc = RC(req->conn);
	int ret;

	if (rc->disconnecting || rc->failed)
		return -ECONNRESET;
	req->ev.done = data_done;
	SQ_HELD(req) = 0;
	SQ_KIND(req) = 0;
	if (rc->sgl[req->tag].n == 0) {
		/* Inline: the data follows the capsule in the receive buffer,
		 * which conn.c hands us synchronously (cur_pdu). */
		if (!rc->cur_pdu)
			return -EINVAL;
		memcpy(req->buf, rc->cur_pdu + sizeof(struct rblk_wire_cmd),
		       req->length);
		tgt_reactor_defer(req->conn->r, &req->ev, 0);
		return 0;
	}
	if (sq_take(rc, req, SQ_FETCH)) {
		ret = post_fetch(rc, req);
		if (ret) {
			sq_give(rc, req);
			return ret;
		}
	}	/* else posted by sq_run when room comes back */
	rc->fetches++;
	tgt_rdma_watch_sends(rc);	/* the data's completion is awaited */
	return 0;
}

static void rsp_sent(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_req *req = EV_OWNER(ev, struct tgt_req, ev);
	struct tgt_conn *c = req->conn;

	tgt_conn_get(c);
	/* Not set when the answer was never posted (the connection went
	 * first). */
	if (RC(c)->rsp_busy[req->tag]) {
		RC(c)->rsp_busy[req->tag] = 0;
		RC(c)->rsp_unreaped--;
	}
	sq_give(RC(c), req);
	if (RC(c)->sq_wait_head)
		sq_run(RC(c));
	tgt_req_sent(req, res < 0 ? res : 0);
	if (RC(c)->pend_head)
		run_pending(RC(c));
	maybe_disconnect(RC(c));
	tgt_conn_put(c);
}

static int post_rsp(struct rdma_conn *rc, struct tgt_req *req)
{
	struct tag_sgl *t = &rc->sgl[req->tag];
	struct ibv_send_wr wr[RBLK_MAX_SGE + 1];
	struct ibv_sge sge[RBLK_MAX_SGE + 1];
	uint8_t *slot;
	unsigned n = 0;
	uint32_t off = 0;
	int ret;

	if (req->opcode == RBLK_OP_READ && req->status == RBLK_S_OK) {
		for (; n < t->n; n++) {
			sge[n] = (struct ibv_sge) {
				.addr = (uintptr_t)req->buf + off,
				.length = t->sge[n].length,
				.lkey = rc->pool_lkey,
			};
			wr[n] = (struct ibv_send_wr) {
				.wr_id = (uintptr_t)&rc->unsig_ev,
				.next = &wr[n + 1],
				.sg_list = &sge[n],
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
			};
			wr[n].wr.rdma.remote_addr = t->sge[n].addr;
			wr[n].wr.rdma.rkey = t->sge[n].rkey;
			off += t->sge[n].length;
		}
	}
	slot = rc->mem + (size_t)rc->io_depth * RX_SIZE + (size_t)req->tag * RSP_SLOT;
	memcpy(slot, req->rsp, req->rsp_len);
	sge[n] = (struct ibv_sge) {
		.addr = (uintptr_t)slot,
		.length = req->rsp_len,
		.lkey = rc->mem_mr->lkey,
	};
	wr[n] = (struct ibv_send_wr) {
		.wr_id = (uintptr_t)&req->ev,
		.sg_list = &sge[n],
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	/* Data WRITEs and the response in one chain: RC delivers them in
	 * order, so the initiator sees the data before the response. */
	ret = queue_wrs(rc, req->tag, wr, sge, n + 1);
	if (!ret) {
		rc->rsp_busy[req->tag] = 1;
		rc->rsp_unreaped++;
	}
	return ret;
}

void tgt_rdma_send_rsp(struct tgt_req *req)
{
	struct rdma_conn *rc = RC(req->conn);
	int ret;

	req->ev.done = rsp_sent;
	SQ_HELD(req) = 0;
	if (rc->disconnecting || rc->failed) {
		tgt_reactor_defer(req->conn->r, &req->ev, -ECONNRESET);
		return;
	}
	if (sq_take(rc, req, SQ_RSP)) {
		ret = post_rsp(rc, req);
		if (ret) {
			sq_give(rc, req);
			tgt_reactor_defer(req->conn->r, &req->ev, ret);
			tgt_rdma_fail(rc, "cannot post a response");
			return;
		}
	}	/* else posted by sq_run when room comes back */
	/* Its send completion is awaited only when someone waits on it. */
	tgt_rdma_watch_sends(rc);
}

static void ctl_sent(struct tgt_event *ev, int res, uint32_t flags)
{
	struct ctl_slot *s = EV_OWNER(ev, struct ctl_slot, ev);
	struct rdma_conn *rc = s->rc;

	s->busy = false;
	rc->ctl_inflight--;
	maybe_disconnect(rc);
	tgt_conn_put(&rc->c);
}

int tgt_rdma_send_pdu(struct tgt_conn *c, const void *pdu, size_t len)
{
	struct rdma_conn *rc = RC(c);
	struct ctl_slot *s = NULL;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	int ret;

	if (rc->disconnecting || rc->failed)
		return 0;	/* nobody to tell any more */
	for (unsigned i = 0; i < CTL_SLOTS; i++) {
		if (!rc->ctl[i].busy && rc->ctl[i].size >= len) {
			s = &rc->ctl[i];
			break;
		}
	}
	if (!s)
		return -ENOMEM;
	memcpy(s->buf, pdu, len);
	flush_posts(rc);	/* after the responses queued before it */
	if (rc->failed)
		return 0;
	sge = (struct ibv_sge) {
		.addr = (uintptr_t)s->buf,
		.length = (uint32_t)len,
		.lkey = rc->ctl_mr->lkey,
	};
	wr = (struct ibv_send_wr) {
		.wr_id = (uintptr_t)&s->ev,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	ret = rblk_rdma_post_send(rc->id->qp, &wr);
	if (ret) {
		tgt_rdma_fail(rc, "cannot post a control PDU");
		return 0;
	}
	s->busy = true;
	rc->ctl_inflight++;
	tgt_conn_get(c);
	tgt_rdma_watch_sends(rc);	/* control slots are few */
	return 0;
}

/* ---- closing ------------------------------------------------------------------ */

void tgt_rdma_shutdown(struct tgt_conn *c, bool force)
{
	struct rdma_conn *rc = RC(c);

	rc->closing = true;
	rc->pend_head = rc->pend_tail = NULL;
	if (force)
		start_disconnect(rc);
	else
		maybe_disconnect(rc);
	tgt_rdma_watch_sends(rc);	/* a graceful close waits on answers */
}

/* Main thread, before rdma_accept: wires every completion context and
 * posts the receives.  0 or -errno (the caller tears rc down). */
int tgt_rdma_conn_prepare(struct rdma_conn *rc)
{
	uint8_t *p;
	int ret;

	tgt_rdma_poll_init(rc);
	tgt_rdma_teardown_init(rc);
	rc->post_ev.done = post_flush_done;
	rc->resume_ev.done = resume_done;
	p = rc->ctl_mem;
	for (unsigned i = 0; i < CTL_SLOTS; i++) {
		rc->ctl[i].ev.done = ctl_sent;
		rc->ctl[i].rc = rc;
		rc->ctl[i].buf = p;
		rc->ctl[i].size = i < CTL_SMALL ? CTL_SMALL_SIZE : CTL_BIG_SIZE;
		p += rc->ctl[i].size;
	}
	/* Enough for LOGIN (twice with a challenge) or DISCOVER: the depth's
	 * receives wait for LOGIN to pass (tgt_rdma_login). */
	for (unsigned i = 0; i < PRE_RX; i++) {
		rc->rx_pre[i].ev.done = rx_done;
		rc->rx_pre[i].rc = rc;
		rc->rx_pre[i].buf = p + (size_t)i * RX_SIZE;
		rc->rx_pre[i].lkey = rc->ctl_mr->lkey;
		ret = post_rx(rc, &rc->rx_pre[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * LOGIN is about to be accepted with depth (<= the depth granted at
 * connect): the receive buffers, response slots and per-tag state for it,
 * all receives posted before the LOGIN_RSP goes out, so the initiator's
 * first commands find them.  Registering them here costs this reactor a
 * moment once per logged-in queue, instead of every CONNECT_REQUEST
 * costing the main thread the whole depth.  On failure what was made
 * stays in rc for teardown (receives may be posted already).
 */
int tgt_rdma_login(struct tgt_conn *c, unsigned depth)
{
	struct rdma_conn *rc = RC(c);
	size_t size = (size_t)depth * (RX_SIZE + RSP_SLOT);
	int ret;

	if (depth > rc->depth) {
		rblk_warn("rdma: %s: LOGIN asks for depth %u, the connect was granted %u",
			  c->peer, depth, rc->depth);
		return -EINVAL;
	}
	if (rc->mem)
		return -EALREADY;
	rc->mem = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	rc->rx = calloc(depth, sizeof(*rc->rx));
	rc->sgl = calloc(depth, sizeof(*rc->sgl));
	rc->wrs = calloc(depth, sizeof(*rc->wrs));
	rc->rsp_busy = calloc(depth, 1);
	if (!rc->mem || !rc->rx || !rc->sgl || !rc->wrs || !rc->rsp_busy)
		return -ENOMEM;
	ret = rblk_rdma_mr_reg(rc->dev->pd, rc->mem, size,
			       IBV_ACCESS_LOCAL_WRITE, &rc->mem_mr);
	if (ret) {
		rblk_warn("rdma: %s: cannot register %zu KiB of receive buffers: %s",
			  c->peer, size >> 10, strerror(-ret));
		return ret;
	}
	rc->io_depth = depth;
	for (unsigned i = 0; i < depth; i++) {
		rc->rx[i].ev.done = rx_done;
		rc->rx[i].rc = rc;
		rc->rx[i].buf = rc->mem + (size_t)i * RX_SIZE;
		rc->rx[i].lkey = rc->mem_mr->lkey;
		ret = post_rx(rc, &rc->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Reactor thread: takes over a connection the main thread accepted. */
void tgt_rdma_conn_start(struct tgt_reactor *r, struct tgt_work *w)
{
	struct rdma_conn *rc = EV_OWNER(w, struct rdma_conn, work);
	char peer[80];
	struct sockaddr *sa = rdma_get_peer_addr(rc->id);
	char ip[64] = "?";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, ip, sizeof(ip));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, ip, sizeof(ip));
	snprintf(peer, sizeof(peer), "rdma:%s:%u", ip, ntohs(rdma_get_dst_port(rc->id)));
	if (tgt_reactor_stopping(r)) {
		tgt_host_prelogin_put(rc->c.prelogin);
		tgt_rdma_conn_release(rc);
		free(rc);
		return;
	}
	/* The CM's view of the peer, not anything the client sent: this is
	 * what allow_hosts address entries are checked against. */
	tgt_conn_init(&rc->c, rc->ops, rc->srv, r, peer, sa);
	tgt_conn_get(&rc->c);	/* the transport's, dropped when drained */
	tgt_rdma_poll_start(rc);
	RBLK_DBG(RBLK_DBG_CONN, "reactor%u: %s: RDMA connection, depth %u",
		 tgt_reactor_id(r), peer, rc->depth);
}
