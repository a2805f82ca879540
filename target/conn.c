// SPDX-License-Identifier: MIT
/*
 * Transport-neutral connection core and I/O path: init and close, the
 * login timer, fatal errors, commands (CMD) to the backend and their
 * answers, and the reactor's stop and tick hooks.  LOGIN, DISCOVER and
 * KEEPALIVE, and the entry of every PDU, are conn_ctrl.c's.
 * Every field from the wire goes through proto/ validation before use;
 * a bad command is answered with an error RSP and the connection stays,
 * a framing or state error closes this connection only.
 */
#include "conn_int.h"
#include "clock.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hosts.h"
#include "limit_counts.h"
#include "log.h"
#include "server.h"

/*
 * A connection must finish LOGIN (or DISCOVER) within login_timeout, so
 * idle or half-sent openings cannot pile up.  The timer holds a reference
 * until its CQE (fired or cancelled) comes back.
 */
static void login_timer_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_conn *c = (struct tgt_conn *)
		((char *)ev - offsetof(struct tgt_conn, login_ev));
	char why[64];

	c->login_timer = false;
	if (res == -ETIME && c->state == TGT_CONN_NEW) {
		snprintf(why, sizeof(why), "no LOGIN within %u s",
			 c->srv->cfg.login_timeout);
		tgt_limit_count(TGT_LIM_CLOSED_LOGIN_TIMEOUT);
		tgt_conn_close(c, true, why);
	}
	tgt_conn_put(c);
}

static void login_timer_arm(struct tgt_conn *c)
{
	struct io_uring_sqe *sqe;

	if (!c->srv->cfg.login_timeout)
		return;
	c->login_ts.tv_sec = c->srv->cfg.login_timeout;
	c->login_ts.tv_nsec = 0;
	c->login_ev.done = login_timer_done;
	sqe = tgt_reactor_sqe(c->r);
	io_uring_prep_timeout(sqe, &c->login_ts, 0, 0);
	tgt_sqe_set_event(sqe, &c->login_ev);
	c->login_timer = true;
	tgt_conn_get(c);
}

void tgt_conn_login_timer_cancel(struct tgt_conn *c)
{
	struct io_uring_sqe *sqe;

	if (!c->login_timer || c->login_timer_cancelled)
		return;
	c->login_timer_cancelled = true;
	sqe = tgt_reactor_sqe(c->r);
	io_uring_prep_timeout_remove(sqe, (uint64_t)(uintptr_t)&c->login_ev, 0);
	tgt_sqe_set_event(sqe, NULL);
}

void *tgt_conn_alloc(size_t size)
{
	const size_t align = _Alignof(struct tgt_conn);
	/* aligned_alloc wants a multiple of the alignment */
	void *p = aligned_alloc(align, (size + align - 1) / align * align);

	if (p)
		memset(p, 0, size);
	return p;
}

/* The buffer share takes memory back from a stalled connection so. */
static void share_evict(struct tgt_conn *c, const char *why)
{
	tgt_conn_close(c, true, why);
}

