// SPDX-License-Identifier: MIT
/*
 * rblkctl recover: take a device over after its server died (ublk
 * USER_RECOVERY, docs/ublk.md "Recovery"), with the options it was
 * attached with, through the same start as attach (supervise.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../initiator/recover.h"
#include "../../initiator/state.h"
#include "attach.h"
#include "getopt_exact.h"
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
	static const struct option lo[] = {
		{ "timeout", required_argument, NULL, 'w' },
		{ "help",    no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ublksrv_ctrl_dev_info info;
	int timeout_s = CTL_ATTACH_TIMEOUT_S, c, id, ret;
	unsigned v;
	struct ini_state s;
	struct ini_ctrl *ctrl;
	struct ctl_argv a;
	char why[256], msg[512];

	optind = 1;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (rblk_parse_uint(optarg, 1, 86400, &v)) {
				fprintf(stderr, "rblkctl recover: --timeout is 1..86400 seconds, not '%s'\n",
					optarg);
				return 2;
			}
			timeout_s = (int)v;
			break;
		case 'h': recover_usage(stdout); return 0;
		default: recover_usage(stderr); return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "rblkctl recover: give one DEVICE\n");
		return 2;
	}
	id = ctl_parse_dev(argv[optind]);
	if (id < 0) {
		fprintf(stderr, "rblkctl recover: '%s' is not a ublk device name\n", argv[optind]);
		return 2;
	}
	if (ctl_need_root("recover"))
		return 1;
	if (ini_state_get(id, &s)) {
		fprintf(stderr, "rblkctl recover: /dev/ublkb%d is not attached by rblk (no %s/ublkb%d.json)\n",
			id, ini_state_dir(), id);
		return 1;
	}
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
	/* The kernel's word, before anything is started (it changes nothing). */
	ret = ini_ctrl_open(&ctrl);
	if (ret) {
		fprintf(stderr, "rblkctl recover: %s: %s\n", INI_UBLK_CONTROL, strerror(-ret));
		return 1;
	}
	ret = ini_recover_check(ctrl, id, 3000, &info, why, sizeof(why));
	ini_ctrl_close(ctrl);
	if (ret) {
		fprintf(stderr, "rblkctl recover: %s\n", why);
		return 1;
	}
	if (ctl_argv_from_state(&s, &a)) {
		fprintf(stderr, "rblkctl recover: %s/ublkb%d.json: too long to rebuild the command line\n",
			ini_state_dir(), id);
		return 1;
	}
	ret = ctl_start(&a, !strcmp(s.recovery, "auto"), s.log, timeout_s, msg, sizeof(msg));
	if (ret < 0) {
		fprintf(stderr, "rblkctl recover: %s\n", msg);
		return 1;
	}
	printf("/dev/ublkb%d\n", ret);
	return 0;
}
