// SPDX-License-Identifier: MIT
/*
 * Waiting that a stopping caller can cut short (rblk_client_opts.stop):
 * one poll(2) in slices, the caller asked between them.  A flag the caller
 * sets from a signal handler (fio's terminate) wakes nothing, so the
 * slices bound how late it is seen.
 */
#include "client_transport.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>

#include "clock.h"

int rblk_client_wait_fd(int fd, short events, int timeout_ms,
			const struct rblk_client_stop *stop, short *revents)
{
	int64_t deadline = timeout_ms < 0 ? -1 : rblk_now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = fd, .events = events };
	bool sliced = stop && stop->fn;
	int ret;

	for (;;) {
		int wait = rblk_left_ms(deadline);

		if (sliced && stop->fn(stop->arg))
			return -ECANCELED;
		if (sliced && (wait < 0 || wait > RBLK_STOP_POLL_MS))
			wait = RBLK_STOP_POLL_MS;
		ret = poll(&pfd, 1, wait);
		if (ret > 0) {
			if (revents)
				*revents = pfd.revents;
			return 0;
		}
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (rblk_left_ms(deadline) == 0)
			return -ETIMEDOUT;
	}
}
