// SPDX-License-Identifier: MIT
/*
 * rblkctl failback DEVICE: a multipath device goes back to its first path
 * (docs/multipath.md, "Failback").  The device's server does the move on
 * SIGUSR1: each queue drains what is at its current target and connects
 * to the first path; a first path that does not answer sends it on to
 * the next one again, so nothing fails.
 */
#include "attach.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "getopt_exact.h"
#include "initiator_proc.h"
#include "../../initiator/state.h"

static void failback_usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl failback DEVICE\n"
"Moves a multipath device (attached with several --target) back to its first\n"
"path: what is at the current target finishes there, then every queue\n"
"connects to the first path; if it does not answer, the device stays on a\n"
"path that does.  No I/O fails.  rblkctl list shows the paths.\n"
"  -h, --help\n");
}

int rblkctl_failback(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ini_state s;
	int c, id;

	optind = 1;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'h': failback_usage(stdout); return 0;
		default: failback_usage(stderr); return 2;
		}
	}
	if (argc - optind != 1) {
		failback_usage(stderr);
		return 2;
	}
	id = ctl_parse_dev(argv[optind]);
	if (id < 0) {
		fprintf(stderr, "rblkctl failback: '%s' is not a ublk device name\n",
			argv[optind]);
		return 2;
	}
	if (ctl_attached(id, "failback", &s))
		return 1;
	if (s.npaths < 2) {
		fprintf(stderr, "rblkctl failback: /dev/ublkb%d has one path: nothing to fail back to\n", id);
		return 1;
	}
	if (!ini_state_alive(&s) || kill(s.pid, SIGUSR1)) {
		fprintf(stderr, "rblkctl failback: /dev/ublkb%d: its server (pid %d) is not running\n",
			id, (int)s.pid);
		return 1;
	}
	printf("/dev/ublkb%d: asked to go back to path 1 (%s)\n", id, s.paths[0].spec);
	return 0;
}
