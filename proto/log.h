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

/* Sets the program name shown in each line (default "rblk"). */
void rblk_log_init(const char *progname);
/* Parses "err|warn|info|debug"; returns 0 or -EINVAL. */
int rblk_log_set_level(const char *name);

void rblk_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rblk_vlog(int level, const char *fmt, va_list ap);

#define rblk_err(...)	rblk_log(RBLK_LOG_ERR, __VA_ARGS__)
#define rblk_warn(...)	rblk_log(RBLK_LOG_WARN, __VA_ARGS__)
#define rblk_info(...)	rblk_log(RBLK_LOG_INFO, __VA_ARGS__)
#define RBLK_DBG(area, ...) do {					\
		if (__builtin_expect(rblk_debug_mask & (area), 0))	\
			rblk_log(RBLK_LOG_DEBUG, __VA_ARGS__);		\
	} while (0)

#endif /* RBLK_PROTO_LOG_H */
