// SPDX-License-Identifier: MIT
/*
 * librdmacm / libibverbs wrappers: the one place where their error
 * conventions become 0/-errno (see rdma_verbs.h), plus the fixed setup
 * sequences both RDMA transports share.
 */
#include "rdma_verbs.h"
#include "clock.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static struct rblk_rdma_counts live;

#define COUNT(field, delta) __atomic_add_fetch(&live.field, (delta), __ATOMIC_RELAXED)

void rblk_rdma_counts_get(struct rblk_rdma_counts *c)
{
	c->pd = __atomic_load_n(&live.pd, __ATOMIC_RELAXED);
	c->cq = __atomic_load_n(&live.cq, __ATOMIC_RELAXED);
	c->qp = __atomic_load_n(&live.qp, __ATOMIC_RELAXED);
	c->mr = __atomic_load_n(&live.mr, __ATOMIC_RELAXED);
	c->id = __atomic_load_n(&live.id, __ATOMIC_RELAXED);
	c->channel = __atomic_load_n(&live.channel, __ATOMIC_RELAXED);
}

static int set_fd_flags(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	fl = fcntl(fd, F_GETFD);
	if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

/* ---- CM ----------------------------------------------------------------- */

int rblk_rdma_channel_create(struct rdma_event_channel **chp)
{
	struct rdma_event_channel *ch;
	int ret;

	errno = 0;
	ch = rdma_create_event_channel();
	if (!ch)
		return errno ? -errno : -ENODEV;
	ret = set_fd_flags(ch->fd);
	if (ret) {
		rdma_destroy_event_channel(ch);
		return ret;
	}
	COUNT(channel, 1);
	*chp = ch;
	return 0;
}

void rblk_rdma_channel_destroy(struct rdma_event_channel *ch)
{
	if (!ch)
		return;
	rdma_destroy_event_channel(ch);
	COUNT(channel, -1);
}

int rblk_rdma_id_create(struct rdma_event_channel *ch, void *ctx,
			struct rdma_cm_id **idp)
{
	int ret = rblk_cm_err(rdma_create_id(ch, idp, ctx, RDMA_PS_TCP));

	if (!ret)
		COUNT(id, 1);
	return ret;
}

void rblk_rdma_id_adopt(struct rdma_cm_id *id)
{
	if (id)
		COUNT(id, 1);
}

void rblk_rdma_id_destroy(struct rdma_cm_id *id)
{
	int ret;

	if (!id)
		return;
	ret = rblk_cm_err(rdma_destroy_id(id));
	if (ret)
		rblk_warn("rdma_destroy_id: %s", strerror(-ret));
	else
		COUNT(id, -1);
}

int rblk_rdma_get_event(struct rdma_event_channel *ch, int timeout_ms,
			struct rdma_cm_event **evp)
{
	long deadline = timeout_ms > 0 ? rblk_now_ms() + timeout_ms : 0;

	*evp = NULL;
	for (;;) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		int wait = timeout_ms;
		int ret;

		if (rdma_get_cm_event(ch, evp) == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		*evp = NULL;
		if (timeout_ms == 0)
			return -EAGAIN;
		if (timeout_ms > 0) {
			wait = (int)(deadline - rblk_now_ms());
			if (wait <= 0)
				return -ETIMEDOUT;
		}
		ret = poll(&pfd, 1, wait);
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
}

static int event_error(enum rdma_cm_event_type type)
{
	switch (type) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return -EHOSTUNREACH;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return -ECONNRESET;
	default:
		return -EPROTO;
	}
}

int rblk_rdma_wait_event(struct rdma_event_channel *ch,
			 enum rdma_cm_event_type want, int timeout_ms,
			 struct rdma_cm_event **evp)
{
	int ret = rblk_rdma_get_event(ch, timeout_ms, evp);

	if (ret)
		return ret;
	if ((*evp)->event == want)
		return 0;
	RBLK_DBG(RBLK_DBG_RDMA, "rdma: wanted %s, got %s (status %d)",
		 rdma_event_str(want), rdma_event_str((*evp)->event),
		 (*evp)->status);
	return event_error((*evp)->event);
}

static int lookup(const char *host, const char *port, unsigned default_port,
		  int passive, struct addrinfo **res)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = passive ? AI_PASSIVE : 0,
	};
	char dport[16];
	int ret;

	if (!port || !*port) {
		snprintf(dport, sizeof(dport), "%u", default_port);
		port = dport;
	}
	if (host && (!*host || !strcmp(host, "*")))
		host = NULL;
	ret = getaddrinfo(host, port, &hints, res);
	if (ret) {
		rblk_err("rdma: cannot resolve %s:%s: %s", host ? host : "*",
			 port, gai_strerror(ret));
		return ret == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	}
	return 0;
}

