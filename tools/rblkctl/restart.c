// SPDX-License-Identifier: MIT
/*
 * rblkctl restart DEVICE: a new server for a live device, in place (an
 * upgrade of rblk on a running system).  The old server hands the device
 * over on SIGUSR2 (rblk-initiator's hand_over: nothing fails, nothing is
 * removed); the next one takes it over as after a crash: started by the
 * supervisor (recovery auto), or here (manual).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../initiator/state.h"
#include "attach.h"
#include "clock.h"
#include "helpers.h"
#include "initiator_proc.h"
#include "supervise.h"

static void restart_usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl restart DEVICE [--timeout SECS]\n"
"Replaces the device's rblk-initiator with a new one, in place: for an\n"
"upgrade of rblk while the device is in use.  The running server answers\n"
"what it holds and hands the device over (with ublk QUIESCE on Linux\n"
"6.16+; before, the kernel gives what it had not answered to the next\n"
"server); I/O waits meanwhile and none fails.  The next server is the\n"
"rblk-initiator installed now, with the options the device was attached\n"
"with; the device keeps its number.  Needs a device attached with\n"
"recovery (the default, --recovery auto, or manual).\n"
"  --timeout SECS  how long to wait for each step (default %d)\n"
"  -h, --help\n", CTL_ATTACH_TIMEOUT_S);
}

/* Waits up to timeout_s for device id to be served by a live server
 * other than old, in state live; 0 or -ETIMEDOUT. */
static int wait_new_server(int id, pid_t old, int timeout_s)
{
	int64_t until = rblk_now_ms() + (int64_t)timeout_s * 1000;
	struct ini_state s;

	while (rblk_now_ms() < until) {
		if (!ini_state_get(id, &s) && s.pid != old && ini_state_alive(&s) &&
		    !strcmp(s.state, "live"))
			return 0;
		usleep(50000);
	}
	return -ETIMEDOUT;
}

static int wait_gone(const struct ini_state *s, int timeout_s)
{
	int64_t until = rblk_now_ms() + (int64_t)timeout_s * 1000;

	while (ini_state_alive(s)) {
		if (rblk_now_ms() >= until)
			return -ETIMEDOUT;
		usleep(20000);
	}
	return 0;
}

int rblkctl_restart(int argc, char **argv)
{
	int timeout_s, id, ret;
	struct ini_state s;

	ret = ctl_dev_args(argc, argv, "restart", restart_usage, &id, &timeout_s);
	if (ret >= 0)
		return ret;
	if (ctl_need_root("restart"))
		return 1;
	if (ctl_attached(id, "restart", &s))
		return 1;
	if (!s.recovery[0] || !strcmp(s.recovery, "off")) {
		fprintf(stderr, "rblkctl restart: /dev/ublkb%d was attached without recovery: it would go with its server (detach and attach it instead)\n",
			id);
		return 1;
	}
	if (!ini_state_alive(&s)) {
		fprintf(stderr, "rblkctl restart: /dev/ublkb%d has no running server (rblkctl recover takes it over)\n",
			id);
		return 1;
	}
	if (kill(s.pid, SIGUSR2)) {
		fprintf(stderr, "rblkctl restart: signalling rblk-initiator %d: %s\n",
			(int)s.pid, strerror(errno));
		return 1;
	}
	if (wait_gone(&s, timeout_s)) {
		fprintf(stderr, "rblkctl restart: rblk-initiator %d did not hand /dev/ublkb%d over within %d s (see %s)\n",
			(int)s.pid, id, timeout_s, s.log[0] ? s.log : "its log");
		return 1;
	}
	/* manual, or auto with its supervisor gone (killed): ours to start
	 * (as auto, ctl_start makes a new supervisor). */
	if (strcmp(s.recovery, "auto") || !ini_state_supervised(&s))
		return ctl_recover_start(id, &s, timeout_s, "restart");
	/* The supervisor starts the next one. */
	if (wait_new_server(id, s.pid, timeout_s)) {
		fprintf(stderr, "rblkctl restart: /dev/ublkb%d handed over, but no new server is live within %d s (see %s; rblkctl list)\n",
			id, timeout_s, s.log[0] ? s.log : "the supervisor's log");
		return 1;
	}
	printf("/dev/ublkb%d\n", id);
	return 0;
}
