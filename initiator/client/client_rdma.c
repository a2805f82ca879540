// SPDX-License-Identifier: MIT
/*
 * Client RDMA transport (librdmacm + libibverbs), one RC queue pair per
 * queue.  A command is one SEND of the capsule (64 bytes + keyed SGL, or
 * + inline WRITE data); the target moves READ/WRITE data itself with RDMA
 * WRITE/READ into/from the caller's registered buffers and answers with a
 * SEND of the 24-byte response.  No data is copied on this side except
 * small inline writes.
 *
 * Two CQs: responses (receives) complete on a CQ bound to a completion
 * channel; sends complete on a polled CQ that is only drained to recycle
 * send-queue slots.  rblk_queue_fd() is an epoll fd holding the receive
 * completion channel and the CM event channel: a target that disconnects
 * with commands outstanding sends no completion (our QP stays ready until
 * we disconnect too), so its DISCONNECTED event must wake a waiter as well.
 *
 * Receive slots: one large setup slot (LOGIN_RSP, DISCOVER_RSP up to
 * RBLK_DISCOVER_MAX entries) posted before connecting, then queue_depth
 * small slots posted by start().  Receives complete in posting order, so a
 * response may land in any slot; every slot is handled the same way.
 */
#include "clock.h"
#include "client_transport.h"
#include "helpers.h"
#include "log.h"
#include "rdma_verbs.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define SETUP_RECV_SIZE	(sizeof(struct rblk_wire_discover_rsp) + \
			 RBLK_DISCOVER_MAX * sizeof(struct rblk_wire_discover_entry))
#define SETUP_SEND_SIZE	4096
#define RSP_SLOT_SIZE	64		/* a response is 24 bytes */
/* Keyed descriptors cover at most this much each (unless the SGL limit
 * forces bigger ones), so large I/Os exercise multi-descriptor lists. */
#define SGE_CHUNK	(128u << 10)
#define POLL_BATCH	16
#define SQ_STALL_MS	10000
/* Spinning: how often the CM channel is read (a syscall).  Only a target
 * that disconnects needs it, and then a few ms do not matter. */
#define SPIN_CM_MS	10

struct recv_slot {
	uint8_t *buf;
	uint32_t size;
};

struct user_mr {
	uintptr_t start, end;
	struct ibv_mr *mr;
};

/* A command's SEND waiting for rdmac_flush (submit's doorbell). */
struct held_send {
	struct ibv_send_wr wr;
	struct ibv_sge sge;
};

struct rblk_client_conn {
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *rcq_ch;
	struct ibv_cq *rcq;		/* receives, with a channel */
	struct ibv_cq *scq;		/* sends, polled */
	int epfd;			/* rcq_ch + cm_ch, for waiters */
	struct rblk_client_stop stop;	/* cuts setup waits short */
	int connected;
	int failed;			/* -errno once a WC failed */
	int spin;			/* set_spin: poll(.., 0) skips the channel */
	int64_t cm_checked_ms;		/* spinning: last look at the CM channel */

	unsigned sq_size, sq_used;	/* send WRs posted or held, not yet completed */
	/* Commands submitted since the last flush, chained for one post. */
	struct held_send *held;		/* per tag */
	struct ibv_send_wr *held_head, *held_tail;
	unsigned nheld;

	/* setup: [recv SETUP_RECV_SIZE][send SETUP_SEND_SIZE], one MR */
	uint8_t *setup_buf;
	struct ibv_mr *setup_mr;
	struct recv_slot setup_slot;
	int setup_posted;

	/* I/O phase: [depth capsules][depth response slots], one MR */
	unsigned depth;
	uint32_t inline_size, max_sge, capsule_size;
	uint8_t *io_buf;
	struct ibv_mr *io_mr;
	struct recv_slot *slots;

	struct user_mr *umr;
	unsigned n_umr;
};

static int post_slot(struct rblk_client_conn *c, struct recv_slot *s,
		     uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf,
		.length = s->size,
		.lkey = lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uintptr_t)s,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return rblk_rdma_post_recv(c->id->qp, &wr);
}

static uint32_t slot_lkey(struct rblk_client_conn *c, struct recv_slot *s)
{
	return s == &c->setup_slot ? c->setup_mr->lkey : c->io_mr->lkey;
}

/* Reaps send completions (non-blocking); a failed one fails the queue. */
static int drain_sends(struct rblk_client_conn *c)
{
	struct ibv_wc wc[POLL_BATCH];
	int n;

	do {
		n = rblk_rdma_poll(c->scq, POLL_BATCH, wc);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			c->sq_used--;
			if (wc[i].status != IBV_WC_SUCCESS && !c->failed) {
				if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
					rblk_err("rdma: send failed: %s",
						 rblk_rdma_wc_str(wc[i].status));
				c->failed = -ECONNRESET;
			}
		}
	} while (n == POLL_BATCH);
	return c->failed;
}