void tgt_conn_init(struct tgt_conn *c, const struct tgt_transport_ops *ops,
		   struct tgt_server *srv, struct tgt_reactor *r,
		   const char *peer, const struct sockaddr *peer_sa)
{
	struct tgt_conn **list = tgt_reactor_conn_list(r);

	c->ops = ops;
	c->srv = srv;
	c->r = r;
	c->state = TGT_CONN_NEW;
	c->refs = 1;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->peer_sa.ss_family = AF_UNSPEC;
	if (peer_sa && peer_sa->sa_family == AF_INET)
		memcpy(&c->peer_sa, peer_sa, sizeof(struct sockaddr_in));
	else if (peer_sa && peer_sa->sa_family == AF_INET6)
		memcpy(&c->peer_sa, peer_sa, sizeof(struct sockaddr_in6));
	tgt_share_conn_init(c, share_evict);
	c->next = *list;
	*list = c;
	atomic_fetch_add(&srv->conns_open, 1);
	c->last_rx_ms = c->last_tx_ms = tgt_reactor_now_ms(r);
	if (srv->hosts) {
		/* Over a limit: told at its first PDU (so that the client
		 * reads a status, not just a close), and the login timer
		 * bounds how long it may wait to send one. */
		int ret = tgt_host_get(srv->hosts, (const struct sockaddr *)&c->peer_sa,
				       &c->phost);

		if (ret) {
			static struct rblk_ratelimit rl = RBLK_RATELIMIT_INIT(1000, 5);

			c->refused = ret;
			tgt_limit_count(ret == -EMFILE ? TGT_LIM_REFUSED_MAX_CONNS_HOST
						       : TGT_LIM_REFUSED_MAX_CONNS);
			rblk_warn_rl(&rl, "reactor%u: %s: connection refused: %s",
				     tgt_reactor_id(r), c->peer,
				     ret == -EMFILE ? "max_connections_per_host reached for this address" :
				     ret == -ENFILE ? "max_connections reached" : strerror(-ret));
		}
	}
	/* A connection accepted while stopping is closed at once. */
	if (tgt_reactor_stopping(r)) {
		c->draining = true;
		tgt_conn_close(c, false, "target is shutting down");
		return;
	}
	login_timer_arm(c);
}

void tgt_conn_close(struct tgt_conn *c, bool force, const char *reason)
{
	if (c->state == TGT_CONN_CLOSING) {
		if (force && !c->force_closed) {
			c->force_closed = true;
			c->ops->shutdown(c, true);
		}
		return;
	}
	if (reason && c->probe)
		RBLK_DBG(RBLK_DBG_CONN, "reactor%u: %s: path probe closing: %s",
			 tgt_reactor_id(c->r), c->peer, reason);
	else if (reason)
		rblk_info("reactor%u: %s%s%s: closing: %s", tgt_reactor_id(c->r),
			  c->peer, c->vol ? " volume " : "",
			  c->vol ? c->vol->name : "", reason);
	c->state = TGT_CONN_CLOSING;
	c->force_closed = force;
	tgt_conn_login_timer_cancel(c);
	/* Waiting for a chunk holds a reference: let it go now rather than
	 * at the next free on this reactor, which may be long. */
	tgt_share_cancel(c);
	c->ops->shutdown(c, force);
	tgt_conn_put(c);	/* the reference tgt_conn_init gave */
}

/*
 * Closes gracefully with a last status PDU, which goes out after the
 * answers of the commands still running: the peer gets what it asked for
 * before it reads why the connection ends.
 */
void tgt_conn_close_told(struct tgt_conn *c, const void *pdu, size_t n,
			const char *why)
{
	if (c->nbusy) {
		memcpy(c->last_pdu, pdu, n);
		c->last_len = (uint8_t)n;
	} else if (c->ops->send_pdu(c, pdu, n)) {
		tgt_conn_close(c, true, "out of memory queueing a status");
		return;
	}
	tgt_conn_close(c, false, why);
}

/* Every LOGIN the target reads gets a LOGIN_RSP, even a refused one. */
void tgt_conn_close_login_told(struct tgt_conn *c, int status, const char *why)
{
	uint8_t pdu[sizeof(struct rblk_wire_login_rsp)];
	struct rblk_login_rsp rsp = { .status = status };

	tgt_conn_close_told(c, pdu, rblk_encode_login_rsp(pdu, &rsp), why);
}

void tgt_conn_fatal(struct tgt_conn *c, int status, uint8_t type,
		    const char *why)
{
	uint8_t pdu[sizeof(c->last_pdu)];
	size_t n;

	_Static_assert(sizeof(pdu) >= sizeof(struct rblk_wire_rsp) &&
		       sizeof(pdu) >= sizeof(struct rblk_wire_discover_rsp),
		       "room for every status PDU");
	if (c->state == TGT_CONN_CLOSING) {
		/* Stopping: the stream cannot be parsed past this point. */
		tgt_conn_close(c, true, why);
		return;
	}
	if (c->state == TGT_CONN_LIVE) {
		struct rblk_rsp rsp = { .tag = RBLK_TAG_NONE, .status = status };

		n = rblk_encode_rsp(pdu, &rsp, 0);
	} else if (type == RBLK_PDU_DISCOVER) {
		n = rblk_encode_discover_rsp(pdu, status, 0, 0);
	} else {
		tgt_conn_close_login_told(c, status, why);
		return;
	}
	tgt_conn_close_told(c, pdu, n, why);
}

