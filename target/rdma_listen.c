// SPDX-License-Identifier: MIT
/*
 * Target RDMA transport, main-thread half: one listening cm_id per
 * listen_rdma address; a CONNECT_REQUEST is validated (CM private data),
 * the connection is built (own CM event channel via rdma_migrate_id, CQ +
 * completion channel, RC QP, receives posted), accepted and handed to a
 * reactor (rdma.c).  Refusals carry a status in the reject's private data.
 * The PD and the MRs over each reactor's buffer pool are per device and
 * shared with the connections (refcounted).
 */
#include "clock.h"
#include "hostport.h"
#include "transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn.h"
#include "log.h"
#include "rdma_int.h"
#include "server.h"

/* ---- devices ----------------------------------------------------------- */

/* Main thread: the device entry for ctx, created on first use. */
static struct rdma_dev *dev_get(struct tgt_listener *l, struct ibv_context *ctx)
{
	struct rdma_dev *d;
	int i, ret;

	for (i = 0; i < MAX_DEVS && l->devs[i]; i++)
		if (l->devs[i]->ctx == ctx)
			goto found;
	if (i == MAX_DEVS)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->n_reactors = l->srv->n_reactors;
	d->pool_mr = calloc(d->n_reactors ? d->n_reactors : 1, sizeof(*d->pool_mr));
	ret = d->pool_mr ? rblk_rdma_pd_alloc(ctx, &d->pd) : -ENOMEM;
	if (ret) {
		rblk_err("rdma: %s: cannot allocate a PD: %s",
			 ibv_get_device_name(ctx->device), strerror(-ret));
		free(d->pool_mr);
		free(d);
		return NULL;
	}
	d->ctx = ctx;
	atomic_init(&d->refs, 1);	/* the listener's */
	l->devs[i] = d;
found:
	atomic_fetch_add(&l->devs[i]->refs, 1);
	return l->devs[i];
}

/* Main thread: the MR over reactor r's pool on d (local access only: the
 * NIC reads and writes it for our own RDMA READ/WRITE; no rkey is ever
 * handed out). */
static struct ibv_mr *dev_pool_mr(struct rdma_dev *d, struct tgt_reactor *r)
{
	unsigned i = tgt_reactor_id(r);
	struct tgt_bufpool *pool = tgt_reactor_pool(r);
	int ret;

	if (i >= d->n_reactors || !pool)
		return NULL;
	if (!d->pool_mr[i]) {
		ret = rblk_rdma_mr_reg(d->pd, tgt_bufpool_base(pool),
				       tgt_bufpool_size(pool),
				       IBV_ACCESS_LOCAL_WRITE, &d->pool_mr[i]);
		if (ret) {
			rblk_err("rdma: cannot register reactor%u's %zu MiB buffer pool: %s (RLIMIT_MEMLOCK?)",
				 i, tgt_bufpool_size(pool) >> 20, strerror(-ret));
			return NULL;
		}
	}
	return d->pool_mr[i];
}

/* ---- listener ----------------------------------------------------------- */

static void reject(struct rdma_cm_id *id, int status)
{
	uint8_t pd[sizeof(struct rblk_wire_rdma_cm)];
	struct rblk_rdma_cm p = { .status = (uint16_t)status };

	rblk_encode_rdma_cm(pd, &p);
	rdma_reject(id, pd, sizeof(pd));
}

/*
 * Every line on the connect path can repeat once per connect attempt (a
 * client retrying, a target at its fd limit): one limiter for all of them,
 * a few lines a second, the rest counted.
 */
static struct rblk_ratelimit conn_rl = RBLK_RATELIMIT_INIT(1000, 5);

/* Out of descriptors or memory: the next request would fail the same way. */
static bool resource_err(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOBUFS ||
	       err == -ENOMEM;
}

/*
 * Main thread: builds the connection for a CONNECT_REQUEST (event already
 * acked), accepts it and hands it to a reactor.  On failure the request is
 * rejected (NO_RESOURCES) and everything, id included, is destroyed.
 * Returns 0 or -errno (-ENOMEM, -EMFILE... tell the caller to back off).
 */
