// SPDX-License-Identifier: MIT
/* null backend: no storage; reads return zeroes, everything succeeds at
 * once (on the next loop turn, via tgt_reactor_defer). */
#include "backend.h"

#include <string.h>

static void null_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_io *io = (struct tgt_io *)ev;

	io->complete(io, res);
}

static int null_submit(struct tgt_io *io, void *ctx)
{
	if (io->op == TGT_IO_READ)
		memset(io->buf, 0, io->length);
	io->ev.done = null_done;
	tgt_reactor_defer(io->r, &io->ev, 0);
	return 0;
}

const struct tgt_backend_ops tgt_backend_null = {
	.name = "null",
	.flags = TGT_BE_F_NO_STORE,
	.submit = null_submit,
};
