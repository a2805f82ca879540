// SPDX-License-Identifier: MIT
/*
 * Default backend: READ/WRITE on the reactor's own io_uring, O_DIRECT when
 * the store takes 512-byte aligned I/O, fixed buffers from the reactor's
 * registered pool, FUA as RWF_DSYNC on the write itself.  Small reads and
 * writes of a memory-backed file run synchronously on the reactor instead
 * (see memory_without_nowait).
 */
#include "backend.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "log.h"

/* The largest read or write of a memory-backed file done on the reactor:
 * copying this much costs about what a hand-off to an io-wq worker and
 * back costs.  Larger ones go to the workers, which copy in parallel. */
#define INLINE_MAX	(64u << 10)

/*
 * A file on tmpfs or ramfs is memory, but the kernel may not offer
 * nonblocking reads and writes on it (no FMODE_NOWAIT; so on 6.12).  Then
 * io_uring hands every READ and WRITE of it to an io-wq worker thread:
 * a wakeup of the worker and one of the reactor to copy a few pages.  For
 * memory, doing the copy here is cheaper.  RWF_NOWAIT on a one-block read
 * is the probe: EOPNOTSUPP means no nonblocking support.  A kernel that
 * has it runs io_uring's I/O inline by itself, and this stays off.  Other
 * file systems without it (NFS, FUSE) keep the workers: their I/O can
 * block for as long as the network takes.
 */
static bool memory_without_nowait(const struct tgt_volume *vol)
{
	struct statfs sfs;

	if (vol->is_blkdev || fstatfs(vol->fd, &sfs) ||
	    (sfs.f_type != TMPFS_MAGIC && sfs.f_type != RAMFS_MAGIC))
		return false;
	return tgt_be_probe_read(vol->fd, RWF_NOWAIT) == -EOPNOTSUPP;
}

static int uring_open(struct tgt_volume *vol)
{
	int ret = tgt_be_try_direct(vol);

	if (ret > 0)
		rblk_info("volume %s: direct = no: buffered I/O through the page cache",
			  vol->name);
	else if (ret < 0)
		rblk_info("volume %s: O_DIRECT not possible on %s (%s): using buffered I/O",
			  vol->name, vol->path, strerror(-ret));
	vol->mem_inline = memory_without_nowait(vol);
	if (vol->mem_inline)
		rblk_info("volume %s: %s is in memory without nonblocking I/O: "
			  "reads and writes up to %u KiB run on the reactor",
			  vol->name, vol->path, INLINE_MAX >> 10);
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

/* One synchronous step of a memory-backed volume's I/O; its result goes
 * through rw_done on the next loop turn, as a CQE's would. */
static void rw_inline(struct tgt_io *io, char *p, unsigned len, uint64_t off)
{
	struct iovec iov = { .iov_base = p, .iov_len = len };
	ssize_t n;

	if (io->op == TGT_IO_READ)
		n = preadv2(io->vol->fd, &iov, 1, off, 0);
	else
		n = pwritev2(io->vol->fd, &iov, 1, off, io->fua ? RWF_DSYNC : 0);
	tgt_reactor_defer(io->r, &io->ev, n < 0 ? -errno : (int)n);
}

static void rw_step(struct tgt_io *io)
{
	struct io_uring_sqe *sqe;
	char *p = (char *)io->buf + io->done_bytes;
	unsigned len = io->length - io->done_bytes;
	uint64_t off = io->offset + io->done_bytes;
	int fd = io->vol->fd;

	if (io->op == TGT_IO_WRITE && io->fua)
		io->dsync_writes++;
	if (io->vol->mem_inline && len <= INLINE_MAX) {
		rw_inline(io, p, len, off);
		return;
	}
	sqe = tgt_reactor_sqe(io->r);
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
		if (io->fua)
			sqe->rw_flags = RWF_DSYNC;
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
