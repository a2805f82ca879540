// SPDX-License-Identifier: MIT
/*
 * The queue API of librblkclient (rblk_client.h): open, submit, flush,
 * reap, peek, close.  This is the top of the library: each call drives
 * the reconnect state machine (reconnect.c) and uses the core's
 * primitives (client.c: connect, send, complete, tags), and neither of
 * those calls up into this file or into each other the wrong way:
 *
 *     queue.c --> reconnect.c --> client.c --> client_tcp.c / client_rdma.c
 *        \___________________________^
 */
#include "clock.h"
#include "rblk_client.h"
#include "client_queue.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int rblk_queue_open(const struct rblk_client_opts *opts,
		    struct rblk_queue **qp, struct rblk_volume_info *info,
		    char *errbuf, size_t errlen)
{
	struct rblk_queue *q;
	int ret;

	ret = rblk_client_queue_new(opts, &q, errbuf, errlen);
	if (ret)
		return ret;
	ret = rblk_rc_init(q);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "setting up the queue: %s", strerror(-ret));
		goto out_free;
	}
	/* The first connection is not retried: a wrong address or volume
	 * is the caller's to hear about at once.  With several paths, the
	 * first that works, from opts->first_path on, is used. */
	for (unsigned n = 0; n < q->npaths; n++) {
		unsigned i = (opts->first_path + n) % q->npaths;

		q->cur = i;
		rblk_path_set(q, i, RBLK_PATH_CONNECTING, NULL);
		ret = rblk_client_connect(q, rblk_client_open_timeout_ms(q), errbuf, errlen);
		if (!ret)
			break;
		rblk_path_set(q, i, RBLK_PATH_FAILED, errbuf);
		if (ret == -ECANCELED)
			break;
	}
	if (ret)
		goto out_free;
	rblk_rc_live(q);
	*qp = q;
	if (info)
		*info = q->info;
	return 0;

out_free:
	rblk_rc_destroy(q);
	rblk_client_free_queue(q);
	return ret;
}

void rblk_queue_close(struct rblk_queue *q)
{
	if (!q)
		return;
	rblk_rc_close_conn(q);
	/* The caller gives up on unreaped I/O: mark it so a stale look at
	 * those structs does not mistake them for successes. */
	rblk_client_fail_tags(q, TAG_SENT, RBLK_S_IO_ERROR);
	rblk_client_fail_tags(q, TAG_HELD, RBLK_S_IO_ERROR);
	for (unsigned i = 0; i < q->done_count; i++) {
		struct rblk_io *io = q->done[(q->done_head + i) % q->depth];

		io->status = RBLK_S_IO_ERROR;
		io->error = -EIO;
	}
	rblk_rc_destroy(q);
	rblk_client_free_queue(q);
}

void rblk_queue_flush(struct rblk_queue *q)
{
	rblk_rc_flush(q);
}

static int queue_submit(struct rblk_queue *q, struct rblk_io *io)
{
	uint32_t tag;
	int ret;

	/* A caller that only submits while I/O fails fast still drives the
	 * reconnect: run what is due, without waiting. */
	if (q->state == RBLK_QUEUE_CONNECTING)
		rblk_rc_step(q, 0);
	if (q->state == RBLK_QUEUE_FAILED)
		return -ENOTCONN;
	if (!rblk_client_io_valid(q, io))
		return -EINVAL;
	if (q->io_failing)
		return -EIO;
	if (!q->nfree)
		return -EBUSY;
	tag = q->free_tags[--q->nfree];
	io->tag = tag;
	io->status = -1;
	io->error = 0;
	q->slot[tag] = io;
	q->seq[tag] = q->next_seq++;
	if (!rblk_rc_can_send(q)) {
		/* Sent once a connection is back. */
		q->tstate[tag] = TAG_HELD;
		q->nheld++;
		return 0;
	}
	ret = rblk_rc_send(q, tag);
	if (ret == -EINVAL) {
		/* Give the tag back: the caller hears -EINVAL instead. */
		q->tstate[tag] = TAG_FREE;
		q->nheld--;
		q->slot[tag] = NULL;
		q->free_tags[q->nfree++] = tag;
	}
	return ret;
}

int rblk_queue_submit(struct rblk_queue *q, struct rblk_io *io)
{
	int ret = queue_submit(q, io);

	rblk_queue_flush(q);
	return ret;
}

int rblk_queue_submit_more(struct rblk_queue *q, struct rblk_io *io)
{
	return queue_submit(q, io);
}

int rblk_queue_reap(struct rblk_queue *q, struct rblk_io **done,
		    unsigned min_wait, unsigned max, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : rblk_now_ms() + timeout_ms;
	unsigned outstanding = q->depth - q->nfree;

	rblk_queue_flush(q);
	if (min_wait > max)
		min_wait = max;
	/* Waiting for more than can ever come would hang forever. */
	if (min_wait > outstanding)
		min_wait = outstanding;
	for (;;) {
		/* With enough in hand, still pick up whatever already arrived
		 * and run what is due, without blocking. */
		rblk_rc_step(q, q->done_count >= min_wait ? 0 : rblk_left_ms(deadline));
		if (q->done_count >= min_wait || q->state == RBLK_QUEUE_FAILED ||
		    rblk_left_ms(deadline) == 0)
			break;
	}
	return rblk_client_hand_back(q, done, max);
}

int rblk_queue_peek(struct rblk_queue *q, struct rblk_io **done, unsigned max)
{
	rblk_queue_flush(q);
	if (!q->ops->peek || q->state != RBLK_QUEUE_LIVE)
		return rblk_queue_reap(q, done, 0, max, 0);
	rblk_rc_polled(q, q->ops->peek(q->conn, q));
	return rblk_client_hand_back(q, done, max);
}
