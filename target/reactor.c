// SPDX-License-Identifier: MIT
/*
 * Reactor thread and event loop (see reactor.h).  The loop is: submit and
 * wait for one CQE, dispatch a batch of CQEs to their tgt_event->done, then
 * run deferred completions.  Deferred completions exist so that a backend
 * that finishes synchronously (null, ioctl discard) never calls back into
 * the connection code from inside its own submit call.
 */
#include "reactor.h"
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "bufshare.h"
#include "log.h"

#define CQE_BATCH	64

struct tgt_reactor {
	struct tgt_reactor_params params;
	struct io_uring ring;
	pthread_t thread;
	int thread_started;

	int stop_efd;
	uint64_t stop_val;
	struct tgt_event stop_ev;
	int work_efd;
	uint64_t work_val;
	struct tgt_event work_ev;
	pthread_mutex_t work_lock;
	STAILQ_HEAD(tgt_work_list, tgt_work) work;	/* under work_lock */

	struct tgt_event tick_ev;
	struct __kernel_timespec tick_ts;
	uint64_t now_ms;

	STAILQ_HEAD(tgt_event_list, tgt_event) deferred;
	unsigned turns_unsubmitted;	/* in a row, see tgt_reactor_run_once */

	struct tgt_bufpool *pool;
	struct tgt_share share;
	int buf_index;
	struct tgt_reactor_slot slots[TGT_REACTOR_SLOTS];
	struct tgt_conn *conns;

	bool stopping;
	bool forced;
	uint64_t stop_ms;
};

static void arm_tick(struct tgt_reactor *r)
{
	struct io_uring_sqe *sqe = tgt_reactor_sqe(r);

	r->tick_ts.tv_sec = 1;
	r->tick_ts.tv_nsec = 0;
	io_uring_prep_timeout(sqe, &r->tick_ts, 0, 0);
	tgt_sqe_set_event(sqe, &r->tick_ev);
}

static void tick_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_reactor *r = (struct tgt_reactor *)
		((char *)ev - offsetof(struct tgt_reactor, tick_ev));

	if (res == -ECANCELED)
		return;
	r->now_ms = (uint64_t)rblk_now_ms();
	r->params.tick(r);
	arm_tick(r);
}

static void arm_efd(struct tgt_reactor *r, int fd, uint64_t *val,
		    struct tgt_event *ev)
{
	struct io_uring_sqe *sqe = tgt_reactor_sqe(r);

	io_uring_prep_read(sqe, fd, val, sizeof(*val), 0);
	tgt_sqe_set_event(sqe, ev);
}

static void stop_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_reactor *r = (struct tgt_reactor *)
		((char *)ev - offsetof(struct tgt_reactor, stop_ev));

	if (res < 0 && res != -ECANCELED) {
		arm_efd(r, r->stop_efd, &r->stop_val, &r->stop_ev);
		return;
	}
	if (r->stopping)
		return;
	r->stopping = true;
	r->stop_ms = (uint64_t)rblk_now_ms();
	if (r->params.on_stop)
		r->params.on_stop(r, false);
}

static void work_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_reactor *r = (struct tgt_reactor *)
		((char *)ev - offsetof(struct tgt_reactor, work_ev));
	struct tgt_work_list todo;
	struct tgt_work *w;

	if (res == -ECANCELED)
		return;
	pthread_mutex_lock(&r->work_lock);
	STAILQ_INIT(&todo);
	STAILQ_CONCAT(&todo, &r->work);
	pthread_mutex_unlock(&r->work_lock);
	while ((w = STAILQ_FIRST(&todo))) {
		STAILQ_REMOVE_HEAD(&todo, link);
		w->fn(r, w);
	}
	arm_efd(r, r->work_efd, &r->work_val, &r->work_ev);
}