/*
 * Posts the commands held since the last flush with one ibv_post_send: one
 * doorbell (on Soft-RoCE one system call) for the row.  What the device did
 * not take never completes; the connection has failed then.
 */
static int rdmac_flush(struct rblk_client_conn *c)
{
	struct ibv_send_wr *head = c->held_head, *bad = NULL, *wr;
	int ret;

	if (!head)
		return 0;
	c->held_head = c->held_tail = NULL;
	c->nheld = 0;
	ret = rblk_ibv_err(ibv_post_send(c->id->qp, head, &bad));
	if (!ret)
		return 0;
	for (wr = bad ? bad : head; wr; wr = wr->next)
		c->sq_used--;
	if (!c->failed)
		c->failed = ret;
	return ret;
}

/* The transport op: responses do not need reading for a post to finish. */
static int rdmac_flush_op(struct rblk_client_conn *c, struct rblk_queue *q)
{
	(void)q;
	return rdmac_flush(c);
}

/* Takes room for one send WR in the SQ (held ones count), waiting for it. */
static int sq_reserve(struct rblk_client_conn *c)
{
	int64_t deadline = 0;
	int ret = drain_sends(c);

	/* A send completes as soon as the target acks it, so a full SQ only
	 * lasts a moment; a stall this long means the peer is gone. */
	while (!ret && c->sq_used >= c->sq_size) {
		/* Held sends complete only once posted. */
		if (c->held_head && (ret = rdmac_flush(c)))
			return ret;
		if (!deadline)
			deadline = rblk_now_ms() + SQ_STALL_MS;
		else if (rblk_now_ms() > deadline)
			return -ETIMEDOUT;
		ret = drain_sends(c);
	}
	if (!ret)
		c->sq_used++;
	return ret;
}

/* Posts one signaled SEND of [buf, buf+len) (lkey) now, after the held
 * ones (order is kept). */
static int post_send(struct rblk_client_conn *c, void *buf, uint32_t len,
		     uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	int ret = rdmac_flush(c);

	if (!ret)
		ret = sq_reserve(c);
	if (ret)
		return ret;
	ret = rblk_rdma_post_send(c->id->qp, &wr);
	if (ret)
		c->sq_used--;
	return ret;
}

/* Queues tag's command SEND of [buf, buf+len) (the capsule area) for
 * rdmac_flush. */
static int hold_send(struct rblk_client_conn *c, uint16_t tag, void *buf,
		     uint32_t len)
{
	struct held_send *h = &c->held[tag];
	int ret = sq_reserve(c);

	if (ret)
		return ret;
	h->sge = (struct ibv_sge) { .addr = (uintptr_t)buf, .length = len,
				    .lkey = c->io_mr->lkey };
	h->wr = (struct ibv_send_wr) {
		.sg_list = &h->sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	if (c->held_tail)
		c->held_tail->next = &h->wr;
	else
		c->held_head = &h->wr;
	c->held_tail = &h->wr;
	c->nheld++;
	return 0;
}

/* ---- connect ----------------------------------------------------------- */

static int reject_errno(struct rdma_cm_event *ev, char *errbuf, size_t errlen,
			const char *who)
{
	struct rblk_rdma_cm pd;

	if (ev->event == RDMA_CM_EVENT_REJECTED &&
	    rblk_decode_rdma_cm(ev->param.conn.private_data,
				ev->param.conn.private_data_len, &pd) == RBLK_S_OK &&
	    pd.status != RBLK_S_OK) {
		rblk_client_set_err(errbuf, errlen, "%s refused the RDMA connection: %s", who,
			rblk_status_str(pd.status));
		return pd.status == RBLK_S_BAD_VERSION ? -EPROTO :
		       pd.status == RBLK_S_NO_RESOURCES ? -ENOMEM : -ECONNREFUSED;
	}
	rblk_client_set_err(errbuf, errlen, "RDMA connect to %s failed: %s (status %d)", who,
		rblk_rdma_event_str(ev->event), ev->status);
	return ev->event == RDMA_CM_EVENT_REJECTED ? -ECONNREFUSED : -EHOSTUNREACH;
}

static void rdmac_close(struct rblk_client_conn *c);

/* The CM id resolved to the target's device, and its protection domain. */
static int rdmac_resolve(struct rblk_client_conn *c,
			 const struct rblk_client_conn_params *p,
			 struct ibv_device_attr *dev, char *errbuf, size_t errlen)
{
	int ret;

	ret = rblk_rdma_channel_create(&c->cm_ch);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "rdma_create_event_channel: %s (no RDMA device?)",
			strerror(-ret));
		return ret;
	}
	ret = rblk_rdma_id_create(c->cm_ch, c, &c->id);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "rdma_create_id: %s", strerror(-ret));
		return ret;
	}
	ret = rblk_rdma_resolve(c->id, p->host, p->port, RBLK_DEFAULT_RDMA_PORT,
				p->timeout_ms);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "cannot resolve RDMA route to %s:%s: %s",
			p->host, p->port, strerror(-ret));
		return ret;
	}
	ret = rblk_ibv_err(ibv_query_device(c->id->verbs, dev));
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "ibv_query_device: %s", strerror(-ret));
		return ret;
	}
	ret = rblk_rdma_pd_alloc(c->id->verbs, &c->pd);
	if (ret)
		rblk_client_set_err(errbuf, errlen, "ibv_alloc_pd: %s", strerror(-ret));
	return ret;
}

