// SPDX-License-Identifier: MIT
/*
 * Target RDMA transport, reactor thread: waiting for and running
 * completions (the receive and send CQs through their one completion
 * channel, or spinning in busy and adaptive mode) and the connection's CM
 * events.  The send CQ raises events only while something waits on a
 * send completion (docs/rdma.md, "Send completions").  Each completion
 * runs its event's done(); a failed one closes this connection only.
 * Calls rdma_teardown.c, never rdma.c (docs/rdma.md).
 */
#include "clock.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>

#include "bufshare.h"
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

/* Runs n completions of wc[]; a failed one closes the connection. */
static void run_wcs(struct rdma_conn *rc, const struct ibv_wc *wc, int n)
{
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
}

/*
 * Polls both CQs empty, running each completion; returns how many ran.
 * Sends first: an answer's send completion frees its tag and chunk for
 * the commands that the receives bring.
 */
static int handle_cq(struct rdma_conn *rc)
{
	struct ibv_wc wc[CQ_BATCH];
	int ns, nr, total = 0;

	do {
		ns = rblk_rdma_poll(rc->scq, CQ_BATCH, wc);
		if (ns > 0)
			run_wcs(rc, wc, ns);
		nr = ns < 0 ? 0 : rblk_rdma_poll(rc->rcq, CQ_BATCH, wc);
		if (ns < 0 || nr < 0) {
			tgt_rdma_fail(rc, "ibv_poll_cq failed");
			break;
		}
		run_wcs(rc, wc, nr);
		total += ns + nr;
	} while (ns == CQ_BATCH || nr == CQ_BATCH);
	return total;
}

/*
 * Whether something waits on a send completion, so that the next one must
 * wake the reactor: the data of a WRITE coming by RDMA READ, requests
 * waiting for room in the send queue, a capsule held back (its tag's
 * answer not known sent, or no chunk: chunks come back with answers),
 * a control PDU (their slots are few), a close (the drain), or another
 * connection of this reactor waiting for memory that answers pin.
 * Otherwise an answer's send completion is taken on the next wakeup (the
 * next command, at the latest the reactor's tick: tgt_rdma_reap).
 */
static bool sends_wanted(const struct rdma_conn *rc)
{
	return rc->fetches || rc->sq_wait_head || rc->pend_head ||
	       rc->ctl_inflight || rc->closing || rc->disconnecting ||
	       rc->failed || tgt_share_someone_waits(rc->c.r);
}

static int arm_scq(struct rdma_conn *rc)
{
	if (rblk_rdma_cq_arm(rc->scq) < 0) {
		tgt_rdma_fail(rc, "cannot arm the send completion queue");
		return -1;
	}
	rc->scq_armed = true;
	return 0;
}

/*
 * After a poll, before the reactor may sleep: arms the send CQ if a send
 * completion is now awaited, then polls once more, since one that came
 * before the request raises no event.  Repeats while that poll changes
 * what is awaited.
 */
static void settle_sends(struct rdma_conn *rc)
{
	while (!rc->freeing && !rc->cq_spinning && !rc->scq_armed &&
	       sends_wanted(rc)) {
		if (arm_scq(rc) || handle_cq(rc) == 0)
			break;
	}
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
	if (rblk_rdma_cq_arm(rc->rcq) < 0) {
		tgt_rdma_fail(rc, "cannot arm the completion queue");
		return;
	}
	rc->cq_spinning = false;
	if (handle_cq(rc) > 0) {
		rc->last_work_us = now;
		rc->cq_spinning = true;
		return;
	}
	settle_sends(rc);
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

/*
 * Takes the channel's events until each armed CQ has sent its one (the
 * send CQ's just means it is no longer armed); returns whether the receive
 * CQ's came, or -1 when the channel failed.  Reading on until EAGAIN would
 * cost a failed read() a wakeup, one per I/O at QD1.  An older event left
 * behind (adaptive mode arms again while spinning) keeps the fd readable,
 * and the next wakeup takes it.
 */
static int take_events(struct rdma_conn *rc)
{
	struct ibv_cq *cq;
	int ret, rcq_fired = 0;

	do {
		ret = rblk_rdma_cq_ack_event(rc->cc, &cq);
		if (ret <= 0)
			break;
		if (cq == rc->scq)
			rc->scq_armed = false;
		else
			rcq_fired = 1;
	} while (!rcq_fired || rc->scq_armed);
	return ret < 0 ? -1 : rcq_fired;
}

static void cq_ready(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rdma_conn *rc = EV_OWNER(ev, struct rdma_conn, cq_ev);
	int n, fired = 0;

	rc->cq_armed = false;
	if (!rc->freeing) {
		rc->in_handler = rc->in_poll = true;
		tgt_conn_get(&rc->c);
		/* Woken by the channel: take its events.  Event mode re-arms
		 * the receive CQ before polling, so a command after the poll
		 * raises a new event; adaptive spins next and arms only before
		 * sleeping. */
		if (!rc->cq_spinning)
			fired = take_events(rc);
		if (fired < 0 || (fired && rc->poll == RBLK_POLL_EVENT &&
				  rblk_rdma_cq_arm(rc->rcq) < 0))
			tgt_rdma_fail(rc, "completion channel failed");
		n = handle_cq(rc);
		if (rc->poll == RBLK_POLL_ADAPTIVE && !rc->freeing)
			adapt(rc, n);
		else
			settle_sends(rc);
		rc->in_handler = rc->in_poll = false;
		if (!rc->freeing)
			arm_cq(rc);
		tgt_conn_put(&rc->c);
	}
	tgt_rdma_maybe_destroy(rc);
}

static void reap_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rdma_conn *rc = EV_OWNER(ev, struct rdma_conn, reap_ev);

	rc->reap_queued = false;
	if (!rc->freeing) {
		rc->in_handler = rc->in_poll = true;
		handle_cq(rc);
		settle_sends(rc);
		rc->in_handler = rc->in_poll = false;
	}
	tgt_conn_put(&rc->c);	/* taken by queue_reap; may free rc */
}

/* A poll of both CQs on the next turn, outside conn.c's callbacks. */
static void queue_reap(struct rdma_conn *rc)
{
	tgt_conn_defer_once(&rc->c, &rc->reap_ev, &rc->reap_queued);
}

void tgt_rdma_watch_sends(struct rdma_conn *rc)
{
	if (rc->freeing || rc->cq_spinning || rc->scq_armed || rc->in_poll ||
	    !sends_wanted(rc))
		return;
	/* Completions already in the send CQ raise no event: poll after. */
	if (!arm_scq(rc))
		queue_reap(rc);
}

void tgt_rdma_reap(struct tgt_conn *c)
{
	struct rdma_conn *rc = RC(c);

	if (!rc->freeing && !rc->cq_spinning && rc->rsp_unreaped)
		queue_reap(rc);
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
	rc->reap_ev.done = reap_done;
}

/* Reactor thread, taking the connection over: its first waits. */
void tgt_rdma_poll_start(struct rdma_conn *rc)
{
	arm_poll(rc, rc->cm_ch->fd, &rc->cm_ev, &rc->cm_armed);
	arm_cq(rc);
}