int rblk_rdma_resolve(struct rdma_cm_id *id, const char *host,
		      const char *port, unsigned default_port, int timeout_ms)
{
	struct rdma_cm_event *ev;
	struct addrinfo *ai;
	int ret;

	ret = lookup(host, port, default_port, 0, &ai);
	if (ret)
		return ret;
	ret = rblk_cm_err(rdma_resolve_addr(id, NULL, ai->ai_addr, timeout_ms));
	freeaddrinfo(ai);
	if (ret)
		return ret;
	ret = rblk_rdma_wait_event(id->channel, RDMA_CM_EVENT_ADDR_RESOLVED,
				   timeout_ms + 1000, &ev);
	if (ev)
		rdma_ack_cm_event(ev);
	if (ret)
		return ret;
	ret = rblk_cm_err(rdma_resolve_route(id, timeout_ms));
	if (ret)
		return ret;
	ret = rblk_rdma_wait_event(id->channel, RDMA_CM_EVENT_ROUTE_RESOLVED,
				   timeout_ms + 1000, &ev);
	if (ev)
		rdma_ack_cm_event(ev);
	return ret;
}

int rblk_rdma_listen(struct rdma_cm_id *id, const char *host,
		     const char *port, unsigned default_port, int backlog)
{
	struct addrinfo *ai;
	int ret;

	ret = lookup(host, port, default_port, 1, &ai);
	if (ret)
		return ret;
	ret = rblk_cm_err(rdma_bind_addr(id, ai->ai_addr));
	freeaddrinfo(ai);
	if (ret)
		return ret;
	return rblk_cm_err(rdma_listen(id, backlog));
}

const char *rblk_rdma_event_str(enum rdma_cm_event_type type)
{
	return rdma_event_str(type);
}

/* ---- verbs -------------------------------------------------------------- */

int rblk_rdma_pd_alloc(struct ibv_context *ctx, struct ibv_pd **pdp)
{
	errno = 0;
	*pdp = ibv_alloc_pd(ctx);
	if (!*pdp)
		return errno ? -errno : -ENOMEM;
	COUNT(pd, 1);
	return 0;
}

int rblk_rdma_pd_free(struct ibv_pd *pd)
{
	int ret;

	if (!pd)
		return 0;
	ret = rblk_ibv_err(ibv_dealloc_pd(pd));
	if (ret)
		rblk_warn("ibv_dealloc_pd: %s", strerror(-ret));
	else
		COUNT(pd, -1);
	return ret;
}

int rblk_rdma_cq_create(struct ibv_context *ctx, int cqe, void *cq_ctx,
			struct ibv_comp_channel **chp, struct ibv_cq **cqp)
{
	struct ibv_comp_channel *ch = NULL;
	struct ibv_cq *cq;
	int ret;

	if (chp) {
		errno = 0;
		ch = ibv_create_comp_channel(ctx);
		if (!ch)
			return errno ? -errno : -ENOMEM;
		ret = set_fd_flags(ch->fd);
		if (ret)
			goto out_destroy_channel;
	}
	errno = 0;
	cq = ibv_create_cq(ctx, cqe, cq_ctx, ch, 0);
	if (!cq) {
		ret = errno ? -errno : -ENOMEM;
		goto out_destroy_channel;
	}
	if (ch) {
		ret = rblk_ibv_err(ibv_req_notify_cq(cq, 0));
		if (ret)
			goto out_destroy_cq;
		COUNT(channel, 1);
		*chp = ch;
	}
	COUNT(cq, 1);
	*cqp = cq;
	return 0;

out_destroy_cq:
	ibv_destroy_cq(cq);
out_destroy_channel:
	if (ch)
		ibv_destroy_comp_channel(ch);
	return ret;
}