/* Completion queues, the queue pair, and the registered buffer of the
 * setup messages with its receive posted: all a connection needs before
 * rdma_connect. */
static int rdmac_create_queues(struct rblk_client_conn *c,
			       const struct rblk_client_conn_params *p,
			       char *errbuf, size_t errlen)
{
	struct rblk_rdma_qp_caps caps;
	unsigned cqe;
	int ret;

	/* Sends: one capsule per tag, and a tag can be reused before its
	 * send completion was reaped: room for two rounds. */
	c->sq_size = 2u * p->queue_depth + 4;
	cqe = p->queue_depth + 2;
	ret = rblk_rdma_cq_create(c->id->verbs, (int)cqe, c, &c->rcq_ch, &c->rcq);
	if (!ret)
		ret = rblk_rdma_cq_create(c->id->verbs, (int)c->sq_size, c, NULL,
					  &c->scq);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "ibv_create_cq: %s", strerror(-ret));
		return ret;
	}
	caps = (struct rblk_rdma_qp_caps) {
		.max_send_wr = c->sq_size,
		.max_recv_wr = cqe,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	ret = rblk_rdma_qp_create(c->id, c->pd, c->scq, c->rcq, NULL, c, &caps);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "rdma_create_qp: %s", strerror(-ret));
		return ret;
	}
	/* aligned_alloc wants a size that is a multiple of the alignment. */
	c->setup_buf = aligned_alloc(4096, (SETUP_RECV_SIZE + SETUP_SEND_SIZE + 4095) &
					   ~(size_t)4095);
	if (!c->setup_buf) {
		rblk_client_set_err(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = rblk_rdma_mr_reg(c->pd, c->setup_buf, SETUP_RECV_SIZE + SETUP_SEND_SIZE,
			       IBV_ACCESS_LOCAL_WRITE, &c->setup_mr);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "ibv_reg_mr: %s", strerror(-ret));
		return ret;
	}
	c->setup_slot = (struct recv_slot) { c->setup_buf, SETUP_RECV_SIZE };
	ret = post_slot(c, &c->setup_slot, c->setup_mr->lkey);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "ibv_post_recv: %s", strerror(-ret));
		return ret;
	}
	c->setup_posted = 1;
	return 0;
}

/* rdma_connect with our queue in the private data, then wait for
 * ESTABLISHED and check what the target accepted. */