int tgt_reactor_create(struct tgt_reactor **rp,
		       const struct tgt_reactor_params *params)
{
	/* A large CQ: every connection keeps RECV, SEND and up to its depth
	 * of disk I/O in flight, and CQ overflow costs a slow path. */
	struct io_uring_params up = { .flags = IORING_SETUP_CQSIZE,
				      .cq_entries = 16384 };
	struct tgt_reactor *r;
	struct iovec iov;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->params = *params;
	r->stop_efd = r->work_efd = -1;
	r->buf_index = -1;
	pthread_mutex_init(&r->work_lock, NULL);
	STAILQ_INIT(&r->work);
	STAILQ_INIT(&r->deferred);
	r->stop_ev.done = stop_done;
	r->work_ev.done = work_done;
	r->tick_ev.done = tick_done;
	r->now_ms = (uint64_t)rblk_now_ms();

	/* COOP_TASKRUN: completions for a busy reactor are picked up at its
	 * next io_uring_enter instead of interrupting it with an IPI (it
	 * enters on every loop turn anyway).  Kernels before 5.19 refuse
	 * the flag: retry without. */
	up.flags |= IORING_SETUP_COOP_TASKRUN;
	ret = io_uring_queue_init_params(params->ring_entries ?
					 params->ring_entries : 1024,
					 &r->ring, &up);
	if (ret == -EINVAL) {
		up.flags &= ~IORING_SETUP_COOP_TASKRUN;
		ret = io_uring_queue_init_params(params->ring_entries ?
						 params->ring_entries : 1024,
						 &r->ring, &up);
	}
	if (ret < 0) {
		rblk_err("reactor%u: io_uring_queue_init: %s", params->id,
			 strerror(-ret));
		goto out_free;
	}
	r->stop_efd = eventfd(0, EFD_CLOEXEC);
	r->work_efd = eventfd(0, EFD_CLOEXEC);
	if (r->stop_efd < 0 || r->work_efd < 0) {
		ret = -errno;
		goto out_close;
	}
	if (params->buffer_bytes) {
		ret = tgt_bufpool_create(&r->pool, params->buffer_bytes);
		if (ret)
			goto out_close;
		iov.iov_base = tgt_bufpool_base(r->pool);
		iov.iov_len = tgt_bufpool_size(r->pool);
		ret = io_uring_register_buffers(&r->ring, &iov, 1);
		if (ret == 0)
			r->buf_index = 0;
		else
			rblk_warn("reactor%u: cannot register %zu MiB of I/O buffers with io_uring (%s; RLIMIT_MEMLOCK?): using unregistered buffers",
				  params->id, iov.iov_len >> 20, strerror(-ret));
	}
	arm_efd(r, r->stop_efd, &r->stop_val, &r->stop_ev);
	arm_efd(r, r->work_efd, &r->work_val, &r->work_ev);
	if (params->tick)
		arm_tick(r);
	*rp = r;
	return 0;

out_close:
	if (r->stop_efd >= 0)
		close(r->stop_efd);
	if (r->work_efd >= 0)
		close(r->work_efd);
	io_uring_queue_exit(&r->ring);
out_free:
	pthread_mutex_destroy(&r->work_lock);
	free(r);
	return ret;
}

void tgt_reactor_destroy(struct tgt_reactor *r)
{
	if (!r)
		return;
	if (r->thread_started) {
		tgt_reactor_stop(r);
		tgt_reactor_join(r);
	}
	/* Ring first (cancels what is still queued on it, e.g. eventfd
	 * reads into backend contexts), then backends (aio waits for its
	 * in-flight I/O there, the offload thread finishes its call), then
	 * the pool those I/Os may still touch. */
	io_uring_queue_exit(&r->ring);
	for (unsigned i = 0; i < TGT_REACTOR_SLOTS; i++)
		if (r->slots[i].data && r->slots[i].exit)
			r->slots[i].exit(r, r->slots[i].data);
	tgt_bufpool_destroy(r->pool);
	close(r->stop_efd);
	close(r->work_efd);
	pthread_mutex_destroy(&r->work_lock);
	free(r);
}

static void run_deferred(struct tgt_reactor *r)
{
	struct tgt_event_list now;
	struct tgt_event *ev;

	/* What these callbacks defer runs on the next turn. */
	STAILQ_INIT(&now);
	STAILQ_CONCAT(&now, &r->deferred);
	while ((ev = STAILQ_FIRST(&now))) {
		STAILQ_REMOVE_HEAD(&now, link);
		ev->done(ev, ev->res, 0);
	}
}

/* Submits the ring's SQEs and, if wait, waits for a completion. */
static int enter(struct tgt_reactor *r, bool wait)
{
	int ret;

	if (wait && r->stopping) {
		struct __kernel_timespec ts = { .tv_nsec = 100 * 1000000 };
		struct io_uring_cqe *cqe;

		ret = io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
	} else {
		ret = io_uring_submit_and_wait(&r->ring, wait ? 1 : 0);
	}
	if (ret < 0 && ret != -EINTR && ret != -ETIME && ret != -EAGAIN &&
	    ret != -EBUSY)
		return ret;
	return 0;
}

