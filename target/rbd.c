// SPDX-License-Identifier: MIT
/*
 * rbd backend, the I/O path: a volume is a Ceph RBD image reached through
 * librbd's asynchronous C API.  READ and WRITE go to librbd as one iovec
 * over the command's pool buffer (the reactor's registered memory, so the
 * NIC's RDMA lands where librbd reads and writes; with zero-copy writes
 * librbd sends from it directly); FLUSH is rbd_aio_flush, DISCARD
 * rbd_aio_discard, WRITE_ZEROES rbd_aio_write_zeroes.  FUA needs nothing
 * more: librbd's cache is off (rbd_cluster.c), so a write completes only
 * once the OSDs have committed it.
 *
 * Completions come back without a lock.  librbd calls op_done on its own
 * callback thread; op_done pushes the request on the submitting reactor's
 * lock-free stack and, when that stack was empty, writes the reactor's
 * eventfd, which the reactor's io_uring reads like any other event.  The
 * reactor then takes the whole stack with one exchange and completes each
 * request on its own thread.  librbd's thread touches only that stack,
 * the eventfd and the volume's in-flight count, never reactor state.
 * (librbd's own rbd_set_image_notification + rbd_poll_io_events would be
 * the same hand-off, but per image: with one image handle serving every
 * reactor, a reactor would reap the others' requests.)
 *
 * Opening, creating, growing and closing images: rbd_image.c.
 */
#include "rbd_int.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "log.h"

#define OPS_PER_BLOCK	256

struct rbd_rctx;

/* One request at librbd.  Owned by its reactor's context, never by the
 * connection, so a callback that comes after an aborted shutdown writes
 * only memory that stays allocated. */
struct rbd_op {
	struct rbd_op   *next;		/* done stack or free list */
	struct rbd_op   *lprev, *lnext;	/* the reactor's ops at librbd */
	struct rbd_rctx *rc;
	struct rbd_vol  *rv;
	int64_t         *in_flight;	/* rv's counter when it was sent */
	struct tgt_io   *io;		/* NULL once answered without librbd */
	rbd_completion_t comp;
	struct iovec     iov;
	struct rbd_ha_wait wait;	/* while rbd_ha.c holds it */
	bool             held;		/* back from rbd_ha.c: start or fail */
	int              held_res;
};

struct rbd_op_block {
	struct rbd_op_block *next;
	struct rbd_op ops[OPS_PER_BLOCK];
};

/* Per reactor, shared by all its rbd volumes. */
struct rbd_rctx {
	struct tgt_reactor *r;
	struct rbd_op *done;		/* __atomic: pushed by librbd's thread */
	unsigned in_callback;		/* __atomic: op_done calls running */
	int      efd;
	uint64_t efd_val;
	struct tgt_event efd_ev;
	bool     sweep;			/* __atomic: look for abandoned ops */
	struct rbd_rctx *reg_next;	/* every context (registry below) */
	struct rbd_op *free_ops;	/* reactor only, from here down */
	struct rbd_op *at_lib;		/* started at librbd, not back yet */
	struct rbd_op_block *blocks;
	unsigned outstanding;		/* ops given to librbd, not reaped */
};

/* Every reactor's context, for tgt_rbd_answer_abandoned. */
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rbd_rctx *registry;

static void at_lib_add(struct rbd_rctx *rc, struct rbd_op *op)
{
	op->lprev = NULL;
	op->lnext = rc->at_lib;
	if (rc->at_lib)
		rc->at_lib->lprev = op;
	rc->at_lib = op;
}

static void at_lib_del(struct rbd_rctx *rc, struct rbd_op *op)
{
	if (op->lprev)
		op->lprev->lnext = op->lnext;
	else
		rc->at_lib = op->lnext;
	if (op->lnext)
		op->lnext->lprev = op->lprev;
}

/* Hands op to its reactor from another thread (librbd's callback
 * thread, rbd_ha.c's takeover). */