static int rdmac_cm_connect(struct rblk_client_conn *c,
			    const struct rblk_client_conn_params *p,
			    const struct ibv_device_attr *dev,
			    char *errbuf, size_t errlen)
{
	uint8_t pdata[sizeof(struct rblk_wire_rdma_cm)];
	struct rblk_rdma_cm priv, acc;
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	int ret;

	priv = (struct rblk_rdma_cm) {
		.queue_id = p->queue_id,
		.queue_depth = p->queue_depth,
	};
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pdata;
	cp.private_data_len = (uint8_t)rblk_encode_rdma_cm(pdata, &priv);
	/* The target RDMA-READs WRITE data from us: let it have as many
	 * reads in flight as the device allows.  We issue none. */
	cp.responder_resources = (uint8_t)(dev->max_qp_rd_atom > 255 ? 255 :
					   dev->max_qp_rd_atom);
	cp.initiator_depth = 0;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	ret = rblk_cm_err(rdma_connect(c->id, &cp));
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "rdma_connect: %s", strerror(-ret));
		return ret;
	}
	/* The CM event comes on the channel's fd: wait there first, so a
	 * stopping caller is heard; the event itself is then at hand. */
	ev = NULL;
	ret = rblk_client_wait_fd(c->cm_ch->fd, POLLIN, p->timeout_ms, &c->stop, NULL);
	if (!ret)
		ret = rblk_rdma_wait_event(c->cm_ch, RDMA_CM_EVENT_ESTABLISHED,
					   p->timeout_ms, &ev);
	if (ret) {
		char who[300];

		snprintf(who, sizeof(who), "%s:%s", p->host, p->port);
		if (ev) {
			ret = reject_errno(ev, errbuf, errlen, who);
			rdma_ack_cm_event(ev);
		} else {
			rblk_client_set_err(errbuf, errlen, "RDMA connect to %s: %s", who,
				ret == -ETIMEDOUT ? "timed out" : strerror(-ret));
		}
		return ret;
	}
	ret = rblk_decode_rdma_cm(ev->param.conn.private_data,
				  ev->param.conn.private_data_len, &acc);
	rdma_ack_cm_event(ev);
	c->connected = 1;
	if (ret != RBLK_S_OK || acc.status != RBLK_S_OK ||
	    acc.queue_depth > p->queue_depth) {
		rblk_client_set_err(errbuf, errlen, "target accepted with bad private data (%s)",
			rblk_status_str(ret != RBLK_S_OK ? ret : acc.status));
		return -EPROTO;
	}
	RBLK_DBG(RBLK_DBG_CONN, "rdma: connected to %s:%s queue %u, depth %u",
		 p->host, p->port, p->queue_id, acc.queue_depth);
	return 0;
}

static int rdmac_connect(const struct rblk_client_conn_params *p,
			 struct rblk_client_conn **connp, char *errbuf,
			 size_t errlen)
{
	struct ibv_device_attr dev;
	struct rblk_client_conn *c;
	int ret;

	if (p->source_addr) {
		rblk_client_set_err(errbuf, errlen, "a source address is supported on tcp only");
		return -EOPNOTSUPP;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		rblk_client_set_err(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	c->epfd = -1;
	c->stop = p->stop;
	ret = rdmac_resolve(c, p, &dev, errbuf, errlen);
	if (!ret)
		ret = rdmac_create_queues(c, p, errbuf, errlen);
	if (!ret)
		ret = rdmac_cm_connect(c, p, &dev, errbuf, errlen);
	if (ret)
		goto out_close;
	/* One fd to wait on: receive completions and CM events. */
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0 ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->rcq_ch->fd,
		      &(struct epoll_event) { .events = EPOLLIN }) ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->cm_ch->fd,
		      &(struct epoll_event) { .events = EPOLLIN })) {
		ret = -errno;
		rblk_client_set_err(errbuf, errlen, "epoll: %s", strerror(-ret));
		goto out_close;
	}
	*connp = c;
	return 0;

out_close:
	rdmac_close(c);
	return ret;
}

/* ---- setup messages ---------------------------------------------------- */

static int rdmac_send_msg(struct rblk_client_conn *c, const void *buf,
			 size_t len, int timeout_ms)
{
	uint8_t *sbuf = c->setup_buf + SETUP_RECV_SIZE;

	if (len > SETUP_SEND_SIZE)
		return -EMSGSIZE;
	memcpy(sbuf, buf, len);
	/* Its completion is reaped later; a failure shows up as a flushed
	 * receive in recv_msg. */
	return post_send(c, sbuf, (uint32_t)len, c->setup_mr->lkey);
}

/* Waits on the receive CQ's channel up to timeout_ms (-1: forever); stop
 * (setup waits) cuts it short. */
static int wait_rcq(struct rblk_client_conn *c, int timeout_ms,
		    const struct rblk_client_stop *stop)
{
	return rblk_client_wait_fd(c->epfd, POLLIN, timeout_ms, stop, NULL);
}

/* Consumes a pending channel event (re-arming the CQ); then the CQ must be
 * polled empty. */
static int rearm(struct rblk_client_conn *c)
{
	int ret = rblk_rdma_cq_rearm(c->rcq_ch, c->rcq);

	return ret < 0 ? ret : 0;
}

/*
 * Takes pending CM events (non-blocking).  The target going away
 * (DISCONNECTED, device removal, errors) fails the connection: we
 * disconnect too, which flushes everything posted.  warn: log the loss
 * (the I/O phase); the setup phase reports it to its caller instead.
 */
