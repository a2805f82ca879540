// SPDX-License-Identifier: MIT
/*
 * rblkctl: the admin CLI.  One table of commands; each command parses its
 * own options (and answers --help) and returns the exit status.
 */
#include <stdio.h>
#include <string.h>

#include "attach.h"
#include "ctl.h"
#include "helpers.h"
#include "log.h"
#include "version.h"

struct ctl_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct ctl_cmd ctl_cmds[] = {
	{ .name = "attach", .fn = rblkctl_attach,
	  .help = "attach a remote volume as /dev/ublkbN" },
	{ .name = "detach", .fn = rblkctl_detach,
	  .help = "detach DEVICE or --all" },
	{ .name = "list",   .fn = rblkctl_list,
	  .help = "list attached devices" },
	{ .name = "failback", .fn = rblkctl_failback,
	  .help = "move a multipath device back to its first path" },
	{ .name = "recover", .fn = rblkctl_recover,
	  .help = "start a new server for a device whose server died" },
	{ .name = "restart", .fn = rblkctl_restart,
	  .help = "replace a device's server in place (upgrade), no I/O error" },
	{ .name = "volume", .fn = rblkctl_volume,
	  .help = "target volumes: create, delete, resize, list, show, allow, deny, secret, set" },
	{ .name = "stats",  .fn = rblkctl_stats,
	  .help = "target I/O counters per volume and session [--watch [SECS]]" },
	{ .name = "discover", .fn = rblkctl_discover,
	  .help = "list the volumes a target lets this host use" },
	{ .name = "status", .fn = rblkctl_status,
	  .help = "the running target: version, uptime, config, listeners, volumes" },
	{ .name = "reload", .fn = rblkctl_reload,
	  .help = "the target re-reads its config file and applies the edit" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: rblkctl [--socket PATH] [--json] COMMAND [options]   (rblkctl COMMAND --help)\n"
		   "       rblkctl --version\n");
	for (size_t i = 0; i < ARRAY_SIZE(ctl_cmds); i++)
		fprintf(f, "  %-10s %s\n", ctl_cmds[i].name, ctl_cmds[i].help);
}

int main(int argc, char **argv)
{
	int g, i = 1;

	rblk_log_init("rblkctl");
	/* Global options before the command (--socket PATH, --json). */
	while (i < argc && (g = ctl_global_opt(argc, argv, &i)) != 0)
		if (g < 0)
			return 2;
	argv[i - 1] = argv[0];
	argc -= i - 1;
	argv += i - 1;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		rblk_print_version("rblkctl");
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(ctl_cmds); i++)
		if (!strcmp(argv[1], ctl_cmds[i].name))
			return ctl_cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "rblkctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