/* ---- responses ------------------------------------------------------- */

/* An error RSP not tied to a slot (bad tag, bad capsule, shutting down). */
static void send_err(struct tgt_conn *c, uint32_t tag, int status,
		     uint8_t opcode)
{
	struct rblk_rsp rsp = { .tag = tag, .status = status };
	uint8_t pdu[sizeof(struct rblk_wire_rsp)];
	size_t n = rblk_encode_rsp(pdu, &rsp, 0);

	RBLK_DBG(RBLK_DBG_IO, "reactor%u: %s: tag %u %s: %s",
		 tgt_reactor_id(c->r), c->peer, tag, rblk_opcode_str(opcode),
		 rblk_status_str(status));
	tgt_stats_account(&c->stats, opcode, 0, 0, true);
	if (c->sess)
		tgt_session_account(c->sess, opcode, 0, 0, true);
	if (status == RBLK_S_SHUTTING_DOWN)
		atomic_fetch_add(&c->srv->failed, 1);
	if (c->ops->send_pdu(c, pdu, n))
		tgt_conn_close(c, true, "out of memory queueing a response");
}

/*
 * Counts a command in the stats as its answer is handed to the
 * transport: when the transport learns that it went out is the
 * transport's business (RDMA may take that completion a wakeup later).
 */
static void account_req(struct tgt_req *req)
{
	struct tgt_conn *c = req->conn;
	uint64_t lat = rblk_now_ns() - req->start_ns;
	uint32_t bytes = req->status == RBLK_S_OK ? req->length : 0;

	tgt_stats_account(&c->stats, req->opcode, bytes, lat,
			  req->status != RBLK_S_OK);
	if (c->sess)
		tgt_session_account(c->sess, req->opcode, bytes, lat,
				    req->status != RBLK_S_OK);
}

static void finish_req(struct tgt_req *req, int status)
{
	struct tgt_conn *c = req->conn;
	struct rblk_rsp rsp = { .tag = req->tag, .status = status };
	bool data = status == RBLK_S_OK &&
		    (req->opcode == RBLK_OP_READ || req->opcode == RBLK_OP_WRITE);

	req->status = status;
	if (data)
		rsp.value = req->length;
	req->data_len = (status == RBLK_S_OK && req->opcode == RBLK_OP_READ &&
			 (c->ops->flags & TGT_TP_F_INBAND_DATA)) ? req->length : 0;
	req->rsp_len = rblk_encode_rsp(req->rsp, &rsp, req->data_len);
	if (status == RBLK_S_OK && req->opcode == RBLK_OP_READ) {
		/* Its data goes out with the answer: held until the client
		 * takes it. */
		req->pinned = true;
		tgt_share_pin(c, TGT_PIN_TX, (long)req->buf_cap, false);
	} else {
		/* A WRITE's data is on disk, an error carries none: the
		 * answer does not need the chunk, others may. */
		tgt_share_put(c, req->buf, req->buf_cap);
		req->buf = NULL;
		req->buf_cap = 0;
	}
	account_req(req);
	c->ops->send_rsp(req);
}

/* buf NULL: the chunk goes back to the pool; else *buf, *cap get it. */
static void req_sent(struct tgt_req *req, int err, void **buf, uint32_t *cap)
{
	struct tgt_conn *c = req->conn;

	if (c->draining) {
		if (req->status == RBLK_S_SHUTTING_DOWN)
			atomic_fetch_add(&c->srv->failed, 1);
		else
			atomic_fetch_add(&c->srv->drained, 1);
	}
	if (req->pinned)
		tgt_share_pin(c, TGT_PIN_TX, -(long)req->buf_cap, !err);
	req->pinned = false;
	if (buf) {
		*buf = req->buf;
		*cap = req->buf_cap;
	} else {
		tgt_share_put(c, req->buf, req->buf_cap);
	}
	req->buf = NULL;
	req->buf_cap = 0;
	req->busy = false;
	c->last_tx_ms = tgt_reactor_now_ms(c->r);
	c->nbusy--;
	if (!c->nbusy && c->last_len && !c->force_closed) {
		/* The transport may close once this is queued, not before
		 * (tgt_conn_quiet). */
		uint8_t len = c->last_len;

		c->last_len = 0;
		if (c->ops->send_pdu(c, c->last_pdu, len))
			tgt_conn_close(c, true, "out of memory queueing a status");
	}
	tgt_conn_put(c);
}

