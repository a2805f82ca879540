// SPDX-License-Identifier: MIT
/*
 * One rblk-initiator process, as rblkctl starts it: where its binary is,
 * its command line (also rebuilt from a device's state file for a
 * takeover), the one-line verdict it writes when its device is ready,
 * and the device node.  attach, recover and the supervisor all use this;
 * it calls none of them.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "getopt_exact.h"
#include "helpers.h"
#include "../../initiator/state.h"
#include "initiator_proc.h"

int ctl_need_root(const char *cmd)
{
	if (geteuid() == 0)
		return 0;
	fprintf(stderr, "rblkctl %s: must be run as root\n", cmd);
	return -EPERM;
}

/* rblk-initiator next to this rblkctl, else $RBLK_INITIATOR, else PATH. */
void ctl_find_initiator(char *buf, size_t len)
{
	const char *env = getenv("RBLK_INITIATOR");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 32);
	if (n > 0) {
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(buf, len, "%.*s/rblk-initiator",
				 (int)(sizeof(self) - 32), self);
			if (access(buf, X_OK) == 0)
				return;
		}
	}
	snprintf(buf, len, "rblk-initiator");
}

/* "/dev/ublkb3", "ublkb3" or "3" -> 3; -1 when it is none of those. */
int ctl_parse_dev(const char *s)
{
	char *end;
	long v;

	if (!strncmp(s, "/dev/", 5))
		s += 5;
	if (!strncmp(s, "ublkb", 5))
		s += 5;
	if (!*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > (1 << 20))
		return -1;
	return (int)v;
}

int ctl_dev_args(int argc, char **argv, const char *cmd, void (*usage)(FILE *),
		 int *id, int *timeout_s)
{
	static const struct option lo[] = {
		{ "timeout", required_argument, NULL, 'w' },
		{ "help",    no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned v;
	int c;

	*timeout_s = CTL_ATTACH_TIMEOUT_S;
	optind = 1;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (rblk_parse_uint(optarg, 1, 86400, &v)) {
				fprintf(stderr, "rblkctl %s: --timeout is 1..86400 seconds, not '%s'\n",
					cmd, optarg);
				return 2;
			}
			*timeout_s = (int)v;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "rblkctl %s: give one DEVICE\n", cmd);
		return 2;
	}
	*id = ctl_parse_dev(argv[optind]);
	if (*id < 0) {
		fprintf(stderr, "rblkctl %s: '%s' is not a ublk device name\n", cmd, argv[optind]);
		return 2;
	}
	return -1;
}

int ctl_attached(int id, const char *cmd, struct ini_state *s)
{
	if (!ini_state_get(id, s))
		return 0;
	fprintf(stderr, "rblkctl %s: /dev/ublkb%d is not attached by rblk (no %s/ublkb%d.json)\n",
		cmd, id, ini_state_dir(), id);
	return -1;
}

int ctl_blk_exists(int id)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/ublkb%d", id);
	return stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

void ctl_argv_init(struct ctl_argv *a)
{
	a->n = 0;
	a->used = 0;
	a->v[0] = NULL;
}

int ctl_argv_add(struct ctl_argv *a, const char *fmt, ...)
{
	size_t room = sizeof(a->pool) - a->used;
	va_list ap;
	int n;

	if (a->n + 1 >= CTL_ARGV_MAX)
		return -E2BIG;
	va_start(ap, fmt);
	n = vsnprintf(a->pool + a->used, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room)
		return -E2BIG;
	a->v[a->n++] = a->pool + a->used;
	a->v[a->n] = NULL;
	a->used += n + 1;
	return 0;
}

int ctl_argv_add_opt(struct ctl_argv *a, const char *opt, const char *val)
{
	int ret;

	if (!val)
		return 0;
	ret = ctl_argv_add(a, "%s", opt);
	return ret ? ret : ctl_argv_add(a, "%s", val);
}

