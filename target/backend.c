// SPDX-License-Identifier: MIT
/*
 * Backend registry, plus the helpers every backend shares: the
 * no-data commands (FLUSH, DISCARD, WRITE_ZEROES) and the O_DIRECT probe.
 */
#include "backend.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "be_stats.h"
#include "helpers.h"
#include "log.h"

static const struct tgt_backend_ops *const registry[] = {
	&tgt_backend_uring,
	&tgt_backend_aio,
	&tgt_backend_null,
	&tgt_backend_fault,
#ifdef RBLK_HAVE_RBD
	&tgt_backend_rbd,
#endif
};
_Static_assert(ARRAY_SIZE(registry) <= TGT_BACKEND_MAX,
	       "raise TGT_BACKEND_MAX");
_Static_assert(TGT_SLOT_BACKEND0 + TGT_BACKEND_MAX <= TGT_REACTOR_SLOTS,
	       "a reactor slot for each backend");

const struct tgt_backend_ops *tgt_backend_find(const char *name)
{
	for (unsigned i = 0; i < ARRAY_SIZE(registry); i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

int tgt_backend_index(const struct tgt_backend_ops *be)
{
	for (unsigned i = 0; i < ARRAY_SIZE(registry); i++)
		if (registry[i] == be)
			return i;
	return -ENOENT;
}

const char *tgt_backend_names(void)
{
#ifdef RBLK_HAVE_RBD
	return "uring, aio, null, fault, rbd";
#else
	return "uring, aio, null, fault";
#endif
}

const char *tgt_backend_not_built(const char *name)
{
#ifndef RBLK_HAVE_RBD
	if (!strcmp(name, "rbd"))
		return "backend 'rbd' is not built into this rblk-target (librbd-dev and librados-dev were missing when it was built)";
#endif
	return NULL;
}

/* Every backend completion passes here: counts it (be_stats.h), then
 * hands it to the caller's complete. */
static void be_complete(struct tgt_io *io, int res)
{
	struct tgt_be_slot *s = tgt_be_stats_slot(io->vol->be_stats,
						  tgt_reactor_id(io->r));

	if (s) {
		uint64_t lat = rblk_now_ns() - io->be_start_ns;

		if (res < 0)
			tgt_stat_inc(&s->errors, 1);
		tgt_stat_inc(&s->lat_ns, lat);
		if (lat > s->lat_max_ns)
			__atomic_store_n(&s->lat_max_ns, lat, __ATOMIC_RELAXED);
		tgt_stat_inc(&s->hist[tgt_stat_bucket(lat)], 1);
		__atomic_store_n(&s->completed, s->completed + 1, __ATOMIC_RELEASE);
	}
	io->complete = io->be_caller_complete;
	io->complete(io, res);
}

int tgt_backend_submit(struct tgt_io *io)
{
	const struct tgt_backend_ops *be = io->vol->be;
	struct tgt_reactor_slot *slot =
		tgt_reactor_slot(io->r, TGT_SLOT_BACKEND0 + io->vol->be_index);
	struct tgt_be_slot *s;
	int ret;

	if (be->reactor_init && !slot->data) {
		ret = be->reactor_init(io->r, &slot->data);
		if (ret) {
			rblk_err("reactor%u: backend %s: %s",
				 tgt_reactor_id(io->r), be->name, strerror(-ret));
			return ret;
		}
		slot->exit = be->reactor_exit;
	}
	io->done_bytes = 0;
	io->stage = 0;
	io->syncs = 0;
	io->dsync_writes = 0;
	io->be_caller_complete = io->complete;
	io->complete = be_complete;
	io->be_start_ns = rblk_now_ns();
	ret = be->submit(io, slot->data);
	if (ret) {
		io->complete = io->be_caller_complete;
		return ret;
	}
	/* After submit: complete() never runs inside it, and a refused
	 * command was never at the store. */
	s = tgt_be_stats_slot(io->vol->be_stats, tgt_reactor_id(io->r));
	if (s)
		tgt_stat_inc(&s->submitted, 1);
	return 0;
}

/* ---- FLUSH / DISCARD / WRITE_ZEROES ---------------------------------- */

static void sync_class_step(struct tgt_io *io);

static void sync_class_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_io *io = (struct tgt_io *)ev;

	if (res == -EINTR || res == -EAGAIN) {
		sync_class_step(io);
		return;
	}
	if (res < 0 || io->stage == 1) {
		io->complete(io, res < 0 ? res : 0);
		return;
	}
	/* stage 0 done: a FUA WRITE_ZEROES still needs its fdatasync */
	if (io->op == TGT_IO_WRITE_ZEROES && io->fua) {
		io->stage = 1;
		sync_class_step(io);
		return;
	}
	io->complete(io, 0);
}

/*
 * Block devices: fallocate would give WRITE_ZEROES (ZERO_RANGE) but not a
 * plain discard (PUNCH_HOLE on a block device is a zero-out that fails
 * where only discard is offered), so both run as the ioctls, on the
 * reactor's offload thread: a zero-out the device cannot offload writes
 * every block and must not stall the reactor's other connections.
 * Offload thread.
 */
static int blkdev_range_run(struct tgt_offload_job *job)
{
	struct tgt_io *io = (struct tgt_io *)
		((char *)job - offsetof(struct tgt_io, off));
	uint64_t range[2] = { io->offset, io->length };
	unsigned long req = io->op == TGT_IO_DISCARD ? BLKDISCARD : BLKZEROOUT;

	if (ioctl(io->vol->fd, req, range) < 0)
		return -errno;
	if (io->fua && fdatasync(io->vol->fd) < 0)
		return -errno;
	return 0;
}

/* Reactor thread: the offload job finished. */
static void blkdev_range_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_io *io = (struct tgt_io *)
		((char *)ev - offsetof(struct tgt_io, off.ev));

	io->stage = 1;
	sync_class_done(&io->ev, res, 0);
}