int tgt_reactor_run_once(struct tgt_reactor *r, bool wait)
{
	struct io_uring_cqe *cqes[CQE_BATCH];
	struct {
		struct tgt_event *ev;
		int res;
		uint32_t flags;
	} batch[CQE_BATCH];
	unsigned n, total = 0;
	int ret;

	/* A turn that only has deferred work to run needs no syscall: its
	 * SQEs (say, a channel poll re-armed before an I/O that completed
	 * inline) go in with the next turn's wait, one io_uring_enter where
	 * QD1 made two.  A few turns at most, so that work which keeps
	 * deferring (a spinning CQ) still submits and reaps. */
	if (STAILQ_EMPTY(&r->deferred) ||
	    ++r->turns_unsubmitted > TGT_REACTOR_TURNS_UNSUBMITTED) {
		r->turns_unsubmitted = 0;
		ret = enter(r, wait && STAILQ_EMPTY(&r->deferred));
		if (ret < 0)
			return ret;
	}
	/* One vDSO read a turn: what the events below see as "now". */
	r->now_ms = (uint64_t)rblk_now_ms();
	do {
		n = io_uring_peek_batch_cqe(&r->ring, cqes, CQE_BATCH);
		for (unsigned i = 0; i < n; i++) {
			batch[i].ev = io_uring_cqe_get_data(cqes[i]);
			batch[i].res = cqes[i]->res;
			batch[i].flags = cqes[i]->flags;
		}
		io_uring_cq_advance(&r->ring, n);
		for (unsigned i = 0; i < n; i++)
			if (batch[i].ev)
				batch[i].ev->done(batch[i].ev, batch[i].res,
						  batch[i].flags);
		total += n;
	} while (n == CQE_BATCH);
	if (!STAILQ_EMPTY(&r->deferred)) {
		run_deferred(r);
		total++;
	}
	return total;
}

static void *reactor_thread(void *arg)
{
	struct tgt_reactor *r = arg;
	char name[16];
	int ret;

	snprintf(name, sizeof(name), "reactor%u", r->params.id);
	pthread_setname_np(pthread_self(), name);
	RBLK_DBG(RBLK_DBG_CONN, "reactor%u: running", r->params.id);
	for (;;) {
		ret = tgt_reactor_run_once(r, true);
		if (ret < 0) {
			rblk_err("reactor%u: io_uring wait: %s", r->params.id,
				 strerror(-ret));
			break;
		}
		if (!r->stopping)
			continue;
		if (!r->params.busy || !r->params.busy(r))
			break;
		uint64_t el = (uint64_t)rblk_now_ms() - r->stop_ms;

		if (!r->forced && el >= TGT_REACTOR_DRAIN_MS) {
			r->forced = true;
			rblk_warn("reactor%u: still draining after %d ms, closing connections hard",
				  r->params.id, TGT_REACTOR_DRAIN_MS);
			if (r->params.on_stop)
				r->params.on_stop(r, true);
		}
		if (el >= TGT_REACTOR_ABORT_MS) {
			rblk_err("reactor%u: giving up on draining after %d ms",
				 r->params.id, TGT_REACTOR_ABORT_MS);
			break;
		}
	}
	return NULL;
}

int tgt_reactor_start(struct tgt_reactor *r)
{
	int ret = pthread_create(&r->thread, NULL, reactor_thread, r);

	if (ret)
		return -ret;
	r->thread_started = 1;
	return 0;
}

void tgt_reactor_stop(struct tgt_reactor *r)
{
	uint64_t one = 1;

	if (write(r->stop_efd, &one, sizeof(one)) < 0) {
		/* eventfd counter cannot overflow at these rates */
	}
}

void tgt_reactor_join(struct tgt_reactor *r)
{
	if (!r->thread_started)
		return;
	pthread_join(r->thread, NULL);
	r->thread_started = 0;
}

void tgt_reactor_post_work(struct tgt_reactor *r, struct tgt_work *w)
{
	uint64_t one = 1;

	pthread_mutex_lock(&r->work_lock);
	STAILQ_INSERT_TAIL(&r->work, w, link);
	pthread_mutex_unlock(&r->work_lock);
	if (write(r->work_efd, &one, sizeof(one)) < 0) {
		/* cannot fail for a valid eventfd */
	}
}

struct io_uring_sqe *tgt_reactor_sqe(struct tgt_reactor *r)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(&r->ring)))
		io_uring_submit(&r->ring);
	return sqe;
}

void tgt_reactor_defer(struct tgt_reactor *r, struct tgt_event *ev, int res)
{
	ev->res = res;
	STAILQ_INSERT_TAIL(&r->deferred, ev, link);
}

struct tgt_bufpool *tgt_reactor_pool(struct tgt_reactor *r)
{
	return r->pool;
}

int tgt_reactor_buf_index(struct tgt_reactor *r)
{
	return r->buf_index;
}

struct tgt_share *tgt_reactor_share(struct tgt_reactor *r)
{
	return &r->share;
}

struct tgt_reactor_slot *tgt_reactor_slot(struct tgt_reactor *r, unsigned i)
{
	return i < TGT_REACTOR_SLOTS ? &r->slots[i] : NULL;
}

struct tgt_conn **tgt_reactor_conn_list(struct tgt_reactor *r)
{
	return &r->conns;
}

uint64_t tgt_reactor_now_ms(const struct tgt_reactor *r)
{
	return r->now_ms;
}

unsigned tgt_reactor_id(const struct tgt_reactor *r)
{
	return r->params.id;
}

void *tgt_reactor_priv(const struct tgt_reactor *r)
{
	return r->params.priv;
}

bool tgt_reactor_stopping(const struct tgt_reactor *r)
{
	return r->stopping;
}
