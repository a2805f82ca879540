// SPDX-License-Identifier: MIT
/* Log module: see log.h.  One write(2) per line so threads do not interleave. */
#include "log.h"
#include "clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int rblk_log_level = RBLK_LOG_INFO;
unsigned rblk_debug_mask;
static const char *log_prog = "rblk";

static const char *const level_names[] = { "ERROR", "WARN ", "INFO ", "DEBUG" };
/* syslog priorities of the levels: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG */
static const int level_prio[] = { 3, 4, 6, 7 };

/* stderr is systemd's journal: lines get "<N>" and no time of their own. */
static bool to_journal;

/*
 * systemd sets JOURNAL_STREAM to the device:inode of the stream it
 * connected to the journal; only when stderr is still that stream does
 * the journal read our lines (a redirect in the unit, or a child that
 * inherited the variable, writes somewhere else).
 */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st))
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void rblk_log_init(const char *progname)
{
	if (progname)
		log_prog = progname;
	to_journal = stderr_is_journal();
}

/* How levels are spelled in options and the config. */
static const char *const level_keys[] = { "err", "warn", "info", "debug" };

int rblk_log_level_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, level_keys[i]))
			return i;
	return -EINVAL;
}

const char *rblk_log_level_name(int level)
{
	return level >= 0 && level < 4 ? level_keys[level] : "?";
}

int rblk_log_set_level(const char *name)
{
	int level = rblk_log_level_parse(name);

	if (level < 0)
		return level;
	rblk_log_level = level;
	return 0;
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
	if (to_journal) {
		/* The journal stamps time, pid and name itself. */
		n = snprintf(line, sizeof(line), "<%d>%s ", level_prio[level],
			     level_names[level]);
	} else {
		gettimeofday(&tv, NULL);
		localtime_r(&tv.tv_sec, &tm);
		n = snprintf(line, sizeof(line),
			     "%04d-%02d-%02dT%02d:%02d:%02d.%03ld %s[%d] %s ",
			     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			     tm.tm_min, tm.tm_sec, (long)tv.tv_usec / 1000, log_prog,
			     (int)getpid(), level_names[level]);
	}
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

bool rblk_ratelimit_pass(struct rblk_ratelimit *rl, int64_t now_ms,
			 unsigned *dropped)
{
	if (rl->window_start < 0 ||
	    now_ms - rl->window_start >= (int64_t)rl->interval_ms) {
		rl->window_start = now_ms;
		rl->printed = 0;
	}
	if (rl->printed >= rl->burst) {
		rl->suppressed++;
		return false;
	}
	rl->printed++;
	*dropped = rl->suppressed;
	rl->suppressed = 0;
	return true;
}

/* One lock for every limiter: they sit on error paths, never the hot one. */
static pthread_mutex_t rl_lock = PTHREAD_MUTEX_INITIALIZER;

bool rblk_log_rl(struct rblk_ratelimit *rl, int level, const char *fmt, ...)
{
	char msg[900];
	unsigned dropped = 0;
	va_list ap;
	bool pass;
	int saved = errno;

	/* A filtered-out line is not a repetition anyone would see. */
	if (level > rblk_log_level && level != RBLK_LOG_DEBUG)
		return false;
	pthread_mutex_lock(&rl_lock);
	pass = rblk_ratelimit_pass(rl, rblk_now_ms(), &dropped);
	pthread_mutex_unlock(&rl_lock);
	if (!pass)
		return false;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (dropped)
		rblk_log(level, "%s (%u more like this suppressed)", msg, dropped);
	else
		rblk_log(level, "%s", msg);
	errno = saved;
	return true;
}
