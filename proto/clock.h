/* SPDX-License-Identifier: MIT */
/*
 * Monotonic milliseconds for timeouts and deadlines, shared by every
 * program.  Inline: it sits on paths that poll with a deadline.
 */
#ifndef RBLK_PROTO_CLOCK_H
#define RBLK_PROTO_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t rblk_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (>= 0), or -1 when deadline is -1
 * (no deadline: the poll(2) convention). */
static inline int rblk_left_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - rblk_now_ms();
	return left > 0 ? (int)left : 0;
}

#endif /* RBLK_PROTO_CLOCK_H */