void tgt_req_sent(struct tgt_req *req, int err)
{
	req_sent(req, err, NULL, NULL);
}

void tgt_req_sent_keep(struct tgt_req *req, int err, void **buf,
		       uint32_t *cap)
{
	req_sent(req, err, buf, cap);
}

/*
 * A backend's result as a status.  -ESHUTDOWN: this target may not serve
 * the volume now (another target took it over and fenced this one, or the
 * session logged in before that): not run, and the client tries again,
 * on another path when it has one -- SHUTTING_DOWN says exactly that.
 */
static int status_of(int res)
{
	if (res == -ESHUTDOWN)
		return RBLK_S_SHUTTING_DOWN;
	return res < 0 ? RBLK_S_IO_ERROR : RBLK_S_OK;
}

static void io_complete(struct tgt_io *io, int res)
{
	struct tgt_req *req = (struct tgt_req *)io;
	struct tgt_conn *c = req->conn;

	c->ndisk--;
	if (res < 0 && res != -ESHUTDOWN)
		rblk_warn("reactor%u: %s volume %s: %s offset %" PRIu64 " length %u: %s",
			  tgt_reactor_id(c->r), c->peer, c->vol->name,
			  rblk_opcode_str(req->opcode), req->offset, req->length,
			  strerror(-res));
	/* Before the reply: a client that has it sees the counters. */
	if (io->op == TGT_IO_FLUSH || io->fua || io->syncs || io->dsync_writes) {
		bool flush = io->op == TGT_IO_FLUSH;

		tgt_stats_account_dur(&c->stats, flush, io->fua, io->syncs,
				      io->dsync_writes);
		if (c->sess)
			tgt_session_account_dur(c->sess, flush, io->fua,
						io->syncs, io->dsync_writes);
	}
	finish_req(req, status_of(res));
}

static void submit_io(struct tgt_req *req)
{
	static const uint8_t op_map[] = {
		[RBLK_OP_READ] = TGT_IO_READ,
		[RBLK_OP_WRITE] = TGT_IO_WRITE,
		[RBLK_OP_FLUSH] = TGT_IO_FLUSH,
		[RBLK_OP_DISCARD] = TGT_IO_DISCARD,
		[RBLK_OP_WRITE_ZEROES] = TGT_IO_WRITE_ZEROES,
	};
	struct tgt_conn *c = req->conn;
	struct tgt_io *io = &req->io;
	int ret;

	memset(io, 0, sizeof(*io));
	io->r = c->r;
	io->vol = c->vol;
	io->op = op_map[req->opcode];
	io->fua = req->flags & RBLK_CMD_F_FUA;
	io->offset = req->offset;
	io->length = req->length;
	io->buf = req->buf;
	io->buf_index = req->buf ? tgt_reactor_buf_index(c->r) : -1;
	io->complete = io_complete;
	io->epoch = c->vol_epoch;
	io->login_gen = c->login_gen;
	c->ndisk++;
	ret = tgt_backend_submit(io);
	if (ret < 0) {
		c->ndisk--;
		rblk_warn("reactor%u: %s volume %s: cannot submit %s: %s",
			  tgt_reactor_id(c->r), c->peer, c->vol->name,
			  rblk_opcode_str(req->opcode), strerror(-ret));
		finish_req(req, ret == -ENOMEM ? RBLK_S_NO_RESOURCES
					       : status_of(ret));
	}
}

