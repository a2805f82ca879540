// SPDX-License-Identifier: MIT
/*
 * Target RDMA transport, reactor thread: waiting for and running
 * completions (the CQ through its completion channel, or spinning in busy
 * and adaptive mode) and the connection's CM events.  Each completion
 * runs its event's done(); a failed one closes this connection only.
 * Calls rdma_teardown.c, never rdma.c (docs/rdma.md).
 */
#include "clock.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>

#include "conn.h"
#include "log.h"
#include "rdma_int.h"

static int wc_res(const struct ibv_wc *wc)
{
	switch (wc->status) {
	case IBV_WC_SUCCESS:
		return (wc->opcode & IBV_WC_RECV) ? (int)wc->byte_len : 0;
	case IBV_WC_WR_FLUSH_ERR:
		return -ECANCELED;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_LOC_PROT_ERR:
		return -EACCES;
	case IBV_WC_LOC_LEN_ERR:
		return -EMSGSIZE;
	default:
		return -EIO;
	}
}

static void arm_poll(struct rdma_conn *rc, int fd, struct tgt_event *ev,
		     bool *armed)
{
	struct io_uring_sqe *sqe = tgt_reactor_sqe(rc->c.r);

	io_uring_prep_poll_add(sqe, fd, POLLIN);
	tgt_sqe_set_event(sqe, ev);
	*armed = true;
}

static void unsig_done(struct tgt_event *ev, int res, uint32_t flags)
{
	/* An unsignaled WR only completes when it failed; tgt_rdma_fail is
	 * called by the CQ loop for any error already. */
}

/* Polls the CQ empty, running each completion; returns how many ran. */
static int handle_cq(struct rdma_conn *rc)
{
	struct ibv_wc wc[CQ_BATCH];
	int n, total = 0;

	do {
		n = rblk_rdma_poll(rc->cq, CQ_BATCH, wc);
		if (n < 0) {
			tgt_rdma_fail(rc, "ibv_poll_cq failed");
			break;
		}
		total += n;
		for (int i = 0; i < n; i++) {
			struct tgt_event *ev = (struct tgt_event *)(uintptr_t)wc[i].wr_id;
			int res = wc_res(&wc[i]);

			if (res < 0 && res != -ECANCELED && !rc->failed) {
				char why[128];

				snprintf(why, sizeof(why), "%s failed: %s",
					 wc[i].opcode == IBV_WC_RDMA_READ ? "RDMA READ from initiator" :
					 wc[i].opcode == IBV_WC_RDMA_WRITE ? "RDMA WRITE to initiator" :
					 (wc[i].opcode & IBV_WC_RECV) ? "receive" : "send",
					 rblk_rdma_wc_str(wc[i].status));
				/* The QP is in error now: everything else
				 * flushes; close this connection only. */
				rc->failed = true;
				rblk_warn("rdma: %s: %s", rc->c.peer, why);
				ev->done(ev, res, wc[i].status);
				tgt_conn_close(&rc->c, true, why);
				continue;
			}
			ev->done(ev, res, wc[i].status);
		}
	} while (n == CQ_BATCH);
	return total;
}

/*
 * Adaptive mode, after a poll that ran n completions: keep spinning while
 * the last work is less than poll_us old (a wakeup counts as work), then
 * request an event and poll once more before sleeping, since a completion
 * that came between the last poll and the request raises no event.  A
 * spin that follows such a last poll leaves the request armed: its event
 * at most wakes the next sleep early, and that wakeup just spins again.
 */
static void adapt(struct rdma_conn *rc, int n)
{
	uint64_t now = rblk_now_us();

	if (n > 0 || !rc->cq_spinning) {
		rc->last_work_us = now;
		rc->cq_spinning = true;
		return;
	}
	if (now - rc->last_work_us < rc->poll_us)
		return;
	if (rblk_rdma_cq_arm(rc->cq) < 0) {
		tgt_rdma_fail(rc, "cannot arm the completion queue");
		return;
	}
	rc->cq_spinning = false;
	if (handle_cq(rc) > 0) {
		rc->last_work_us = now;
		rc->cq_spinning = true;
	}
}

