// SPDX-License-Identifier: MIT
/*
 * rblkctl recover: take a device over after its server died (ublk
 * USER_RECOVERY, docs/ublk.md "Recovery"), with the options it was
 * attached with, through the same start as attach (supervise.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../initiator/recover.h"
#include "../../initiator/state.h"
#include "attach.h"
#include "helpers.h"
#include "initiator_proc.h"
#include "supervise.h"

/* ---- rblkctl recover ---------------------------------------------------- */

static void recover_usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl recover DEVICE [--timeout SECS]\n"
"Starts a new rblk-initiator for a device whose server died (it is\n"
"quiesced: I/O waits), with the options it was attached with, read from\n"
"%s/ublkbN.json; the device keeps its number and I/O resumes.  Devices\n"
"attached with the default --recovery auto are recovered by their\n"
"supervisor without this command.\n"
"  --timeout SECS  how long to wait for the device (default %d)\n"
"  -h, --help\n", INI_STATE_DIR_DEFAULT, CTL_ATTACH_TIMEOUT_S);
}

int rblkctl_recover(int argc, char **argv)
{
	int timeout_s, id, ret;
	struct ini_state s;

	ret = ctl_dev_args(argc, argv, "recover", recover_usage, &id, &timeout_s);
	if (ret >= 0)
		return ret;
	if (ctl_need_root("recover"))
		return 1;
	if (ctl_attached(id, "recover", &s))
		return 1;
	if (ini_state_alive(&s)) {
		fprintf(stderr, "rblkctl recover: /dev/ublkb%d is served by rblk-initiator %d (%s): nothing to recover\n",
			id, (int)s.pid, s.state);
		return 1;
	}
	if (ini_state_supervised(&s)) {
		fprintf(stderr, "rblkctl recover: /dev/ublkb%d is being recovered by its supervisor (pid %d; log %s)\n",
			id, (int)s.supervisor, s.log[0] ? s.log : "none");
		return 1;
	}
	return ctl_recover_start(id, &s, timeout_s, "recover");
}

int ctl_recover_start(int id, const struct ini_state *s, int timeout_s,
		      const char *cmd)
{
	struct ublksrv_ctrl_dev_info info;
	struct ini_ctrl *ctrl;
	struct ctl_argv a;
	char why[256], msg[512];
	int ret;

	/* The kernel's word, before anything is started (it changes nothing). */
	ret = ini_ctrl_open(&ctrl);
	if (ret) {
		fprintf(stderr, "rblkctl %s: %s: %s\n", cmd, INI_UBLK_CONTROL, strerror(-ret));
		return 1;
	}
	ret = ini_recover_check(ctrl, id, 3000, &info, why, sizeof(why));
	ini_ctrl_close(ctrl);
	if (ret) {
		fprintf(stderr, "rblkctl %s: %s\n", cmd, why);
		return 1;
	}
	if (ctl_argv_from_state(s, &a)) {
		fprintf(stderr, "rblkctl %s: %s/ublkb%d.json: too long to rebuild the command line\n",
			cmd, ini_state_dir(), id);
		return 1;
	}
	ret = ctl_start(&a, !strcmp(s->recovery, "auto"), s->log, timeout_s, msg, sizeof(msg));
	if (ret < 0) {
		fprintf(stderr, "rblkctl %s: %s\n", cmd, msg);
		return 1;
	}
	printf("/dev/ublkb%d\n", ret);
	return 0;
}
