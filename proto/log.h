/* SPDX-License-Identifier: MIT */
/*
 * One small log module for every rblk binary.  Lines go to stderr as
 *   2026-12-02T09:30:00.123 rblk-target[1234] INFO  reactor1: message
 * Levels filter what is printed; the debug mask enables RBLK_DBG() lines per
 * area so the hot path costs one branch when debugging is off.
 */
#ifndef RBLK_PROTO_LOG_H
#define RBLK_PROTO_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

enum rblk_log_level {
	RBLK_LOG_ERR	= 0,
	RBLK_LOG_WARN	= 1,
	RBLK_LOG_INFO	= 2,
	RBLK_LOG_DEBUG	= 3,
};

/* Debug areas for RBLK_DBG(). */
#define RBLK_DBG_IO	(1u << 0)	/* every command */
#define RBLK_DBG_CONN	(1u << 1)	/* connection state changes */
#define RBLK_DBG_RDMA	(1u << 2)
#define RBLK_DBG_UBLK	(1u << 3)
#define RBLK_DBG_CTL	(1u << 4)	/* admin socket */

extern int rblk_log_level;
extern unsigned rblk_debug_mask;

/* Sets the program name shown in each line (default "rblk"), and whether
 * stderr is the journal (JOURNAL_STREAM): then lines carry "<N>" instead
 * of a time, pid and name. */
void rblk_log_init(const char *progname);
/* "err|warn|info|debug" to RBLK_LOG_*, or -EINVAL; and back ("?" for
 * another number).  The one spelling, for options and the config. */
int rblk_log_level_parse(const char *name);
const char *rblk_log_level_name(int level);
/* Parses "err|warn|info|debug"; returns 0 or -EINVAL. */
int rblk_log_set_level(const char *name);

void rblk_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rblk_vlog(int level, const char *fmt, va_list ap);

#define rblk_err(...)	rblk_log(RBLK_LOG_ERR, __VA_ARGS__)
#define rblk_warn(...)	rblk_log(RBLK_LOG_WARN, __VA_ARGS__)
#define rblk_info(...)	rblk_log(RBLK_LOG_INFO, __VA_ARGS__)
/*
 * A log line that a peer or a resource shortage can repeat without bound
 * (accept failing at the fd limit, hostile clients) gets a rate limit: one
 * per call site (or per listener), usually static.  At most burst lines per
 * interval_ms; the first line after a stretch of drops says how many there
 * were, so the count is never lost, only the repetition.
 */
struct rblk_ratelimit {
	unsigned interval_ms, burst;
	int64_t window_start;		/* ms, rblk_now_ms() clock */
	unsigned printed, suppressed;
};
#define RBLK_RATELIMIT_INIT(interval, n) \
	{ .interval_ms = (interval), .burst = (n), .window_start = -1 }

/*
 * The decision alone, at time now_ms (tests pass their own clock).  Returns
 * true if a line may go out, and then sets *dropped to the lines suppressed
 * since the last one that went out; false if this one is suppressed (and
 * counted).  Not locked: rblk_log_rl() is the thread-safe wrapper.
 */
bool rblk_ratelimit_pass(struct rblk_ratelimit *rl, int64_t now_ms,
			 unsigned *dropped);
/* rblk_log under rl (any thread).  Returns true if the line was written. */
bool rblk_log_rl(struct rblk_ratelimit *rl, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define rblk_err_rl(rl, ...)	rblk_log_rl(rl, RBLK_LOG_ERR, __VA_ARGS__)
#define rblk_warn_rl(rl, ...)	rblk_log_rl(rl, RBLK_LOG_WARN, __VA_ARGS__)

#define RBLK_DBG(area, ...) do {					\
		if (__builtin_expect(rblk_debug_mask & (area), 0))	\
			rblk_log(RBLK_LOG_DEBUG, __VA_ARGS__);		\
	} while (0)

#endif /* RBLK_PROTO_LOG_H */
