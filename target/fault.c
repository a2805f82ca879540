// SPDX-License-Identifier: MIT
/*
 * fault backend, for tests: the uring backend, except that READ/WRITE
 * touching the byte range named by the environment variable
 * RBLK_FAULT_EIO="OFFSET:LENGTH" (read at volume open) fail with -EIO.
 * Lets tests check that a backing-store error reaches the initiator as
 * RBLK_S_IO_ERROR without breaking the connection.
 */
#include "backend.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

struct fault_range {
	uint64_t off, len;
};

static void fault_fail(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_io *io = (struct tgt_io *)ev;

	io->complete(io, -EIO);
}

static int fault_open(struct tgt_volume *vol)
{
	const char *env = getenv("RBLK_FAULT_EIO");
	struct fault_range *fr;
	int ret = tgt_backend_uring.open(vol);

	if (ret)
		return ret;
	fr = calloc(1, sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	if (env && sscanf(env, "%" SCNu64 ":%" SCNu64, &fr->off, &fr->len) != 2) {
		free(fr);
		return -EINVAL;
	}
	vol->be_priv = fr;
	rblk_info("volume %s: fault backend fails I/O in [%" PRIu64 ", +%" PRIu64 ")",
		  vol->name, fr->off, fr->len);
	return 0;
}

static void fault_close(struct tgt_volume *vol)
{
	free(vol->be_priv);
	vol->be_priv = NULL;
}

static int fault_submit(struct tgt_io *io, void *ctx)
{
	const struct fault_range *fr = io->vol->be_priv;

	if ((io->op == TGT_IO_READ || io->op == TGT_IO_WRITE) && fr->len &&
	    io->offset < fr->off + fr->len && fr->off < io->offset + io->length) {
		io->ev.done = fault_fail;
		tgt_reactor_defer(io->r, &io->ev, 0);
		return 0;
	}
	return tgt_backend_uring.submit(io, ctx);
}

const struct tgt_backend_ops tgt_backend_fault = {
	.name = "fault",
	.open = fault_open,
	.close = fault_close,
	.submit = fault_submit,
};