static int check_cm(struct rblk_client_conn *c, bool warn)
{
	struct rdma_cm_event *ev;

	while (rblk_rdma_get_event(c->cm_ch, 0, &ev) == 0) {
		enum rdma_cm_event_type type = ev->event;

		rdma_ack_cm_event(ev);
		RBLK_DBG(RBLK_DBG_RDMA, "rdma: %s", rblk_rdma_event_str(type));
		if (type == RDMA_CM_EVENT_TIMEWAIT_EXIT ||
		    type == RDMA_CM_EVENT_ESTABLISHED)
			continue;
		if (!c->failed && warn)
			rblk_warn("rdma: connection lost: %s", rblk_rdma_event_str(type));
		else if (!c->failed)
			RBLK_DBG(RBLK_DBG_RDMA, "rdma: setup connection lost: %s",
				 rblk_rdma_event_str(type));
		c->failed = -ECONNRESET;
		if (c->connected) {
			rdma_disconnect(c->id);
			c->connected = 0;
		}
	}
	return c->failed;
}

static int wc_error(struct rblk_client_conn *c, const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		RBLK_DBG(RBLK_DBG_RDMA, "rdma: receive flushed: connection closing");
	else
		rblk_err("rdma: receive failed: %s", rblk_rdma_wc_str(wc->status));
	c->failed = -ECONNRESET;
	return c->failed;
}

static int rdmac_recv_msg(struct rblk_client_conn *c, void *buf, size_t max,
			 int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : rblk_now_ms() + timeout_ms;
	struct recv_slot *s;
	struct ibv_wc wc;
	uint32_t length;
	uint8_t type;
	int ret, n;

	if (!c->setup_posted)
		return -EINVAL;
	for (;;) {
		ret = rearm(c);
		if (ret)
			return ret;
		n = rblk_rdma_poll(c->rcq, 1, &wc);
		if (n < 0)
			return n;
		if (n == 1)
			break;
		ret = drain_sends(c);
		if (!ret && c->connected)
			ret = check_cm(c, false);
		if (ret) {
			/* The target closes right after its answer to a
			 * DISCOVER or a refused LOGIN, once our side acked it;
			 * that answer's completion can land between the poll
			 * above and the DISCONNECTED event.  It is ahead of
			 * the flushed receives: look once more. */
			n = rblk_rdma_poll(c->rcq, 1, &wc);
			if (n == 1 && wc.status == IBV_WC_SUCCESS)
				break;
			return ret;
		}
		if (deadline >= 0 && rblk_now_ms() >= deadline)
			return -ETIMEDOUT;
		ret = wait_rcq(c, deadline < 0 ? -1 : (int)(deadline - rblk_now_ms()),
			       &c->stop);
		if (ret && ret != -ETIMEDOUT)
			return ret;
	}
	if (wc.status != IBV_WC_SUCCESS)
		return wc_error(c, &wc);
	s = (struct recv_slot *)(uintptr_t)wc.wr_id;
	c->setup_posted = 0;
	if (rblk_decode_hdr(s->buf, wc.byte_len, (uint32_t)max, &type, &length) !=
	    RBLK_S_OK || length != wc.byte_len)
		return -EPROTO;
	memcpy(buf, s->buf, length);
	/* Ready for the next setup message (an auth challenge round). */
	ret = post_slot(c, s, slot_lkey(c, s));
	if (ret)
		return ret;
	c->setup_posted = 1;
	return (int)length;
}

/* ---- I/O phase --------------------------------------------------------- */

static int rdmac_start(struct rblk_client_conn *c,
		      const struct rblk_client_geometry *g)
{
	size_t caps_bytes, total;
	int ret;

	if (g->queue_depth == 0 || g->queue_depth > (c->sq_size - 4) / 2)
		return -EPROTO;
	c->depth = g->queue_depth;
	c->inline_size = g->inline_size;
	c->max_sge = g->max_sge ? g->max_sge : 1;
	if (c->max_sge > RBLK_MAX_SGE)
		c->max_sge = RBLK_MAX_SGE;
	c->capsule_size = sizeof(struct rblk_wire_cmd) +
			  c->max_sge * sizeof(struct rblk_wire_sge) + c->inline_size;
	caps_bytes = (size_t)c->depth * c->capsule_size;
	total = caps_bytes + (size_t)c->depth * RSP_SLOT_SIZE;
	c->io_buf = aligned_alloc(4096, (total + 4095) & ~(size_t)4095);
	c->slots = calloc(c->depth, sizeof(*c->slots));
	c->held = calloc(c->depth, sizeof(*c->held));
	if (!c->io_buf || !c->slots || !c->held)
		return -ENOMEM;
	ret = rblk_rdma_mr_reg(c->pd, c->io_buf, total, IBV_ACCESS_LOCAL_WRITE,
			       &c->io_mr);
	if (ret)
		return ret;
	for (unsigned i = 0; i < c->depth; i++) {
		c->slots[i] = (struct recv_slot) {
			c->io_buf + caps_bytes + (size_t)i * RSP_SLOT_SIZE,
			RSP_SLOT_SIZE,
		};
		ret = post_slot(c, &c->slots[i], c->io_mr->lkey);
		if (ret)
			return ret;
	}
	return 0;
}

