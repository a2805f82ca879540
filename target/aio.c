// SPDX-License-Identifier: MIT
/*
 * libaio backend: READ/WRITE with io_submit on an O_DIRECT fd (buffered
 * libaio would block in io_submit), completions signalled on an eventfd
 * that the reactor's io_uring reads, so the reactor still waits on one
 * thing.  FLUSH/DISCARD/WRITE_ZEROES go through the shared helper (io_uring
 * fsync/fallocate): IO_CMD_FDSYNC is refused by most file systems.
 */
#include "backend.h"

#include <errno.h>
#include <libaio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"

#define AIO_DEPTH	256

struct aio_ctx {
	struct tgt_reactor *r;
	io_context_t ctx;
	int efd;
	uint64_t efd_val;
	struct tgt_event efd_ev;
	struct iocb iocbs[AIO_DEPTH];
	struct iocb *free_iocb[AIO_DEPTH];
	unsigned nfree;
	struct tgt_io *wait_head, *wait_tail;	/* no iocb or EAGAIN */
};

static int aio_open(struct tgt_volume *vol)
{
	int ret = tgt_be_try_direct(vol);

	if (ret > 0)
		rblk_warn("volume %s: direct = no: libaio runs buffered and may block the reactor",
			  vol->name);
	else if (ret < 0)
		rblk_warn("volume %s: O_DIRECT not possible on %s (%s): libaio will run buffered and may block the reactor",
			  vol->name, vol->path, strerror(-ret));
	return 0;
}

static void arm_efd(struct aio_ctx *a)
{
	struct io_uring_sqe *sqe = tgt_reactor_sqe(a->r);

	io_uring_prep_read(sqe, a->efd, &a->efd_val, sizeof(a->efd_val), 0);
	tgt_sqe_set_event(sqe, &a->efd_ev);
}

static void queue_wait(struct aio_ctx *a, struct tgt_io *io)
{
	io->be_priv = NULL;
	if (a->wait_tail)
		a->wait_tail->be_priv = io;
	else
		a->wait_head = io;
	a->wait_tail = io;
}

/* Starts (the rest of) io; 0, or -errno when it cannot be started. */
static int start_rw(struct aio_ctx *a, struct tgt_io *io)
{
	char *p = (char *)io->buf + io->done_bytes;
	size_t len = io->length - io->done_bytes;
	long long off = io->offset + io->done_bytes;
	struct iocb *cb;
	int ret;

	if (!a->nfree) {
		queue_wait(a, io);
		return 0;
	}
	cb = a->free_iocb[--a->nfree];
	if (io->op == TGT_IO_READ)
		io_prep_pread(cb, io->vol->fd, p, len, off);
	else
		io_prep_pwrite(cb, io->vol->fd, p, len, off);
	if (io->op == TGT_IO_WRITE && io->fua)
		cb->aio_rw_flags = RWF_DSYNC;
	io_set_eventfd(cb, a->efd);
	cb->data = io;
	do {
		ret = io_submit(a->ctx, 1, &cb);
	} while (ret == -EINTR);
	if (ret == 1) {
		if (cb->aio_rw_flags & RWF_DSYNC)
			io->dsync_writes++;
		return 0;
	}
	a->free_iocb[a->nfree++] = cb;
	if (ret == -EAGAIN) {
		queue_wait(a, io);
		return 0;
	}
	return ret < 0 ? ret : -EIO;
}

static void run_waiters(struct aio_ctx *a)
{
	while (a->wait_head && a->nfree) {
		struct tgt_io *io = a->wait_head;
		int ret;

		a->wait_head = io->be_priv;
		if (!a->wait_head)
			a->wait_tail = NULL;
		ret = start_rw(a, io);
		if (ret)
			io->complete(io, ret);
		if (a->wait_tail == io)
			break;	/* re-queued: EAGAIN, try after completions */
	}
}

static void efd_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct aio_ctx *a = (struct aio_ctx *)
		((char *)ev - offsetof(struct aio_ctx, efd_ev));
	struct io_event events[64];
	struct timespec zero = { 0, 0 };
	int n;

	if (res == -ECANCELED)
		return;
	do {
		n = io_getevents(a->ctx, 0, 64, events, &zero);
		for (int i = 0; i < n; i++) {
			struct iocb *cb = events[i].obj;
			struct tgt_io *io = cb->data;
			long r = (long)events[i].res;

			a->free_iocb[a->nfree++] = cb;
			if (r == -EINTR || r == -EAGAIN)
				r = 0;	/* nothing done: go again below */
			else if (r < 0) {
				io->complete(io, (int)r);
				continue;
			} else if (r == 0 && io->op == TGT_IO_WRITE) {
				io->complete(io, -EIO);
				continue;
			} else if (r == 0) {
				memset((char *)io->buf + io->done_bytes, 0,
				       io->length - io->done_bytes);
				r = io->length - io->done_bytes;
			}
			io->done_bytes += r;
			if (io->done_bytes >= io->length) {
				io->complete(io, 0);
				continue;
			}
			int ret = start_rw(a, io);

			if (ret)
				io->complete(io, ret);
		}
	} while (n == 64);
	run_waiters(a);
	arm_efd(a);
}

static int aio_reactor_init(struct tgt_reactor *r, void **ctxp)
{
	struct aio_ctx *a = calloc(1, sizeof(*a));
	int ret;

	if (!a)
		return -ENOMEM;
	a->r = r;
	a->efd_ev.done = efd_done;
	ret = io_setup(AIO_DEPTH, &a->ctx);
	if (ret < 0)
		goto out_free;
	a->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->efd < 0) {
		ret = -errno;
		goto out_destroy;
	}
	for (unsigned i = 0; i < AIO_DEPTH; i++)
		a->free_iocb[i] = &a->iocbs[i];
	a->nfree = AIO_DEPTH;
	arm_efd(a);
	*ctxp = a;
	return 0;

out_destroy:
	io_destroy(a->ctx);
out_free:
	free(a);
	return ret;
}

static void aio_reactor_exit(struct tgt_reactor *r, void *ctx)
{
	struct aio_ctx *a = ctx;

	io_destroy(a->ctx);
	close(a->efd);
	free(a);
}

static int aio_submit(struct tgt_io *io, void *ctx)
{
	if (io->op != TGT_IO_READ && io->op != TGT_IO_WRITE)
		return tgt_be_submit_sync_class(io);
	return start_rw(ctx, io);
}

const struct tgt_backend_ops tgt_backend_aio = {
	.name = "aio",
	.open = aio_open,
	.reactor_init = aio_reactor_init,
	.reactor_exit = aio_reactor_exit,
	.submit = aio_submit,
};