static void op_push(struct rbd_op *op, bool counted)
{
	struct rbd_rctx *rc = op->rc;
	struct rbd_op *head = __atomic_load_n(&rc->done, __ATOMIC_RELAXED);
	uint64_t one = 1;

	/* From the push on, the reactor may reap op, and then exit: this
	 * tells it a callback still has rc's eventfd to write. */
	__atomic_add_fetch(&rc->in_callback, 1, __ATOMIC_ACQ_REL);
	if (counted)
		__atomic_sub_fetch(op->in_flight, 1, __ATOMIC_SEQ_CST);
	do {
		op->next = head;
	} while (!__atomic_compare_exchange_n(&rc->done, &head, op, true,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	/* Only the push onto an empty stack wakes the reactor: until it
	 * takes the stack, every later push is in the same batch. */
	if (!head && write(rc->efd, &one, sizeof(one)) < 0)
		rblk_err("rbd: waking reactor%u: %s", tgt_reactor_id(rc->r),
			 strerror(errno));
	__atomic_sub_fetch(&rc->in_callback, 1, __ATOMIC_RELEASE);
}

/* librbd's callback thread: done at the cluster, no longer in flight. */
static void op_done(rbd_completion_t comp, void *arg)
{
	op_push(arg, true);
}

/* rbd_ha.c's release: a held request goes back to its reactor. */
static void op_release(struct rbd_ha_wait *w, int res)
{
	struct rbd_op *op = (struct rbd_op *)((char *)w - offsetof(struct rbd_op, wait));

	op->held = true;
	op->held_res = res;
	/* Still counted in flight: the reactor starts it or uncounts it. */
	op_push(op, false);
}

static struct rbd_op *op_get(struct rbd_rctx *rc)
{
	struct rbd_op *op = rc->free_ops;

	if (!op) {
		struct rbd_op_block *b = calloc(1, sizeof(*b));

		if (!b)
			return NULL;
		b->next = rc->blocks;
		rc->blocks = b;
		for (unsigned i = 0; i < OPS_PER_BLOCK; i++) {
			b->ops[i].next = rc->free_ops;
			rc->free_ops = &b->ops[i];
		}
		op = rc->free_ops;
	}
	rc->free_ops = op->next;
	return op;
}

static void op_put(struct rbd_rctx *rc, struct rbd_op *op)
{
	op->next = rc->free_ops;
	rc->free_ops = op;
}

/* librbd's answer for a finished request (a READ's byte count, 0 for the
 * others) into the command's result. */
static int op_result(struct tgt_io *io, ssize_t ret)
{
	if (ret < 0)
		return (int)ret;
	if (io->op == TGT_IO_READ && (size_t)ret < io->length) {
		/* Past the end of an image shrunk behind our back: no data
		 * there, as for a hole in a file. */
		memset((char *)io->buf + ret, 0, io->length - ret);
	}
	return 0;
}

static void arm_efd(struct rbd_rctx *rc)
{
	struct io_uring_sqe *sqe = tgt_reactor_sqe(rc->r);

	io_uring_prep_read(sqe, rc->efd, &rc->efd_val, sizeof(rc->efd_val), 0);
	tgt_sqe_set_event(sqe, &rc->efd_ev);
}

static int op_start(struct rbd_op *op, rbd_image_t image);

/* Reactor thread: a request rbd_ha.c held is back: started at librbd
 * now (it completes later), or completed with the takeover's failure. */
static void held_back(struct rbd_rctx *rc, struct rbd_op *op)
{
	struct tgt_io *io = op->io;
	int ret = op->held_res;

	op->held = false;
	if (!ret)
		ret = op_start(op, op->rv->image);
	if (!ret) {
		at_lib_add(rc, op);
		return;
	}
	__atomic_sub_fetch(op->in_flight, 1, __ATOMIC_SEQ_CST);
	rbd_aio_release(op->comp);
	op_put(rc, op);
	rc->outstanding--;
	io->complete(io, ret);
}

/*
 * Reactor thread: answers the requests left at a fenced handle that was
 * abandoned (rbd_attach.c): their client would otherwise wait for its
 * io_timeout, holding every other command of its queue while it drains.
 * SHUTTING_DOWN sends it to another path.  Such a request is at a handle
 * whose counter is no longer its volume's.  Only requests whose buffer
 * librbd never writes into are answered: a READ's completion, if it
 * came, would write over the buffer's next user, so a READ keeps it and
 * waits (a fenced handle's reads fail at the OSDs rather than hang).  A
 * late completion of an answered request is dropped (efd_done).
 */
static void answer_abandoned(struct rbd_rctx *rc)
{
	unsigned n = 0;
	const char *name = NULL;

	for (struct rbd_op *op = rc->at_lib; op; op = op->lnext) {
		struct tgt_io *io = op->io;

		if (!io || io->op == TGT_IO_READ ||
		    op->in_flight == __atomic_load_n(&op->rv->in_flight, __ATOMIC_ACQUIRE))
			continue;
		op->io = NULL;
		__atomic_add_fetch(&op->rv->refused, 1, __ATOMIC_RELAXED);
		name = op->rv->name;
		n++;
		io->complete(io, -ESHUTDOWN);
	}
	if (n)
		rblk_warn("volume %s: answered %u request(s) left at the abandoned handle SHUTTING_DOWN (reactor%u): they go to another path",
			  name, n, tgt_reactor_id(rc->r));
}

void tgt_rbd_answer_abandoned(void)
{
	uint64_t one = 1;

	pthread_mutex_lock(&registry_mu);
	for (struct rbd_rctx *rc = registry; rc; rc = rc->reg_next) {
		__atomic_store_n(&rc->sweep, true, __ATOMIC_RELEASE);
		if (write(rc->efd, &one, sizeof(one)) < 0)
			rblk_err("rbd: waking reactor%u: %s", tgt_reactor_id(rc->r),
				 strerror(errno));
	}
	pthread_mutex_unlock(&registry_mu);
}

/* Reactor thread: the eventfd said some requests are done. */
static void efd_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct rbd_rctx *rc = (struct rbd_rctx *)
		((char *)ev - offsetof(struct rbd_rctx, efd_ev));
	struct rbd_op *op, *list, *fifo = NULL;

	if (res == -ECANCELED)
		return;
	if (__atomic_exchange_n(&rc->sweep, false, __ATOMIC_ACQ_REL))
		answer_abandoned(rc);
	list = __atomic_exchange_n(&rc->done, NULL, __ATOMIC_ACQUIRE);
	while (list) {		/* the stack is newest first: reverse it */
		op = list;
		list = op->next;
		op->next = fifo;
		fifo = op;
	}
	while ((op = fifo)) {
		struct tgt_io *io = op->io;
		ssize_t ret;

		fifo = op->next;
		if (op->held) {
			held_back(rc, op);
			continue;
		}
		ret = rbd_aio_get_return_value(op->comp);
		rbd_aio_release(op->comp);
		at_lib_del(rc, op);
		/* An op answered at the abandoning has no io: dropped. */
		if (io && op->rv->ha)
			ret = tgt_rbd_ha_result(op->rv, (int)ret);
		op_put(rc, op);
		rc->outstanding--;
		if (io)
			io->complete(io, op_result(io, ret));
	}
	arm_efd(rc);
}

static int rbd_reactor_init(struct tgt_reactor *r, void **ctxp)
{
	struct rbd_rctx *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return -ENOMEM;
	rc->r = r;
	rc->efd_ev.done = efd_done;
	rc->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rc->efd < 0) {
		int ret = -errno;

		free(rc);
		return ret;
	}
	arm_efd(rc);
	pthread_mutex_lock(&registry_mu);
	rc->reg_next = registry;
	registry = rc;
	pthread_mutex_unlock(&registry_mu);
	*ctxp = rc;
	return 0;
}