static int rdmac_reg_buffer(struct rblk_client_conn *c, void *buf, size_t len)
{
	struct user_mr *n;
	struct ibv_mr *mr;
	int ret;

	if (!buf || !len)
		return -EINVAL;
	ret = rblk_rdma_mr_reg(c->pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, &mr);
	if (ret) {
		rblk_err("rdma: cannot register %zu bytes at %p: %s", len, buf,
			 strerror(-ret));
		return ret;
	}
	n = realloc(c->umr, (c->n_umr + 1) * sizeof(*n));
	if (!n) {
		rblk_rdma_mr_dereg(mr);
		return -ENOMEM;
	}
	c->umr = n;
	c->umr[c->n_umr++] = (struct user_mr) {
		(uintptr_t)buf, (uintptr_t)buf + len, mr,
	};
	return 0;
}

static const struct user_mr *find_mr(const struct rblk_client_conn *c,
				     uintptr_t addr)
{
	for (unsigned i = 0; i < c->n_umr; i++)
		if (addr >= c->umr[i].start && addr < c->umr[i].end)
			return &c->umr[i];
	return NULL;
}

/*
 * Describes [buf, buf+len) as keyed descriptors into out (at most max):
 * split at MR boundaries and into pieces of at most chunk bytes.
 * Returns the count, or -EINVAL when part of the range is not registered
 * or it needs more than max descriptors.
 */
static int build_sgl(const struct rblk_client_conn *c, void *buf, uint32_t len,
		     uint8_t *out, unsigned max)
{
	uint32_t chunk = SGE_CHUNK;
	uintptr_t a = (uintptr_t)buf;
	unsigned n = 0;

	if ((len + chunk - 1) / chunk > max)
		chunk = (len + max - 1) / max;
	while (len) {
		const struct user_mr *m = find_mr(c, a);
		struct rblk_sge s;
		uint64_t piece;

		if (!m || n == max)
			return -EINVAL;
		piece = m->end - a;
		if (piece > len)
			piece = len;
		if (piece > chunk)
			piece = chunk;
		s = (struct rblk_sge) {
			.addr = a,
			.rkey = m->mr->rkey,
			.length = (uint32_t)piece,
		};
		rblk_encode_sge(out + n * sizeof(struct rblk_wire_sge), &s);
		n++;
		a += piece;
		len -= (uint32_t)piece;
	}
	return (int)n;
}

static int rdmac_submit(struct rblk_client_conn *c, struct rblk_queue *q,
		       struct rblk_io *io)
{
	uint8_t *cap = c->io_buf + (size_t)io->tag * c->capsule_size;
	uint8_t *tail = cap + sizeof(struct rblk_wire_cmd);
	struct rblk_cmd cmd = {
		.opcode = io->opcode,
		.flags = io->flags,
		.tag = io->tag,
		.offset = io->offset,
		.length = io->length,
	};
	uint32_t extra = 0;
	int n;

	if (c->failed)
		return c->failed;
	if (io->tag >= c->depth)
		return -EINVAL;
	if (io->opcode == RBLK_OP_WRITE && io->length <= c->inline_size) {
		/* Small writes ride in the capsule: no RDMA READ round trip. */
		memcpy(tail, io->buf, io->length);
		extra = io->length;
	} else if (io->opcode == RBLK_OP_READ || io->opcode == RBLK_OP_WRITE) {
		n = build_sgl(c, io->buf, io->length, tail, c->max_sge);
		if (n < 0)
			return n;
		cmd.nsge = (uint16_t)n;
		extra = (uint32_t)n * sizeof(struct rblk_wire_sge);
	}
	rblk_encode_cmd(cap, &cmd, sizeof(struct rblk_wire_cmd) + extra);
	return hold_send(c, io->tag, cap, sizeof(struct rblk_wire_cmd) + extra);
}

/*
 * KEEPALIVE goes from the setup area's send half: LOGIN is over, and the
 * core has one keep-alive out at a time, answered only after the target
 * received this SEND, so the bytes are never overwritten while in use.
 * The target takes it into a receive like a capsule; our answer lands in
 * any response slot (the setup slot, reposted after LOGIN, is one spare).
 */
static int rdmac_keepalive(struct rblk_client_conn *c, struct rblk_queue *q,
			  const void *pdu, size_t len)
{
	uint8_t *sbuf = c->setup_buf + SETUP_RECV_SIZE;

	if (c->failed)
		return c->failed;
	memcpy(sbuf, pdu, len);
	return post_send(c, sbuf, (uint32_t)len, c->setup_mr->lkey);
}

