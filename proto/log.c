// SPDX-License-Identifier: MIT
/* Log module: see log.h.  One write(2) per line so threads do not interleave. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int rblk_log_level = RBLK_LOG_INFO;
unsigned rblk_debug_mask;
static const char *log_prog = "rblk";

static const char *const level_names[] = { "ERROR", "WARN ", "INFO ", "DEBUG" };

void rblk_log_init(const char *progname)
{
	if (progname)
		log_prog = progname;
}

int rblk_log_set_level(const char *name)
{
	static const char *const names[] = { "err", "warn", "info", "debug" };

	for (int i = 0; i < 4; i++) {
		if (!strcmp(name, names[i])) {
			rblk_log_level = i;
			return 0;
		}
	}
	return -EINVAL;
}

void rblk_vlog(int level, const char *fmt, va_list ap)
{
	char line[1024];
	struct timeval tv;
	struct tm tm;
	int n, saved = errno;

	if (level > rblk_log_level && level != RBLK_LOG_DEBUG)
		return;
	if (level < 0 || level > RBLK_LOG_DEBUG)
		level = RBLK_LOG_ERR;
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
		     "%04d-%02d-%02dT%02d:%02d:%02d.%03ld %s[%d] %s ",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		     tm.tm_min, tm.tm_sec, (long)tv.tv_usec / 1000, log_prog,
		     (int)getpid(), level_names[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nowhere left to report it */
	}
	errno = saved;
}

void rblk_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rblk_vlog(level, fmt, ap);
	va_end(ap);
}