int ctl_argv_from_state(const struct ini_state *s, struct ctl_argv *a)
{
	int ret = 0;

	ctl_argv_init(a);
	ret |= ctl_argv_add(a, "rblk-initiator");
	/* Every path as it was given; a state file of before paths has
	 * only target and port. */
	for (unsigned i = 0; i < s->npaths; i++)
		ret |= ctl_argv_add_opt(a, "--target", s->paths[i].spec);
	if (!s->npaths) {
		ret |= ctl_argv_add(a, "--target");
		if (s->port[0])
			ret |= ctl_argv_add(a, strchr(s->target, ':') ? "[%s]:%s" : "%s:%s",
					    s->target, s->port);
		else
			ret |= ctl_argv_add(a, strchr(s->target, ':') ? "[%s]" : "%s", s->target);
	}
	if (s->failback_s > 0) {
		ret |= ctl_argv_add(a, "--failback-delay");
		ret |= ctl_argv_add(a, "%d", s->failback_s);
	}
	if (s->read_spread)
		ret |= ctl_argv_add(a, "--read-policy") || ctl_argv_add(a, "spread");
	ret |= ctl_argv_add(a, "--volume");
	ret |= ctl_argv_add(a, "%s", s->volume);
	ret |= ctl_argv_add(a, "--transport");
	ret |= ctl_argv_add(a, "%s", s->transport[0] ? s->transport : "tcp");
	ret |= ctl_argv_add_opt(a, "--hostname", s->hostname[0] ? s->hostname : NULL);
	ret |= ctl_argv_add_opt(a, "--secret-file", s->secret_file[0] ? s->secret_file : NULL);
	for (int i = 0; i < INI_TMO_COUNT; i++) {
		if (s->tmo_s[i] == INI_TMO_UNSET)
			continue;
		ret |= ctl_argv_add(a, "%s", ini_tmo_opt[i]);
		ret |= ctl_argv_add(a, "%d", s->tmo_s[i]);
	}
	if (s->grace_ms > 0) {
		ret |= ctl_argv_add(a, "--grace-ms");
		ret |= ctl_argv_add(a, "%d", s->grace_ms);
	}
	ret |= ctl_argv_add_opt(a, "--poll", s->poll[0] ? s->poll : NULL);
	if (s->poll_us >= 0) {
		ret |= ctl_argv_add(a, "--poll-us");
		ret |= ctl_argv_add(a, "%d", s->poll_us);
	}
	ret |= ctl_argv_add(a, "--recovery");
	ret |= ctl_argv_add(a, "%s", s->recovery[0] ? s->recovery : "manual");
	ret |= ctl_argv_add(a, "--recover");
	ret |= ctl_argv_add(a, "%d", s->dev_id);
	return ret ? -E2BIG : 0;
}

/* Waits for the daemon's one line; returns the device id or -1. */
int ctl_wait_ready(int fd, pid_t child, int timeout_s, char *msg, size_t msglen)
{
	int64_t deadline = rblk_now_ms() + (int64_t)timeout_s * 1000;
	size_t got = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int id;

	msg[0] = 0;
	while (got < msglen - 1) {
		int64_t left = deadline - rblk_now_ms();
		ssize_t n;

		if (left <= 0) {
			snprintf(msg, msglen, "timed out after %d s waiting for the device", timeout_s);
			kill(child, SIGTERM);
			return -1;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			break;
		if (!pfd.revents)
			continue;
		n = read(fd, msg + got, msglen - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
		msg[got] = 0;
		if (strchr(msg, '\n'))
			break;
	}
	msg[got] = 0;
	msg[strcspn(msg, "\n")] = 0;
	if (sscanf(msg, "OK ublkb%d", &id) == 1)
		return id;
	if (!strncmp(msg, "ERR ", 4))
		memmove(msg, msg + 4, strlen(msg + 4) + 1);
	else if (!msg[0])
		snprintf(msg, msglen, "rblk-initiator exited before the device was ready");
	return -1;
}
