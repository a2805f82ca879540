// SPDX-License-Identifier: MIT
/*
 * Starting a device's server, and supervising it: the one daemon inside
 * rblkctl, which takes a device over after its server died (ublk
 * USER_RECOVERY, docs/ublk.md "Recovery").
 *
 * ctl_start() forks a session leader whose stdout/stderr are the device's
 * log.  Without supervision that child execs rblk-initiator at once; with
 * it (recovery "auto", the default of `rblkctl attach`) the child is the
 * supervisor, "rblk-supervise": it runs rblk-initiator, passes its verdict
 * line on, and when the server dies of anything but a clean stop it runs
 * `rblk-initiator --recover N` with the options read back from
 * /run/rblk/ublkbN.json, retrying failed attempts after 1, 2, 4, 8, then
 * every 10 s, until one succeeds, the device is gone, or it is told to
 * stop (SIGTERM: passed on to the server; `rblkctl detach` sends it).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "../../initiator/recover.h"
#include "../../initiator/state.h"
#include "initiator_proc.h"
#include "supervise.h"

#define SUP_DELAY_MAX_MS	10000

/* ---- the supervisor ------------------------------------------------------ */

struct sup {
	const char *bin;
	const char *logpath;
	int auto_recover;	/* else a crash ends the supervisor too */
	int sfd;		/* signalfd: TERM INT HUP CHLD */
	pid_t child;
	int stopping;
	int id;
};

static void sup_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sup_log(const char *fmt, ...)
{
	struct timespec ts;
	struct tm tm;
	char when[32];
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ld %s[%d] INFO  ", when, ts.tv_nsec / 1000000,
		INI_SUPERVISOR_COMM, (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Takes every pending signal; a stop request is passed on to the server. */
static void sup_signals(struct sup *s)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD || s->stopping)
			continue;
		s->stopping = 1;
		sup_log("signal %u: stopping%s", si.ssi_signo,
			s->child > 0 ? ", passing it on to rblk-initiator" : "");
		if (s->child > 0)
			kill(s->child, SIGTERM);
	}
}

/* Waits up to ms (-1 forever) for fd (-1: none) or a signal; 1 if fd is readable. */
static int sup_poll(struct sup *s, int fd, int ms)
{
	struct pollfd p[2] = {
		{ .fd = s->sfd, .events = POLLIN },
		{ .fd = fd, .events = POLLIN },
	};

	if (poll(p, fd >= 0 ? 2 : 1, ms) < 0)
		return 0;
	if (p[0].revents)
		sup_signals(s);
	return fd >= 0 && p[1].revents;
}

/*
 * Runs rblk-initiator with a (plus the ready pipe, log and our pid) and
 * waits for its one line.  Returns the device id; or -1 with the reason in
 * msg, the server reaped and its wait status in *status.
 */