static int build_conn(struct tgt_listener *l, struct rdma_cm_id *id,
		      unsigned depth, uint8_t rd_atom, uint16_t queue_id,
		      struct tgt_host *src)
{
	struct tgt_reactor *r = tgt_server_pick_reactor(l->srv);
	struct rblk_rdma_qp_caps caps;
	struct ibv_device_attr da;
	struct rdma_conn_param cp;
	struct rblk_rdma_cm acc;
	uint8_t pdata[sizeof(struct rblk_wire_rdma_cm)];
	struct rdma_conn *rc;
	struct ibv_mr *pool_mr;
	size_t mem_size;
	unsigned sq_data;
	int ret = -ENOMEM, cqe;

	rc = tgt_conn_alloc(sizeof(*rc));
	if (!rc) {
		rblk_warn_rl(&conn_rl, "rdma: %s: refusing connection: out of memory",
			     l->addr);
		tgt_host_prelogin_put(src);
		reject(id, RBLK_S_NO_RESOURCES);
		rblk_rdma_id_destroy(id);
		return ret;
	}
	rc->c.prelogin = src;
	rc->srv = l->srv;
	rc->poll = l->srv->cfg.rdma_poll;
	rc->poll_us = l->srv->cfg.rdma_poll_us;
	rc->cq_spinning = rc->poll == RBLK_POLL_BUSY;
	rc->depth = depth;
	rc->dev = dev_get(l, id->verbs);
	if (!rc->dev || !r)
		goto out_destroy;
	pool_mr = dev_pool_mr(rc->dev, r);
	if (!pool_mr)
		goto out_destroy;
	rc->pool_lkey = pool_mr->lkey;
	ret = rblk_ibv_err(ibv_query_device(id->verbs, &da));
	if (ret)
		goto out_destroy;
	ret = rblk_rdma_channel_create(&rc->cm_ch);
	if (ret)
		goto out_destroy;
	/* From now on this id's events arrive on the reactor's side. */
	ret = rblk_cm_err(rdma_migrate_id(id, rc->cm_ch));
	if (ret) {
		rblk_err_rl(&conn_rl, "rdma: rdma_migrate_id: %s", strerror(-ret));
		goto out_destroy;
	}
	rc->id = id;
	id->context = rc;
	/* Sends: data chains (a request needs up to max_sge RDMA WRITE/READs
	 * + the response) within a budget that does not grow with the depth
	 * (rdma.c queues what does not fit), plus control PDUs and the drain
	 * marker; receives: depth + the pre-login ones.  Sized for the depth
	 * granted now because a QP cannot grow, but only the receives posted
	 * before LOGIN get buffers (PRE_RX); the rest come at LOGIN. */
	sq_data = depth * (RBLK_MAX_SGE + 1);
	if (sq_data > SQ_DATA_MAX)
		sq_data = SQ_DATA_MAX;
	if (sq_data + CTL_SLOTS + 1 > (uint32_t)da.max_qp_wr)
		sq_data = (uint32_t)da.max_qp_wr - CTL_SLOTS - 1;
	rc->sq_free = sq_data;
	caps = (struct rblk_rdma_qp_caps) {
		.max_send_wr = sq_data + CTL_SLOTS + 1,
		.max_recv_wr = depth + PRE_RX,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	/* Receives and sends on CQs of their own, one channel for both:
	 * the send CQ is armed only when a send completion is awaited
	 * (rdma_poll.c, docs/rdma.md "Send completions"). */
	cqe = (int)caps.max_recv_wr;
	if (cqe > da.max_cqe)
		cqe = da.max_cqe;
	ret = rblk_rdma_cq_create(id->verbs, cqe, rc, &rc->cc, &rc->rcq);
	if (!ret) {
		cqe = (int)caps.max_send_wr;
		if (cqe > da.max_cqe)
			cqe = da.max_cqe;
		ret = rblk_rdma_cq_create_on(id->verbs, cqe, rc, rc->cc, &rc->scq);
	}
	if (ret) {
		rblk_err_rl(&conn_rl, "rdma: ibv_create_cq(%d): %s", cqe,
			    strerror(-ret));
		goto out_destroy;
	}
	ret = rblk_rdma_qp_create(id, rc->dev->pd, rc->scq, rc->rcq, NULL, rc, &caps);
	if (ret) {
		rblk_err_rl(&conn_rl, "rdma: rdma_create_qp(depth %u): %s", depth,
			    strerror(-ret));
		goto out_destroy;
	}
	mem_size = CTL_SMALL * CTL_SMALL_SIZE + CTL_BIG * CTL_BIG_SIZE +
		   PRE_RX * RX_SIZE;
	rc->ctl_mem = aligned_alloc(4096, (mem_size + 4095) & ~(size_t)4095);
	if (!rc->ctl_mem) {
		ret = -ENOMEM;
		goto out_destroy;
	}
	ret = rblk_rdma_mr_reg(rc->dev->pd, rc->ctl_mem, mem_size,
			       IBV_ACCESS_LOCAL_WRITE, &rc->ctl_mr);
	if (ret)
		goto out_destroy;
	ret = tgt_rdma_conn_prepare(rc);
	if (ret)
		goto out_destroy;
	acc = (struct rblk_rdma_cm) { .queue_id = queue_id, .queue_depth = (uint16_t)depth };
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pdata;
	cp.private_data_len = (uint8_t)rblk_encode_rdma_cm(pdata, &acc);
	/* Our RDMA READs in flight: what the initiator can take and we can
	 * issue; we take no RDMA READs (no remote access to target memory). */
	cp.initiator_depth = rd_atom < da.max_qp_init_rd_atom ? rd_atom :
			     (uint8_t)da.max_qp_init_rd_atom;
	cp.responder_resources = 0;
	cp.rnr_retry_count = 7;
	ret = rblk_cm_err(rdma_accept(id, &cp));
	if (ret) {
		rblk_warn_rl(&conn_rl, "rdma: rdma_accept: %s", strerror(-ret));
		goto out_destroy;
	}
	rc->ops = &tgt_transport_rdma;
	rc->work.fn = tgt_rdma_conn_start;
	tgt_reactor_post_work(r, &rc->work);
	return 0;

out_destroy:
	rblk_warn_rl(&conn_rl, "rdma: %s: refusing connection: %s", l->addr,
		     ret ? strerror(-ret) : "out of resources");
	reject(id, RBLK_S_NO_RESOURCES);
	rblk_rdma_qp_destroy(id);
	tgt_rdma_cqs_destroy(rc);
	rblk_rdma_mr_dereg(rc->ctl_mr);
	tgt_rdma_dev_put(rc->dev);
	rblk_rdma_id_destroy(id);
	rblk_rdma_channel_destroy(rc->cm_ch);
	free(rc->ctl_mem);
	tgt_host_prelogin_put(src);
	free(rc);
	return ret ? ret : -ENOMEM;
}

/*
 * build_conn runs on the main thread, which also serves every listener:
 * what it costs there is logged every BUILD_LOG_EVERY connections built
 * (mean and longest since the last line), so that the bound docs/rdma.md
 * gives ("Before LOGIN") can be checked on the device at hand.
 */
#define BUILD_LOG_EVERY	256

static void note_build_time(const char *addr, uint64_t us)
{
	static unsigned n;
	static uint64_t sum, max;

	sum += us;
	if (us > max)
		max = us;
	if (++n < BUILD_LOG_EVERY)
		return;
	rblk_info("rdma: %s: the last %u connections took %" PRIu64 " us each on the main thread (CQ, QP, control area, accept), longest %" PRIu64 " us",
		  addr, n, sum / n, max);
	n = 0;
	sum = max = 0;
}

/* Returns build_conn's result, 0 for a request refused for its contents. */
static int connect_request(struct tgt_listener *l, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct tgt_host *src;
	struct rblk_rdma_cm req;
	unsigned depth;
	uint64_t t0;
	int ret;
	/* The CM reports the request from our side: initiator_depth is how
	 * many RDMA READs the initiator lets us have in flight. */
	uint8_t rd_atom = ev->param.conn.initiator_depth;
	int st;

	rblk_rdma_id_adopt(id);
	st = rblk_decode_rdma_cm(ev->param.conn.private_data,
				 ev->param.conn.private_data_len, &req);
	if (st == RBLK_S_OK && req.status != RBLK_S_OK)
		st = RBLK_S_INVALID_FIELD;
	rdma_ack_cm_event(ev);
	if (st != RBLK_S_OK) {
		rblk_warn_rl(&conn_rl, "rdma: %s: refusing connection: bad private data (%s)",
			     l->addr, rblk_status_str(st));
		reject(id, st);
		rblk_rdma_id_destroy(id);
		return 0;
	}
	/* Over the pre-login caps: refused before anything is built. */
	ret = tgt_host_prelogin_get(l->srv->hosts, rdma_get_peer_addr(id),
				    "rdma", l->addr, &src);
	if (ret) {
		reject(id, RBLK_S_NO_RESOURCES);
		rblk_rdma_id_destroy(id);
		return ret == -EUSERS ? 0 : ret;
	}
	depth = req.queue_depth;
	if (depth > l->srv->cfg.max_queue_depth)
		depth = l->srv->cfg.max_queue_depth;
	t0 = rblk_now_us();
	ret = build_conn(l, id, depth, rd_atom, req.queue_id, src);
	note_build_time(l->addr, rblk_now_us() - t0);
	return ret;
}

int tgt_rdma_accept(struct tgt_listener *l)
{
	struct rdma_cm_event *ev;
	int ret;

	while ((ret = rblk_rdma_get_event(l->ch, 0, &ev)) == 0) {
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			RBLK_DBG(RBLK_DBG_RDMA, "rdma: %s: connect request", l->addr);
			ret = connect_request(l, ev);
			/* Leave the rest queued: the main loop pauses us
			 * instead of refusing every request in the channel. */
			if (resource_err(ret))
				return ret;
			continue;
		}
		rblk_warn_rl(&conn_rl, "rdma: %s: listener event %s (%d)", l->addr,
			     rblk_rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
	}
	return ret == -EAGAIN ? 0 : ret;
}

int tgt_rdma_listen(struct tgt_server *srv, const char *addr,
			struct tgt_listener **lp)
{
	struct tgt_listener *l;
	char host[160], port[12];
	unsigned p;
	int ret;