/* Handles one receive completion in the I/O phase: 1 when it completed an
 * I/O, 0 for a keep-alive answer, or -errno. */
static int handle_recv(struct rblk_client_conn *c, struct rblk_queue *q,
		       const struct ibv_wc *wc)
{
	struct recv_slot *s = (struct recv_slot *)(uintptr_t)wc->wr_id;
	struct rblk_io *io;
	struct rblk_rsp rsp;
	uint16_t ka_status;
	uint64_t ka_seq, ka_size;
	int ret;

	if (wc->status != IBV_WC_SUCCESS)
		return wc_error(c, wc);
	/* A KEEPALIVE_RSP: 32 bytes, or 24 from an older target (as long
	 * as a response: its type tells them apart). */
	if (rblk_decode_keepalive(s->buf, wc->byte_len, RBLK_PDU_KEEPALIVE_RSP,
				  &ka_status, &ka_seq, &ka_size) == RBLK_S_OK) {
		ret = post_slot(c, s, slot_lkey(c, s));
		if (ret)
			return ret;
		return rblk_client_keepalive_rsp(q, ka_status, ka_seq, ka_size);
	}
	if (wc->byte_len != sizeof(struct rblk_wire_rsp) ||
	    rblk_decode_rsp(s->buf, wc->byte_len, &rsp) != RBLK_S_OK) {
		rblk_err("rdma: malformed response (%u bytes)", wc->byte_len);
		return -EPROTO;
	}
	ret = post_slot(c, s, slot_lkey(c, s));
	if (ret)
		return ret;
	io = rblk_client_inflight_io(q, rsp.tag);
	if (!io) {
		rblk_err("rdma: response for tag %u that is not in flight", rsp.tag);
		return -EPROTO;
	}
	ret = rblk_client_complete(q, &rsp,
				   rsp.status == RBLK_S_OK &&
				   io->opcode == RBLK_OP_READ ?
				   (uint32_t)rsp.value : 0);
	return ret ? ret : 1;
}

/* Polls the receive CQ empty; returns responses completed or -errno. */
static int drain_recvs(struct rblk_client_conn *c, struct rblk_queue *q,
		       int *nwc)
{
	struct ibv_wc wc[POLL_BATCH];
	int n, done = 0, ret;

	do {
		n = rblk_rdma_poll(c->rcq, POLL_BATCH, wc);
		if (n < 0)
			return n;
		if (nwc)
			*nwc += n;
		for (int i = 0; i < n; i++) {
			ret = handle_recv(c, q, &wc[i]);
			if (ret < 0)
				return ret;
			done += ret;
		}
	} while (n == POLL_BATCH);
	return done;
}

/*
 * poll(.., 0) while spinning: the CQs only, no syscall when nothing came.
 * The CM channel costs one, so it is looked at every SPIN_CM_MS: a target
 * that disconnects with commands outstanding sends no completion.
 */
static int spin_poll(struct rblk_client_conn *c, struct rblk_queue *q)
{
	int64_t now;
	int done, ret;

	done = drain_recvs(c, q, NULL);
	if (done)
		return done;
	ret = drain_sends(c);
	if (ret)
		return ret;
	now = rblk_now_ms();
	if (now - c->cm_checked_ms < SPIN_CM_MS)
		return 0;
	c->cm_checked_ms = now;
	return check_cm(c, true);
}

static int rdmac_poll(struct rblk_client_conn *c, struct rblk_queue *q,
		     int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : rblk_now_ms() + timeout_ms;
	int ret, done;

	if (c->failed)
		return c->failed;
	if (c->spin) {
		if (timeout_ms == 0)
			return spin_poll(c, q);
		/* A spinner that waits after all: the CQ was not armed. */
		ret = rblk_rdma_cq_arm(c->rcq);
		if (ret)
			return ret;
	}
	for (;;) {
		/* Event first, then poll: a completion after the poll raises a
		 * new event because the CQ is armed again. */
		ret = rearm(c);
		if (ret)
			return ret;
		done = drain_recvs(c, q, NULL);
		if (done)
			return done;
		ret = drain_sends(c);
		if (!ret)
			ret = check_cm(c, true);
		if (ret)
			return ret;
		if (timeout_ms == 0 || (deadline >= 0 && rblk_now_ms() >= deadline))
			return 0;
		ret = wait_rcq(c, deadline < 0 ? -1 : (int)(deadline - rblk_now_ms()),
			       NULL);	/* the caller slices it */
		if (ret && ret != -ETIMEDOUT)
			return ret;
	}
}

