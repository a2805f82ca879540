/* SPDX-License-Identifier: MIT */
/*
 * Offload thread: one per reactor, created on first use, for the calls
 * that have no asynchronous form and may take long (BLKDISCARD and
 * BLKZEROOUT on block devices, plus the fdatasync of a FUA one).  The
 * reactor hands a job over under a mutex; the thread runs it and posts
 * the result back through an eventfd the reactor's io_uring reads, so the
 * reactor never blocks and still waits on one thing.
 */
#ifndef RBLK_TARGET_OFFLOAD_H
#define RBLK_TARGET_OFFLOAD_H

#include "reactor.h"

struct tgt_offload;

struct tgt_offload_job {
	struct tgt_event ev;		/* ev.done(ev, res, 0) on the reactor */
	/* Required, offload thread: the blocking call.  0 or -errno. */
	int (*run)(struct tgt_offload_job *job);
	struct tgt_offload_job *next;
	int res;
	/*
	 * Set by the submitter: the job must run even if the reactor stops
	 * first (a volume's final flush and close).  tgt_offload_destroy
	 * then runs it if it is still queued, and calls ev.done on its own
	 * thread (the reactor's loop is gone), so done may only release
	 * memory.  Other jobs of a stopped reactor are dropped.
	 */
	bool must_run;
};

/*
 * Starts job on r's offload thread (created on the first call).  Returns 0
 * when job->ev.done will be called on r's thread, on a later loop turn;
 * -errno (done will NOT be called) when the thread cannot be made.
 * Reactor thread only.
 */
int tgt_offload_submit(struct tgt_reactor *r, struct tgt_offload_job *job);

/*
 * Stops and joins the thread after the job it is running and the queued
 * must_run jobs (the other queued jobs are dropped: their reactor has
 * stopped), completes the must_run jobs that the reactor did not, frees
 * o.  NULL is fine.  Called from the reactor's slot (tgt_reactor_destroy,
 * after the ring is gone).
 */
void tgt_offload_destroy(struct tgt_offload *o);

#endif /* RBLK_TARGET_OFFLOAD_H */
