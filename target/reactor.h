/* SPDX-License-Identifier: MIT */
/*
 * Reactor: one thread, one io_uring, one buffer pool, the connections it
 * owns.  Every event (socket recv/send, disk I/O, eventfds, timers) is an
 * io_uring request whose user_data points at a struct tgt_event; the loop
 * calls ev->done(ev, cqe->res, cqe->flags).  Nothing on the I/O path takes a
 * lock; the only cross-thread entry is tgt_reactor_post_work() (mutex +
 * eventfd), used to hand over new connections and to ask it to stop.
 */
#ifndef RBLK_TARGET_REACTOR_H
#define RBLK_TARGET_REACTOR_H

#include <liburing.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "bufpool.h"

struct tgt_reactor;
struct tgt_conn;

struct tgt_event {
	/* Called on the reactor thread with the CQE's res and flags (or the
	 * value given to tgt_reactor_defer, flags 0). */
	void (*done)(struct tgt_event *ev, int res, uint32_t flags);
	STAILQ_ENTRY(tgt_event) link;	/* in the reactor's deferred list */
	int res;			/* deferred result */
};

/* Work handed to a reactor from another thread (runs on the reactor). */
struct tgt_work {
	void (*fn)(struct tgt_reactor *r, struct tgt_work *w);
	STAILQ_ENTRY(tgt_work) link;	/* in the reactor's work list */
};

#define TGT_REACTOR_DRAIN_MS	3000
#define TGT_REACTOR_ABORT_MS	4000
/* Turns in a row that only run deferred work and leave their SQEs to a
 * later turn's io_uring_enter (tgt_reactor_run_once). */
#define TGT_REACTOR_TURNS_UNSUBMITTED	4

struct tgt_reactor_params {
	unsigned id;
	unsigned ring_entries;		/* SQ size; 0 = 1024 */
	size_t   buffer_bytes;		/* buffer pool; 0 = no pool */
	/* Called on the reactor thread when it is asked to stop (force
	 * false), and again with force true if busy() still holds after
	 * TGT_REACTOR_DRAIN_MS; the loop ends when busy() is false (or
	 * TGT_REACTOR_ABORT_MS after the stop, whatever is left). */
	void (*on_stop)(struct tgt_reactor *r, bool force);
	/* Called every loop turn while stopping; returns true while there is
	 * still something to drain. */
	bool (*busy)(struct tgt_reactor *r);
	/* Optional: called on the reactor thread about once a second (one
	 * timeout SQE, re-armed when it fires), for connection timers. */
	void (*tick)(struct tgt_reactor *r);
	void *priv;
};

/* Creates the ring, eventfds and pool (no thread yet).  0 or -errno. */
int tgt_reactor_create(struct tgt_reactor **rp,
		       const struct tgt_reactor_params *params);
/* Stops (if running), joins and frees everything. */
void tgt_reactor_destroy(struct tgt_reactor *r);

/* Starts the thread.  0 or -errno. */
int tgt_reactor_start(struct tgt_reactor *r);
/* Asks the thread to stop (any thread, async-signal-safe: one write). */
void tgt_reactor_stop(struct tgt_reactor *r);
/* Joins the thread (main thread). */
void tgt_reactor_join(struct tgt_reactor *r);

/* Runs one loop turn on the calling thread (unit tests, no thread):
 * submits, waits for at least one completion when wait, dispatches.
 * Returns the number of events dispatched or -errno. */
int tgt_reactor_run_once(struct tgt_reactor *r, bool wait);

/* Hands w to the reactor (any thread). */
void tgt_reactor_post_work(struct tgt_reactor *r, struct tgt_work *w);

/* ---- reactor-thread API ---------------------------------------------- */

/* An SQE to fill; submits pending ones first when the SQ is full.  Never
 * NULL (the ring is drained synchronously if needed). */
struct io_uring_sqe *tgt_reactor_sqe(struct tgt_reactor *r);
/* Fills an SQE's user_data with ev. */
static inline void tgt_sqe_set_event(struct io_uring_sqe *sqe,
				     struct tgt_event *ev)
{
	io_uring_sqe_set_data(sqe, ev);
}
/* Completes ev with res on a later loop turn (never re-entrantly). */
void tgt_reactor_defer(struct tgt_reactor *r, struct tgt_event *ev, int res);

/* Buffer pool; tgt_reactor_buf_index() is the io_uring fixed-buffer index
 * to use with it, or -1 when registration failed (then use plain ops). */
struct tgt_bufpool *tgt_reactor_pool(struct tgt_reactor *r);
int tgt_reactor_buf_index(struct tgt_reactor *r);
/* How its connections share the pool (bufshare.h). */
struct tgt_share;
struct tgt_share *tgt_reactor_share(struct tgt_reactor *r);

/*
 * State another module keeps per reactor, made on first use: the offload
 * thread, each backend's context.  The module sets data and exit;
 * tgt_reactor_destroy calls exit(r, data) for each slot that has data,
 * after the ring is gone, in slot order (the offload thread finishes its
 * call before the backends are torn down).  The reactor knows no more of
 * them than that.
 */
struct tgt_reactor_slot {
	void *data;
	void (*exit)(struct tgt_reactor *r, void *data);
};
enum {
	TGT_SLOT_OFFLOAD,
	TGT_SLOT_BACKEND0,			/* + the backend registry index */
	TGT_REACTOR_SLOTS = TGT_SLOT_BACKEND0 + 8,
};
/* Slot i, or NULL when i >= TGT_REACTOR_SLOTS. */
struct tgt_reactor_slot *tgt_reactor_slot(struct tgt_reactor *r, unsigned i);

/* Head of the list of connections this reactor owns (conn.c links it). */
struct tgt_conn **tgt_reactor_conn_list(struct tgt_reactor *r);

/* CLOCK_MONOTONIC milliseconds as of this loop turn's wake-up (read once
 * a turn): a clock for timeouts, free to read on the I/O path. */
uint64_t tgt_reactor_now_ms(const struct tgt_reactor *r);

unsigned tgt_reactor_id(const struct tgt_reactor *r);
void *tgt_reactor_priv(const struct tgt_reactor *r);
bool tgt_reactor_stopping(const struct tgt_reactor *r);

#endif /* RBLK_TARGET_REACTOR_H */
