// SPDX-License-Identifier: MIT
/* Volume info -> ublk parameters (see ublk_params.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ublk_params.h"

static unsigned ilog2_u32(uint32_t v)
{
	unsigned s = 0;

	while (v > 1) {
		v >>= 1;
		s++;
	}
	return s;
}

int ini_ublk_check_volume(const struct rblk_volume_info *vi,
			  char *why, size_t whylen)
{
	const char *msg = NULL;
	uint32_t bs = vi->block_size;

	if (bs < 512 || bs > 4096 || (bs & (bs - 1)))
		msg = "block size is not 512, 1024, 2048 or 4096";
	else if (vi->size == 0 || vi->size % bs)
		msg = "volume size is not a non-zero multiple of the block size";
	else if (vi->max_io < 4096 || vi->max_io % bs)
		msg = "max I/O size is below one page or not a block multiple";
	else if (vi->queue_depth == 0)
		msg = "target granted queue depth 0";
	if (!msg)
		return 0;
	if (why && whylen)
		snprintf(why, whylen, "%s", msg);
	return -EINVAL;
}

uint32_t ini_ublk_io_buf_bytes(const struct rblk_volume_info *vi)
{
	uint32_t b = vi->max_io;

	if (b > INI_UBLK_MAX_IO_BUF)
		b = INI_UBLK_MAX_IO_BUF;
	return b & ~4095u;
}

int ini_ublk_build_params(const struct rblk_volume_info *vi,
			  uint32_t buf_bytes, struct ublk_params *p)
{
	struct ublk_param_basic *b = &p->basic;
	struct ublk_param_discard *d = &p->discard;
	uint32_t io_bytes, io_sectors;
	unsigned lshift, pshift;

	if (ini_ublk_check_volume(vi, NULL, 0))
		return -EINVAL;
	io_bytes = vi->max_io < buf_bytes ? vi->max_io : buf_bytes;
	/* Whole blocks only: a request may never exceed one tag's buffer. */
	io_bytes -= io_bytes % vi->block_size;
	if (io_bytes < vi->block_size)
		return -EINVAL;
	io_sectors = io_bytes >> 9;

	memset(p, 0, sizeof(*p));
	p->len = sizeof(*p);
	p->types = UBLK_PARAM_TYPE_BASIC;

	lshift = ilog2_u32(vi->block_size);
	/* Advertise 4 KiB physical blocks so file systems align to pages,
	 * which is also what O_DIRECT backends on the target prefer. */
	pshift = lshift > 12 ? lshift : 12;
	b->logical_bs_shift = lshift;
	b->physical_bs_shift = pshift;
	/* io_min == io_opt == physical: mkfs treats that as "no stripe". */
	b->io_min_shift = pshift;
	b->io_opt_shift = pshift;
	b->max_sectors = io_sectors;
	b->dev_sectors = vi->size >> 9;
	if (vi->vol_flags & RBLK_VOL_F_READ_ONLY)
		b->attrs |= UBLK_ATTR_READ_ONLY;
	/*
	 * A volatile cache makes the block layer send FLUSH (and FUA, when
	 * honoured) so fsync reaches the target's disk; without FLUSH support
	 * the target writes through and neither flag is wanted.
	 */
	if (vi->vol_flags & RBLK_VOL_F_FLUSH) {
		b->attrs |= UBLK_ATTR_VOLATILE_CACHE;
		if (vi->vol_flags & RBLK_VOL_F_FUA)
			b->attrs |= UBLK_ATTR_FUA;
	}

	if (!(vi->vol_flags & (RBLK_VOL_F_DISCARD | RBLK_VOL_F_WRITE_ZEROES)) ||
	    (vi->vol_flags & RBLK_VOL_F_READ_ONLY))
		return 0;
	p->types |= UBLK_PARAM_TYPE_DISCARD;
	/* ublk insists on a granularity and on single-segment discards even
	 * when only write-zeroes is offered. */
	d->discard_granularity = vi->block_size;
	d->max_discard_segments = 1;
	/* The target's limits [V34]: the block layer splits longer ones. */
	if (vi->vol_flags & RBLK_VOL_F_DISCARD)
		d->max_discard_sectors = vi->max_discard >> 9;
	if (vi->vol_flags & RBLK_VOL_F_WRITE_ZEROES)
		d->max_write_zeroes_sectors = vi->max_write_zeroes >> 9;
	return 0;
}