int rblk_rdma_cq_create_on(struct ibv_context *ctx, int cqe, void *cq_ctx,
			   struct ibv_comp_channel *ch, struct ibv_cq **cqp)
{
	struct ibv_cq *cq;

	errno = 0;
	cq = ibv_create_cq(ctx, cqe, cq_ctx, ch, 0);
	if (!cq)
		return errno ? -errno : -ENOMEM;
	COUNT(cq, 1);
	*cqp = cq;
	return 0;
}

void rblk_rdma_cq_destroy(struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	int ret;

	if (cq) {
		ret = rblk_ibv_err(ibv_destroy_cq(cq));
		if (ret)
			rblk_warn("ibv_destroy_cq: %s", strerror(-ret));
		else
			COUNT(cq, -1);
	}
	if (ch) {
		ret = rblk_ibv_err(ibv_destroy_comp_channel(ch));
		if (ret)
			rblk_warn("ibv_destroy_comp_channel: %s", strerror(-ret));
		else
			COUNT(channel, -1);
	}
}

int rblk_rdma_cq_arm(struct ibv_cq *cq)
{
	return rblk_ibv_err(ibv_req_notify_cq(cq, 0));
}

int rblk_rdma_cq_ack_event(struct ibv_comp_channel *ch, struct ibv_cq **cqp)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		return errno ? -errno : -EIO;
	}
	ibv_ack_cq_events(ev_cq, 1);
	if (cqp)
		*cqp = ev_cq;
	return 1;
}

int rblk_rdma_cq_rearm(struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	int ret = rblk_rdma_cq_ack_event(ch, NULL);

	/* One channel serves one CQ here, so the event's CQ is cq. */
	if (ret <= 0)
		return ret;
	return rblk_ibv_err(ibv_req_notify_cq(cq, 0)) ?: 1;
}

int rblk_rdma_qp_create(struct rdma_cm_id *id, struct ibv_pd *pd,
			struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			struct ibv_srq *srq, void *qp_ctx,
			struct rblk_rdma_qp_caps *caps)
{
	struct ibv_qp_init_attr attr = {
		.qp_context = qp_ctx,
		.send_cq = send_cq,
		.recv_cq = recv_cq,
		.srq = srq,
		.cap = {
			.max_send_wr = caps->max_send_wr,
			.max_recv_wr = srq ? 0 : caps->max_recv_wr,
			.max_send_sge = caps->max_send_sge,
			.max_recv_sge = srq ? 0 : caps->max_recv_sge,
			.max_inline_data = caps->max_inline,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};
	int ret;

	ret = rblk_cm_err(rdma_create_qp(id, pd, &attr));
	if (ret)
		return ret;
	COUNT(qp, 1);
	caps->max_send_wr = attr.cap.max_send_wr;
	caps->max_recv_wr = attr.cap.max_recv_wr;
	caps->max_send_sge = attr.cap.max_send_sge;
	caps->max_recv_sge = attr.cap.max_recv_sge;
	caps->max_inline = attr.cap.max_inline_data;
	return 0;
}

void rblk_rdma_qp_destroy(struct rdma_cm_id *id)
{
	if (!id || !id->qp)
		return;
	rdma_destroy_qp(id);
	COUNT(qp, -1);
}

int rblk_rdma_qp_to_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	return rblk_ibv_err(ibv_modify_qp(qp, &attr, IBV_QP_STATE));
}

int rblk_rdma_mr_reg(struct ibv_pd *pd, void *addr, size_t len, int access,
		     struct ibv_mr **mrp)
{
	errno = 0;
	*mrp = ibv_reg_mr(pd, addr, len, access);
	if (!*mrp)
		return errno ? -errno : -ENOMEM;
	COUNT(mr, 1);
	return 0;
}

int rblk_rdma_mr_dereg(struct ibv_mr *mr)
{
	int ret;

	if (!mr)
		return 0;
	ret = rblk_ibv_err(ibv_dereg_mr(mr));
	if (ret)
		rblk_warn("ibv_dereg_mr: %s", strerror(-ret));
	else
		COUNT(mr, -1);
	return ret;
}

const char *rblk_rdma_wc_str(enum ibv_wc_status st)
{
	return ibv_wc_status_str(st);
}