	if (rblk_split_hostport(addr, host, sizeof(host), &p)) {
		rblk_err("listen_rdma = %s: expected host:port", addr);
		return -EINVAL;
	}
	snprintf(port, sizeof(port), "%u", p ? p : RBLK_DEFAULT_RDMA_PORT);
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->srv = srv;
	snprintf(l->addr, sizeof(l->addr), "%s", addr);
	ret = rblk_rdma_channel_create(&l->ch);
	if (ret) {
		rblk_err("listen_rdma = %s: no RDMA CM (%s): is rdma_cm loaded and an RDMA device up?",
			 addr, strerror(-ret));
		goto out_free;
	}
	ret = rblk_rdma_id_create(l->ch, l, &l->id);
	if (ret)
		goto out_channel;
	ret = rblk_rdma_listen(l->id, host, port, RBLK_DEFAULT_RDMA_PORT, 128);
	if (ret) {
		rblk_err("listen_rdma = %s: %s (no RDMA device on that address?)",
			 addr, strerror(-ret));
		goto out_id;
	}
	rblk_info("listening on rdma %s", addr);
	*lp = l;
	return 0;

out_id:
	rblk_rdma_id_destroy(l->id);
out_channel:
	rblk_rdma_channel_destroy(l->ch);
out_free:
	free(l);
	return ret;
}

int tgt_rdma_listener_fd(struct tgt_listener *l)
{
	return l->ch->fd;
}

void tgt_rdma_unlisten(struct tgt_listener *l)
{
	rblk_rdma_id_destroy(l->id);
	rblk_rdma_channel_destroy(l->ch);
	/* Connections keep their device (PD, pool MRs) until they go. */
	for (unsigned i = 0; i < MAX_DEVS; i++)
		tgt_rdma_dev_put(l->devs[i]);
	free(l);
}

/* The RDMA transport: this file's listener, rdma.c's connections.  A
 * connection learns the table from the listener that built it (rc->ops),
 * so rdma.c never refers back to this file. */
const struct tgt_transport_ops tgt_transport_rdma = {
	.name = "rdma",
	.flags = 0,
	.listen = tgt_rdma_listen,
	.listener_fd = tgt_rdma_listener_fd,
	.accept = tgt_rdma_accept,
	.unlisten = tgt_rdma_unlisten,
	.fetch_data = tgt_rdma_fetch_data,
	.send_rsp = tgt_rdma_send_rsp,
	.send_pdu = tgt_rdma_send_pdu,
	.resume = tgt_rdma_resume,
	.reap = tgt_rdma_reap,
	.shutdown = tgt_rdma_shutdown,
	.free = tgt_rdma_free,
	.login = tgt_rdma_login,
};
