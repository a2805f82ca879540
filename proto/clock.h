/* SPDX-License-Identifier: MIT */
/*
 * The monotonic clock, in the unit each caller counts in, shared by every
 * program: the one copy.  Inline: it sits on paths that poll with a
 * deadline and on every I/O's latency count.
 */
#ifndef RBLK_PROTO_CLOCK_H
#define RBLK_PROTO_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t rblk_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t rblk_now_us(void)
{
	return rblk_now_ns() / 1000u;
}

static inline int64_t rblk_now_ms(void)
{
	return (int64_t)(rblk_now_ns() / 1000000u);
}

/* Seconds as a double, for rates a human reads. */
static inline double rblk_now_s(void)
{
	return (double)rblk_now_ns() / 1e9;
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
