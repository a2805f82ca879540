// SPDX-License-Identifier: MIT
/*
 * Default backend: READ/WRITE on the reactor's own io_uring, O_DIRECT when
 * the store takes 512-byte aligned I/O, fixed buffers from the reactor's
 * registered pool, FUA as RWF_DSYNC on the write itself.
 */
#include "backend.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static int uring_open(struct tgt_volume *vol)
{
	int ret = tgt_be_try_direct(vol);

	if (ret > 0)
		rblk_info("volume %s: direct = no: buffered I/O through the page cache",
			  vol->name);
	else if (ret < 0)
		rblk_info("volume %s: O_DIRECT not possible on %s (%s): using buffered I/O",
			  vol->name, vol->path, strerror(-ret));
	return 0;
}

static void rw_step(struct tgt_io *io);

static void rw_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_io *io = (struct tgt_io *)ev;

	if (res == -EINTR || res == -EAGAIN) {
		rw_step(io);
		return;
	}
	if (res < 0) {
		io->complete(io, res);
		return;
	}
	if (res == 0) {
		if (io->op == TGT_IO_WRITE) {
			io->complete(io, -EIO);
			return;
		}
		/* Past the end of a file someone shortened: a hole. */
		memset((char *)io->buf + io->done_bytes, 0,
		       io->length - io->done_bytes);
		io->done_bytes = io->length;
	}
	io->done_bytes += res;
	if (io->done_bytes < io->length) {
		rw_step(io);	/* short transfer: go on from where it ended */
		return;
	}
	io->complete(io, 0);
}

static void rw_step(struct tgt_io *io)
{
	struct io_uring_sqe *sqe = tgt_reactor_sqe(io->r);
	char *p = (char *)io->buf + io->done_bytes;
	unsigned len = io->length - io->done_bytes;
	uint64_t off = io->offset + io->done_bytes;
	int fd = io->vol->fd;

	if (io->op == TGT_IO_READ) {
		if (io->buf_index >= 0)
			io_uring_prep_read_fixed(sqe, fd, p, len, off,
						 io->buf_index);
		else
			io_uring_prep_read(sqe, fd, p, len, off);
	} else {
		if (io->buf_index >= 0)
			io_uring_prep_write_fixed(sqe, fd, p, len, off,
						  io->buf_index);
		else
			io_uring_prep_write(sqe, fd, p, len, off);
		if (io->fua) {
			sqe->rw_flags = RWF_DSYNC;
			io->dsync_writes++;
		}
	}
	tgt_sqe_set_event(sqe, &io->ev);
}

static int uring_submit(struct tgt_io *io, void *ctx)
{
	if (io->op != TGT_IO_READ && io->op != TGT_IO_WRITE)
		return tgt_be_submit_sync_class(io);
	io->ev.done = rw_done;
	rw_step(io);
	return 0;
}

const struct tgt_backend_ops tgt_backend_uring = {
	.name = "uring",
	.open = uring_open,
	.submit = uring_submit,
};