/* Waits for the next completions: a poll on the completion channel, or
 * while spinning (busy mode, adaptive after work) another turn of the
 * reactor loop, which then does not sleep but still reaps its ring. */
static void arm_cq(struct rdma_conn *rc)
{
	if (rc->cq_spinning) {
		rc->cq_armed = true;
		tgt_reactor_defer(rc->c.r, &rc->cq_ev, 0);
		return;
	}
	arm_poll(rc, rc->cc->fd, &rc->cq_ev, &rc->cq_armed);
}

static void cq_ready(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rdma_conn *rc = EV_OWNER(ev, struct rdma_conn, cq_ev);
	int n, ret = 0;

	rc->cq_armed = false;
	if (!rc->freeing) {
		rc->in_handler = true;
		tgt_conn_get(&rc->c);
		/* Woken by the channel: take its event.  Event mode re-arms
		 * before polling, so a completion after the poll raises a new
		 * event; adaptive spins next and arms only before sleeping. */
		if (!rc->cq_spinning)
			ret = rc->poll == RBLK_POLL_EVENT ?
			      rblk_rdma_cq_rearm(rc->cc, rc->cq) :
			      rblk_rdma_cq_ack_event(rc->cc);
		if (ret < 0)
			tgt_rdma_fail(rc, "completion channel failed");
		n = handle_cq(rc);
		if (rc->poll == RBLK_POLL_ADAPTIVE && !rc->freeing)
			adapt(rc, n);
		rc->in_handler = false;
		if (!rc->freeing)
			arm_cq(rc);
		tgt_conn_put(&rc->c);
	}
	tgt_rdma_maybe_destroy(rc);
}

static void cm_ready(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rdma_conn *rc = EV_OWNER(ev, struct rdma_conn, cm_ev);
	struct rdma_cm_event *cme;

	rc->cm_armed = false;
	if (!rc->freeing) {
		rc->in_handler = true;
		tgt_conn_get(&rc->c);
		while (!rc->freeing && rblk_rdma_get_event(rc->cm_ch, 0, &cme) == 0) {
			enum rdma_cm_event_type type = cme->event;
			int status = cme->status;

			rdma_ack_cm_event(cme);
			RBLK_DBG(RBLK_DBG_RDMA, "rdma: %s: %s (%d)", rc->c.peer,
				 rblk_rdma_event_str(type), status);
			switch (type) {
			case RDMA_CM_EVENT_ESTABLISHED:
				rc->established = true;
				break;
			case RDMA_CM_EVENT_DISCONNECTED:
				tgt_conn_close(&rc->c, true, "initiator disconnected");
				break;
			case RDMA_CM_EVENT_TIMEWAIT_EXIT:
				break;
			default:
				tgt_conn_close(&rc->c, true, rblk_rdma_event_str(type));
				break;
			}
		}
		rc->in_handler = false;
		if (!rc->freeing)
			arm_poll(rc, rc->cm_ch->fd, &rc->cm_ev, &rc->cm_armed);
		tgt_conn_put(&rc->c);
	}
	tgt_rdma_maybe_destroy(rc);
}


/* Main thread, before the connection is accepted. */
void tgt_rdma_poll_init(struct rdma_conn *rc)
{
	rc->unsig_ev.done = unsig_done;
	rc->cm_ev.done = cm_ready;
	rc->cq_ev.done = cq_ready;
}

/* Reactor thread, taking the connection over: its first waits. */
void tgt_rdma_poll_start(struct rdma_conn *rc)
{
	arm_poll(rc, rc->cm_ch->fd, &rc->cm_ev, &rc->cm_armed);
	arm_cq(rc);
}