static int sup_spawn(struct sup *s, struct ctl_argv *a, char *msg, size_t len, int *status)
{
	char line[512];
	size_t got = 0;
	sigset_t none;
	int pfd[2], id;
	ssize_t n;

	*status = 0;
	if (ctl_argv_add(a, "--ready-fd") || ctl_argv_add(a, "3") ||
	    ctl_argv_add(a, "--log-file") || ctl_argv_add(a, "%s", s->logpath) ||
	    ctl_argv_add(a, "--supervisor") || ctl_argv_add(a, "%d", (int)getpid())) {
		snprintf(msg, len, "too many arguments");
		return -1;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(msg, len, "pipe: %s", strerror(errno));
		return -1;
	}
	s->child = fork();
	if (s->child < 0) {
		snprintf(msg, len, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (s->child == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(pfd[1], 3) < 0)
			_exit(127);
		execvp(s->bin, (char **)a->v);
		dprintf(3, "ERR cannot run %s: %s\n", s->bin, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	line[0] = 0;
	while (got < sizeof(line) - 1 && !strchr(line, '\n')) {
		if (!sup_poll(s, pfd[0], -1))
			continue;
		n = read(pfd[0], line + got, sizeof(line) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
		line[got] = 0;
	}
	close(pfd[0]);
	line[strcspn(line, "\n")] = 0;
	if (sscanf(line, "OK ublkb%d", &id) == 1)
		return id;
	snprintf(msg, len, "%s", !strncmp(line, "ERR ", 4) ? line + 4 :
		 line[0] ? line : "rblk-initiator exited before the device was ready");
	while (waitpid(s->child, status, 0) < 0 && errno == EINTR)
		;
	s->child = 0;
	return -1;
}

/* Waits for the server to end; returns its wait status. */
static int sup_wait_child(struct sup *s)
{
	int st;

	for (;;) {
		pid_t r = waitpid(s->child, &st, WNOHANG);

		if (r == s->child) {
			s->child = 0;
			return st;
		}
		sup_poll(s, -1, 1000);
	}
}

static void sup_describe(int st, char *buf, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
}

/* After a crash: new servers until one takes the device over.  Returns
 * only when one did; exits when it should stop. */
static void sup_recover(struct sup *s)
{
	int64_t t0 = rblk_now_ms();
	int delay_ms = 0, attempt = 0, st, id;
	struct ini_state state;
	struct ctl_argv a;
	char msg[512], how[64], dev[32];

	for (;;) {
		if (delay_ms) {
			int64_t until = rblk_now_ms() + delay_ms;

			while (!s->stopping && rblk_now_ms() < until)
				sup_poll(s, -1, (int)(until - rblk_now_ms()));
		}
		sup_signals(s);
		if (s->stopping)
			exit(0);
		attempt++;
		if (ini_state_get(s->id, &state)) {
			sup_log("/dev/ublkb%d: state file gone (detached?); stopping", s->id);
			exit(0);
		}
		if (ctl_argv_from_state(&state, &a)) {
			sup_log("/dev/ublkb%d: state file too large to rebuild the command line", s->id);
			exit(1);
		}
		id = sup_spawn(s, &a, msg, sizeof(msg), &st);
		if (id >= 0) {
			sup_log("/dev/ublkb%d recovered by rblk-initiator %d, %lld ms after the crash (attempt %d)",
				id, (int)s->child, (long long)(rblk_now_ms() - t0), attempt);
			return;
		}
		if (s->stopping)
			exit(0);
		sup_describe(st, how, sizeof(how));
		if (WIFEXITED(st) && WEXITSTATUS(st) == INI_EXIT_NOTHING_TO_RECOVER) {
			sup_log("/dev/ublkb%d: nothing to recover (%s); stopping", s->id, msg);
			snprintf(dev, sizeof(dev), "/dev/ublkc%d", s->id);
			if (access(dev, F_OK))
				ini_state_remove(s->id);	/* the device is gone */
			exit(1);
		}
		delay_ms = delay_ms ? delay_ms * 2 : 1000;
		if (delay_ms > SUP_DELAY_MAX_MS)
			delay_ms = SUP_DELAY_MAX_MS;
		sup_log("/dev/ublkb%d: recovery attempt %d failed (%s; rblk-initiator %s); next in %d s",
			s->id, attempt, msg, how, delay_ms / 1000);
	}
}

/* The verdict: to rblkctl attach's pipe, or (foreground, fd -1) as attach
 * itself would say it. */
static void sup_report(int fd, int id, const char *msg)
{
	if (fd >= 0) {
		if (id >= 0)
			dprintf(fd, "OK ublkb%d\n", id);
		else
			dprintf(fd, "ERR %s\n", msg);
		close(fd);
	} else if (id >= 0) {
		printf("/dev/ublkb%d\n", id);
		fflush(stdout);
	} else {
		fprintf(stderr, "rblkctl attach: %s\n", msg);
	}
}

void ctl_supervise(struct ctl_argv *a, const char *bin, const char *logpath,
		   int report_fd, int auto_recover)
{
	struct sup s = { .bin = bin, .logpath = logpath, .sfd = -1,
			 .auto_recover = auto_recover };
	char msg[512], how[64];
	sigset_t mask;
	int st;

	prctl(PR_SET_NAME, INI_SUPERVISOR_COMM, 0, 0, 0);
	signal(SIGPIPE, SIG_IGN);	/* an attach that gave up closed the pipe */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	s.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s.sfd < 0) {
		snprintf(msg, sizeof(msg), "signalfd: %s", strerror(errno));
		sup_report(report_fd, -1, msg);
		_exit(1);
	}
	s.id = sup_spawn(&s, a, msg, sizeof(msg), &st);
	sup_report(report_fd, s.id, msg);
	if (s.id < 0)
		_exit(1);
	sup_log("/dev/ublkb%d: supervising rblk-initiator %d", s.id, (int)s.child);
	for (;;) {
		st = sup_wait_child(&s);
		if (s.stopping || (WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			sup_log("/dev/ublkb%d: rblk-initiator ended; stopping", s.id);
			exit(0);
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == INI_EXIT_HANDED_OVER)
			snprintf(how, sizeof(how), "handed the device over (rblkctl restart)");
		else
			sup_describe(st, how, sizeof(how));
		if (!s.auto_recover) {
			sup_log("/dev/ublkb%d: rblk-initiator %s; not recovering it (recovery is not auto)",
				s.id, how);
			exit(1);
		}
		sup_log("/dev/ublkb%d: rblk-initiator %s; recovering", s.id, how);
		sup_recover(&s);
	}
}

int ctl_start(struct ctl_argv *a, int supervised, const char *logpath_in,
	      int timeout_s, char *msg, size_t len)
{
	char bin[PATH_MAX], logpath[PATH_MAX];
	int pfd[2], id, st, fd;
	pid_t pid;

	ctl_find_initiator(bin, sizeof(bin));
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(msg, len, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(msg, len, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		setsid();
		if (logpath_in && *logpath_in)
			snprintf(logpath, sizeof(logpath), "%s", logpath_in);
		else
			snprintf(logpath, sizeof(logpath), "%s/rblk-initiator.%d.log",
				 ini_state_dir(), (int)getpid());
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		close(pfd[0]);
		if (supervised)
			ctl_supervise(a, bin, logpath, pfd[1], 1);
		/* fd 3 is the pipe; dup2 clears its close-on-exec flag. */
		if (dup2(pfd[1], 3) < 0 ||
		    ctl_argv_add(a, "--ready-fd") || ctl_argv_add(a, "3") ||
		    ctl_argv_add(a, "--log-file") || ctl_argv_add(a, "%s", logpath))
			_exit(127);
		execvp(bin, (char **)a->v);
		dprintf(3, "ERR cannot run %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	id = ctl_wait_ready(pfd[0], pid, timeout_s, msg, len);
	close(pfd[0]);
	if (id < 0) {
		/* It reported an error and exits; collect it (bounded). */
		for (int i = 0; i < 50 && waitpid(pid, &st, WNOHANG) == 0; i++)
			usleep(100000);
		return -1;
	}
	/* devtmpfs makes the node asynchronously (and may still be removing
	 * an old one of the same name): print it once it is there. */
	for (int i = 0; i < 100 && !ctl_blk_exists(id); i++)
		usleep(50000);
	if (!ctl_blk_exists(id)) {
		snprintf(msg, len, "/dev/ublkb%d did not appear", id);
		return -1;
	}
	return id;
}