void tgt_req_data_done(struct tgt_req *req, int err)
{
	struct tgt_conn *c = req->conn;

	req->fetching = false;
	c->nfetch--;
	if (req->buf)
		tgt_share_pin(c, TGT_PIN_RX, -(long)req->buf_cap, !err);
	if (!err) {
		submit_io(req);
		return;
	}
	if (c->draining) {
		/* Target stopping: say so while the connection can carry it. */
		finish_req(req, RBLK_S_SHUTTING_DOWN);
		return;
	}
	if (err == -EPIPE) {
		/*
		 * The stream ended inside the payload: this command was never
		 * received, so nothing runs and nothing answers it
		 * (docs/protocol.md, "A PDU cut short").  The slot is freed
		 * as if a reply had gone out; stats count a failed command.
		 */
		req->status = RBLK_S_INVALID_FIELD;
		account_req(req);
		tgt_req_sent(req, err);
		return;
	}
	/* Moving the data from initiator memory failed (RDMA). */
	finish_req(req, RBLK_S_REMOTE_ACCESS);
}

/* ---- commands -------------------------------------------------------- */

/*
 * Pool chunks go through bufshare.h: charged by the chunk's size (not the
 * request's length) to the connection and to its host on this reactor,
 * handed out fairly when memory is short; a connection that cannot have
 * one stops taking PDUs (back-pressure) until ops->resume().
 */
int tgt_req_data_room(struct tgt_req *req, uint32_t have, uint32_t need,
		      uint32_t want)
{
	struct tgt_conn *c = req->conn;
	uint32_t cap;
	void *p;

	if (want > req->length)
		want = req->length;
	if (need > want)
		need = want;
	if (req->buf && req->buf_cap >= need)
		return 0;
	p = tgt_share_take(c, want, need, req->buf ? req->buf_cap : 0, &cap);
	if (!p) {
		tgt_share_wait(c);
		return -EAGAIN;
	}
	if (have)
		memcpy(p, req->buf, have);
	/* The payload is arriving: the new chunk waits on the client. */
	tgt_share_pin(c, TGT_PIN_RX, (long)cap - (long)req->buf_cap, false);
	tgt_share_put(c, req->buf, req->buf_cap);
	req->buf = p;
	req->buf_cap = cap;
	return 0;
}