static void blkdev_range(struct tgt_io *io)
{
	int ret;

	if (io->fua)
		io->syncs++;
	io->off.run = blkdev_range_run;
	io->off.ev.done = blkdev_range_done;
	ret = tgt_offload_submit(io->r, &io->off);
	if (ret) {
		io->stage = 1;
		tgt_reactor_defer(io->r, &io->ev, ret);
	}
}

static void sync_class_step(struct tgt_io *io)
{
	struct io_uring_sqe *sqe;
	int fd = io->vol->fd;

	if (io->stage == 0 && io->op != TGT_IO_FLUSH && io->vol->is_blkdev) {
		blkdev_range(io);
		return;
	}
	sqe = tgt_reactor_sqe(io->r);
	if (io->stage == 1 || io->op == TGT_IO_FLUSH) {
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		io->syncs++;
	} else if (io->op == TGT_IO_DISCARD)
		io_uring_prep_fallocate(sqe, fd, FALLOC_FL_PUNCH_HOLE |
					FALLOC_FL_KEEP_SIZE, io->offset,
					io->length);
	else
		io_uring_prep_fallocate(sqe, fd, FALLOC_FL_ZERO_RANGE |
					FALLOC_FL_KEEP_SIZE, io->offset,
					io->length);
	tgt_sqe_set_event(sqe, &io->ev);
}

int tgt_be_submit_sync_class(struct tgt_io *io)
{
	switch (io->op) {
	case TGT_IO_FLUSH:
	case TGT_IO_DISCARD:
	case TGT_IO_WRITE_ZEROES:
		break;
	default:
		return -EINVAL;
	}
	io->ev.done = sync_class_done;
	io->stage = 0;
	if (io->vol->fd < 0) {
		io->stage = 1;
		tgt_reactor_defer(io->r, &io->ev, 0);
		return 0;
	}
	sync_class_step(io);
	return 0;
}

/* ---- O_DIRECT probe -------------------------------------------------- */

int tgt_be_probe_read(int fd, int rwf)
{
	struct iovec iov = { .iov_len = 512 };
	int ret;

	if (posix_memalign(&iov.iov_base, 4096, 4096))
		return -ENOMEM;
	ret = preadv2(fd, &iov, 1, 0, rwf) < 0 ? -errno : 0;
	free(iov.iov_base);
	return ret;
}

static int open_direct(struct tgt_volume *vol)
{
	int flags = (vol->flags & RBLK_VOL_F_READ_ONLY) ? O_RDONLY : O_RDWR;
	int fd, ret;

	fd = open(vol->path, flags | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* A 512-byte aligned read proves the store takes our smallest I/O;
	 * reading is the only probe that cannot harm data. */
	ret = tgt_be_probe_read(fd, 0);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int tgt_be_try_direct(struct tgt_volume *vol)
{
	int fd;

	if (vol->buffered)
		return 1;
	fd = open_direct(vol);
	if (fd < 0)
		return fd;
	close(vol->fd);
	vol->fd = fd;
	vol->direct = true;
	return 0;
}