static void rbd_reactor_exit(struct tgt_reactor *r, void *ctx)
{
	struct rbd_rctx *rc = ctx;

	pthread_mutex_lock(&registry_mu);
	for (struct rbd_rctx **p = &registry; *p; p = &(*p)->reg_next) {
		if (*p == rc) {
			*p = rc->reg_next;
			break;
		}
	}
	pthread_mutex_unlock(&registry_mu);
	if (rc->outstanding) {
		/* A drain that gave up with requests still at the cluster:
		 * librbd will call back into this context, so it stays. */
		rblk_warn("reactor%u: %u rbd request(s) still at the cluster at exit",
			  tgt_reactor_id(r), rc->outstanding);
		return;
	}
	/* Every request is reaped; the last callback may still be on its
	 * way out of op_done (a few instructions). */
	for (int i = 0; __atomic_load_n(&rc->in_callback, __ATOMIC_ACQUIRE); i++) {
		if (i == 1000) {
			rblk_warn("reactor%u: an rbd callback did not return", tgt_reactor_id(r));
			return;
		}
		usleep(1000);
	}
	close(rc->efd);
	while (rc->blocks) {
		struct rbd_op_block *b = rc->blocks;

		rc->blocks = b->next;
		free(b);
	}
	free(rc);
}

/* Hands op to librbd.  0 or -errno (then nothing was started). */
static int op_start(struct rbd_op *op, rbd_image_t image)
{
	struct tgt_io *io = op->io;

	op->iov = (struct iovec){ .iov_base = io->buf, .iov_len = io->length };
	switch (io->op) {
	case TGT_IO_READ:
		return rbd_aio_readv(image, &op->iov, 1, io->offset, op->comp);
	case TGT_IO_WRITE:
		return rbd_aio_writev(image, &op->iov, 1, io->offset, op->comp);
	case TGT_IO_FLUSH:
		io->syncs++;
		return rbd_aio_flush(image, op->comp);
	case TGT_IO_DISCARD:
		return rbd_aio_discard(image, io->offset, io->length, op->comp);
	case TGT_IO_WRITE_ZEROES:
		return rbd_aio_write_zeroes(image, io->offset, io->length,
					    op->comp, 0, 0);
	}
	return -EINVAL;
}