/*
 * Nothing in either CQ: done, without a syscall (the caller waits on the
 * channel next, and anything else wakes it).  Something came: the armed
 * receive CQ has raised an event for it, so do what that wakeup would (take
 * the event, re-arm, look again, check the CM), or the caller would wake
 * once more for nothing.
 */
static int rdmac_peek(struct rblk_client_conn *c, struct rblk_queue *q)
{
	int done, more, ret, seen = 0;

	if (c->failed)
		return c->failed;
	if (c->spin)
		return spin_poll(c, q);
	done = drain_recvs(c, q, &seen);
	if (done < 0)
		return done;
	ret = drain_sends(c);
	if (ret)
		return ret;
	if (!seen)
		return done;
	more = rdmac_poll(c, q, 0);
	return more < 0 ? more : done + more;
}

static int rdmac_get_fd(struct rblk_client_conn *c)
{
	return c->epfd;
}

/* Spinning leaves the CQ unarmed; stopping arms it, and the caller's next
 * poll (which consumes any event and re-arms first) then finds what came
 * before. */
static void rdmac_set_spin(struct rblk_client_conn *c, int spin)
{
	int ret;

	c->spin = spin;
	if (spin || c->failed)
		return;
	ret = rblk_rdma_cq_arm(c->rcq);
	if (ret) {
		rblk_err("rdma: cannot arm the receive CQ: %s", strerror(-ret));
		c->failed = ret;
	}
}

/*
 * Teardown, in the order nothing is freed while the device may still touch
 * it: disconnect (QP to error, posted WRs flush), drain both CQs, destroy
 * the QP, the CQs and channel, deregister MRs, free the PD, then the id and
 * its event channel.
 */
static void rdmac_close(struct rblk_client_conn *c)
{
	struct rdma_cm_event *ev;
	struct ibv_wc wc[POLL_BATCH];

	if (!c)
		return;
	if (c->connected) {
		rdma_disconnect(c->id);
		/* The target's DREP (or the CM timeout) ends the connection;
		 * wait briefly so the target sees a clean disconnect. */
		if (rblk_rdma_wait_event(c->cm_ch, RDMA_CM_EVENT_DISCONNECTED,
					 1000, &ev) != -ETIMEDOUT && ev)
			rdma_ack_cm_event(ev);
	} else if (c->id && c->id->qp) {
		rblk_rdma_qp_to_error(c->id->qp);
	}
	/* Held sends were never posted: nothing comes back for them. */
	c->sq_used -= c->nheld;
	c->nheld = 0;
	c->held_head = c->held_tail = NULL;
	if (c->id && c->id->qp) {
		int64_t deadline = rblk_now_ms() + 1000;

		/* Every posted WR comes back (flushed) before the QP goes. */
		while (rblk_now_ms() < deadline) {
			int n = rblk_rdma_poll(c->rcq, POLL_BATCH, wc);
			int m = rblk_rdma_poll(c->scq, POLL_BATCH, wc);

			if (m > 0)
				c->sq_used -= (unsigned)m;
			if (n <= 0 && m <= 0 && !c->sq_used)
				break;
		}
		rblk_rdma_qp_destroy(c->id);
	}
	if (c->rcq_ch)
		rearm(c);	/* ack an event taken or pending */
	rblk_rdma_cq_destroy(NULL, c->scq);
	rblk_rdma_cq_destroy(c->rcq_ch, c->rcq);
	for (unsigned i = 0; i < c->n_umr; i++)
		rblk_rdma_mr_dereg(c->umr[i].mr);
	free(c->umr);
	rblk_rdma_mr_dereg(c->io_mr);
	rblk_rdma_mr_dereg(c->setup_mr);
	rblk_rdma_pd_free(c->pd);
	rblk_rdma_id_destroy(c->id);
	if (c->epfd >= 0)
		close(c->epfd);
	rblk_rdma_channel_destroy(c->cm_ch);
	free(c->io_buf);
	free(c->slots);
	free(c->held);
	free(c->setup_buf);
	free(c);
}

const struct rblk_client_transport_ops rblk_client_rdma_ops = {
	.name = "rdma",
	.default_port = RBLK_XSTR(RBLK_DEFAULT_RDMA_PORT),
	.connect = rdmac_connect,
	.send_msg = rdmac_send_msg,
	.recv_msg = rdmac_recv_msg,
	.start = rdmac_start,
	.reg_buffer = rdmac_reg_buffer,
	.submit = rdmac_submit,
	.flush = rdmac_flush_op,
	.keepalive = rdmac_keepalive,
	.poll = rdmac_poll,
	.get_fd = rdmac_get_fd,
	.set_spin = rdmac_set_spin,
	.peek = rdmac_peek,
	.close = rdmac_close,
};