int tgt_conn_cmd(struct tgt_conn *c, const void *buf, size_t have,
		 uint32_t pdu_len)
{
	struct rblk_sge sgl[RBLK_MAX_SGE];
	struct rblk_cmd cmd;
	struct tgt_req *req;
	void *data = NULL;
	uint32_t cap = 0;
	int st;

	if (c->state == TGT_CONN_NEW) {
		rblk_warn("reactor%u: %s: command before LOGIN (%s): closing",
			  tgt_reactor_id(c->r), c->peer,
			  rblk_status_str(RBLK_S_NOT_LOGGED_IN));
		tgt_conn_fatal(c, RBLK_S_NOT_LOGGED_IN, RBLK_PDU_CMD, NULL);
		return -ECONNABORTED;
	}
	memset(&cmd, 0, sizeof(cmd));
	/* The decoder reads only the capsule and descriptors (have bytes);
	 * pdu_len tells it how much inline data follows in the stream. */
	st = rblk_decode_cmd(buf, pdu_len, &c->lim, &cmd, sgl);
	if (cmd.tag == RBLK_TAG_NONE && c->state == TGT_CONN_LIVE) {
		/* Its answer would read as a connection error: it is one. */
		rblk_warn("reactor%u: %s: command with tag 0x%x (%s): closing",
			  tgt_reactor_id(c->r), c->peer, RBLK_TAG_NONE,
			  rblk_status_str(RBLK_S_BAD_TAG));
		tgt_conn_fatal(c, RBLK_S_BAD_TAG, RBLK_PDU_CMD, NULL);
		return -ECONNABORTED;
	}
	if (c->state == TGT_CONN_CLOSING) {
		send_err(c, cmd.tag, RBLK_S_SHUTTING_DOWN, cmd.opcode);
		return 0;
	}
	if (st == RBLK_S_OK)
		/* The size granted at LOGIN, or the new size once the
		 * initiator was told the volume grew (conn_ctrl.c). */
		st = rblk_check_cmd_range(&cmd, c->sess->size,
					  c->vol->block_size, c->vol->flags);
	if (st == RBLK_S_OK && c->reqs[cmd.tag].busy)
		st = RBLK_S_BAD_TAG;
	if (st != RBLK_S_OK) {
		send_err(c, cmd.tag, st, cmd.opcode);
		return 0;
	}
	/*
	 * A chunk for the data, within the caps.  Without one the capsule is
	 * not taken: the transport stops reading this connection until a
	 * chunk is freed (back-pressure; RDMA leaves it in its receive
	 * buffer, TCP in the stream).  A WRITE over a GROW_DATA transport
	 * takes its chunk as the payload arrives (tgt_req_data_room).
	 */
	if (cmd.opcode == RBLK_OP_READ ||
	    (cmd.opcode == RBLK_OP_WRITE && !(c->ops->flags & TGT_TP_F_GROW_DATA))) {
		data = tgt_share_take(c, cmd.length, cmd.length, 0, &cap);
		if (!data) {
			tgt_share_wait(c);
			return -EAGAIN;
		}
	}
	req = &c->reqs[cmd.tag];
	req->busy = true;
	c->nbusy++;
	tgt_conn_get(c);
	req->conn = c;
	req->tag = cmd.tag;
	req->opcode = cmd.opcode;
	req->flags = cmd.flags;
	req->offset = cmd.offset;
	req->length = cmd.opcode == RBLK_OP_FLUSH ? 0 : cmd.length;
	req->buf = data;
	req->buf_cap = cap;
	req->pinned = false;
	req->status = RBLK_S_OK;
	req->start_ns = rblk_now_ns();
	RBLK_DBG(RBLK_DBG_IO, "reactor%u: %s: tag %u %s offset %" PRIu64 " length %u",
		 tgt_reactor_id(c->r), c->peer, cmd.tag,
		 rblk_opcode_str(cmd.opcode), cmd.offset, cmd.length);
	if (cmd.opcode == RBLK_OP_WRITE) {
		int ret;

		req->fetching = true;
		req->fetch_ms = tgt_reactor_now_ms(c->r);
		req->fetch_paused = tgt_share_paused_ms(c, req->fetch_ms);
		c->nfetch++;
		/* A chunk taken for the payload waits on the client. */
		if (req->buf)
			tgt_share_pin(c, TGT_PIN_RX, (long)req->buf_cap, false);
		ret = c->ops->fetch_data(req);
		if (ret) {
			req->fetching = false;
			c->nfetch--;
			if (req->buf)
				tgt_share_pin(c, TGT_PIN_RX, -(long)req->buf_cap, false);
			finish_req(req, RBLK_S_NO_RESOURCES);
		}
		return 0;
	}
	submit_io(req);
	return 0;
}

/* ---- reactor stop hooks ---------------------------------------------- */

void tgt_conns_stop(struct tgt_reactor *r, bool force)
{
	struct tgt_conn *c, *next;
	unsigned n = 0, inflight = 0;

	for (c = *tgt_reactor_conn_list(r); c; c = next) {
		/* Hold c: closing may drop its last reference. */
		tgt_conn_get(c);
		/* Tell a logged-in initiator before it finds out by the close:
		 * it then reconnects at once instead of after its delay. */
		if (!force && c->state == TGT_CONN_LIVE) {
			uint8_t pdu[sizeof(struct rblk_wire_keepalive_rsp)];

			c->ops->send_pdu(c, pdu, rblk_encode_keepalive(pdu,
					 RBLK_PDU_KEEPALIVE_RSP, RBLK_S_SHUTTING_DOWN, 0,
					 c->sess ? c->sess->size : 0));
		}
		/* One already closing for its own reason (a fatal status
		 * told or waiting to be) reads nothing more: draining would
		 * answer SHUTTING_DOWN after that status, its last PDU. */
		if (c->state != TGT_CONN_CLOSING)
			c->draining = true;
		n++;
		inflight += c->nbusy;
		tgt_conn_close(c, force, NULL);
		next = c->next;
		tgt_conn_put(c);
	}
	if (n)
		rblk_info("reactor%u: %s %u connection(s), %u request(s) in flight",
			  tgt_reactor_id(r), force ? "dropping" : "draining", n,
			  inflight);
}