static int rbd_submit(struct tgt_io *io, void *ctx)
{
	struct rbd_rctx *rc = ctx;
	struct rbd_vol *rv = io->vol->be_priv;
	struct rbd_op *op;
	int ret;

	/* librbd cuts a write at the image's end and calls it done: past
	 * the end of an image shrunk behind our back, refuse it instead. */
	if (io->op != TGT_IO_READ && io->op != TGT_IO_FLUSH &&
	    io->offset + io->length > __atomic_load_n(&rv->image_size, __ATOMIC_RELAXED)) {
		return -ENOSPC;
	}
	op = op_get(rc);
	if (!op)
		return -ENOMEM;
	op->rc = rc;
	op->rv = rv;
	op->in_flight = __atomic_load_n(&rv->in_flight, __ATOMIC_ACQUIRE);
	op->io = io;
	ret = rbd_aio_create_completion(op, op_done, &op->comp);
	if (ret < 0) {
		op_put(rc, op);
		return ret;
	}
	/* Counted before librbd has it: its callback may run at once.  And
	 * before rbd_ha.c looks at the lock: a reopen waits for none left. */
	__atomic_add_fetch(op->in_flight, 1, __ATOMIC_SEQ_CST);
	ret = rv->ha ? tgt_rbd_ha_gate(rv, &op->wait, io, op_release) : 0;
	if (ret == 1) {
		rc->outstanding++;	/* held: op_release brings it back */
		return 0;
	}
	if (!ret)
		ret = op_start(op, rv->image);
	if (ret < 0) {
		__atomic_sub_fetch(op->in_flight, 1, __ATOMIC_SEQ_CST);
		rbd_aio_release(op->comp);
		op_put(rc, op);
		return ret;
	}
	at_lib_add(rc, op);
	rc->outstanding++;
	return 0;
}

const struct tgt_backend_ops tgt_backend_rbd = {
	.name = "rbd",
	.flags = TGT_BE_F_OWN_STORE | TGT_BE_F_REMOTE,
	.close = tgt_rbd_close,
	.reactor_init = rbd_reactor_init,
	.reactor_exit = rbd_reactor_exit,
	.submit = rbd_submit,
	.open_store = tgt_rbd_open_store,
	.create_store = tgt_rbd_create_store,
	.remove_store = tgt_rbd_remove_store,
	.grow_store = tgt_rbd_grow_store,
	.describe = tgt_rbd_describe,
};