bool tgt_conns_busy(struct tgt_reactor *r)
{
	return *tgt_reactor_conn_list(r) != NULL;
}

/*
 * About once a second.  A logged-in session that has sent nothing (no
 * command, no KEEPALIVE) and been sent nothing for idle_timeout, with
 * nothing at the disk, is closed: well-behaved clients send a KEEPALIVE
 * every keep_alive_tmo / 3 of silence (docs/protocol.md), so only a gone
 * or hostile one is this quiet, and it would hold a descriptor, a slot
 * table and whatever chunks its unread answers pin for good.  A
 * connection waiting for memory while holding none is a victim, not idle;
 * one with WRITE data on its way answers to data_timeout instead.
 * A WRITE whose payload has not all arrived within data_timeout of its
 * capsule (not counting time the target did not read it for want of
 * memory) closes the connection.  Answers with data that the client has
 * not taken, none of them, for stall_timeout close it too, idle or not,
 * logged in or closing: their chunks are the pool's (bufshare.h also
 * closes such a connection sooner when others wait for memory).
 * Checked on the 1 Hz tick against the reactor's per-turn clock: they
 * fire between the timeout and 1 s after.
 */
static bool payload_late(struct tgt_conn *c, uint64_t now, uint64_t tmo_ms)
{
	/* Time the target spent not reading for want of memory is not the
	 * client's: a payload that has arrived but waits is never late. */
	uint64_t paused = tgt_share_paused_ms(c, now);

	for (unsigned i = 0; i < c->depth; i++) {
		struct tgt_req *req = &c->reqs[i];

		if (req->busy && req->fetching &&
		    now - req->fetch_ms - (paused - req->fetch_paused) >= tmo_ms)
			return true;
	}
	return false;
}

void tgt_conns_tick(struct tgt_reactor *r)
{
	struct tgt_conn *c, *next;
	uint64_t now = tgt_reactor_now_ms(r);

	for (c = *tgt_reactor_conn_list(r); c; c = next) {
		const struct tgt_config *cfg = &c->srv->cfg;
		char why[112];

		tgt_conn_get(c);
		/* Send completions held back are taken within a second, so
		 * that an idle client's last answers do not look stalled. */
		if (c->ops->reap)
			c->ops->reap(c);
		if (c->state == TGT_CONN_LIVE && cfg->data_timeout && c->nfetch &&
		    payload_late(c, now, cfg->data_timeout * 1000ull)) {
			snprintf(why, sizeof(why),
				 "WRITE payload not received within %u s (data_timeout)",
				 cfg->data_timeout);
			tgt_limit_count(TGT_LIM_CLOSED_DATA_TIMEOUT);
			tgt_conn_close(c, true, why);
		} else if (cfg->stall_timeout && !c->force_closed &&
			   tgt_share_stalled_ms(c, TGT_PIN_TX, now) >=
			   cfg->stall_timeout * 1000ull) {
			snprintf(why, sizeof(why),
				 "%zu KiB of answers not taken for %u s (stall_timeout)",
				 c->share.pin[TGT_PIN_TX] >> 10, cfg->stall_timeout);
			tgt_limit_count(TGT_LIM_CLOSED_STALL_TIMEOUT);
			tgt_conn_close(c, true, why);
		} else if (c->state == TGT_CONN_LIVE && cfg->idle_timeout &&
			   now - c->last_rx_ms >= cfg->idle_timeout * 1000ull &&
			   now - c->last_tx_ms >= cfg->idle_timeout * 1000ull &&
			   !c->ndisk && !c->nfetch &&
			   !(c->share.wait != TGT_SHARE_NONE && !c->share.bytes)) {
			snprintf(why, sizeof(why),
				 "idle for %u s: no command or KEEPALIVE (idle_timeout)",
				 cfg->idle_timeout);
			tgt_limit_count(TGT_LIM_CLOSED_IDLE_TIMEOUT);
			/* Answers it does not read are dropped with it. */
			tgt_conn_close(c, c->nbusy != 0, why);
		}
		next = c->next;
		tgt_conn_put(c);
	}
}
