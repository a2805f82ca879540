// SPDX-License-Identifier: MIT
/*
 * rblkctl discover --target ADDR[:PORT] [--transport tcp|rdma] [--hostname NAME]
 *                  [--volume NAME --secret-file F]:
 * asks a target (DISCOVER PDU on its data port) which volumes this host may
 * log in to.  Needs no admin socket: it works from any initiator.  A volume
 * with a secret is listed only once the secret is proven (--volume and
 * --secret-file: log in to it first on the same connection).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "getopt_exact.h"
#include "hostport.h"
#include "rblk_client.h"
#include "size.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl discover --target ADDR[:PORT] [--transport tcp|rdma] [--hostname NAME]\n"
"                        [--volume NAME --secret-file F] [--json]\n"
"  Lists the volumes the target lets this host use.  Volumes with a secret are\n"
"  not listed unless --volume names one and --secret-file proves its secret.\n"
"  --target      target address; IPv6 as [addr]:port (default port 4420 tcp, 4421 rdma)\n"
"  --transport   tcp (default) or rdma\n"
"  --hostname NAME  name this host asks as (default: this machine's hostname),\n"
"                as for attach and the fio engine's hostname=\n"
"  --volume NAME, --secret-file F  authenticate to volume NAME first (mutual)\n"
"  --json        {\"ok\": true, \"volumes\": [...]} instead of the table\n");
}

int rblkctl_discover(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "target", required_argument, NULL, 't' },
		{ "transport", required_argument, NULL, 'T' },
		{ "hostname", required_argument, NULL, 'H' },
		/* Its old name, which reads like the target's address:
		 * refused with the new names rather than guessed. */
		{ "host", required_argument, NULL, 'O' },
		{ "volume", required_argument, NULL, 'v' },
		{ "secret-file", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rblk_client_opts o = { .transport = "tcp" };
	struct rblk_discover_entry *ents;
	char *target = NULL, err[256] = "", fl[64], host[256], port_s[12];
	unsigned port;
	int c, n;

	optind = 0;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 't': target = optarg; break;
		case 'T': o.transport = optarg; break;
		case 'H': o.hostname = optarg; break;
		case 'O':
			fprintf(stderr, "rblkctl discover: --host is now --hostname (the name this host asks as); the target is --target\n");
			return 2;
		case 'v': o.volume = optarg; break;
		case 'S': o.secret_file = optarg; break;
		case 'j': ctl_json = true; break;
		case 's': break;	/* global option; not used here */
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || !target) {
		fprintf(stderr, "rblkctl discover: %s\n",
			target ? "unexpected argument" : "--target ADDR[:PORT] is required");
		usage(stderr);
		return 2;
	}
	if (strcmp(o.transport, "tcp") && strcmp(o.transport, "rdma")) {
		fprintf(stderr, "rblkctl discover: --transport %s: want tcp or rdma\n", o.transport);
		return 2;
	}
	if (o.hostname && rblk_name_valid(o.hostname)) {
		fprintf(stderr, "rblkctl discover: invalid --hostname\n");
		return 2;
	}
	if (o.volume && rblk_name_valid(o.volume)) {
		fprintf(stderr, "rblkctl discover: invalid --volume name\n");
		return 2;
	}
	if (!!o.volume != !!o.secret_file) {
		fprintf(stderr, "rblkctl discover: --volume and --secret-file go together\n");
		return 2;
	}
	if (rblk_split_hostport(target, host, sizeof(host), &port)) {
		fprintf(stderr, "rblkctl discover: --target: want ADDR, ADDR:PORT or [IPv6]:PORT\n");
		return 2;
	}
	o.host = host;
	if (port) {
		snprintf(port_s, sizeof(port_s), "%u", port);
		o.port = port_s;
	}
	ents = calloc(RBLK_DISCOVER_MAX, sizeof(*ents));
	if (!ents)
		return 1;
	n = rblk_discover(&o, ents, RBLK_DISCOVER_MAX, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "rblkctl discover: %s\n", err[0] ? err : strerror(-n));
		free(ents);
		return 1;
	}
	if (n == RBLK_DISCOVER_MAX && strcmp(err, "no error"))
		fprintf(stderr, "rblkctl discover: note: %s\n", err);
	if (ctl_json) {
		json_object *out = json_object_new_object();
		json_object *arr = json_object_new_array();

		for (int i = 0; i < n; i++) {
			json_object *e = json_object_new_object();

			json_object_object_add(e, "name", json_object_new_string(ents[i].volume));
			json_object_object_add(e, "size", json_object_new_int64((int64_t)ents[i].size));
			json_object_object_add(e, "block_size", json_object_new_int64(ents[i].block_size));
			json_object_object_add(e, "read_only",
				json_object_new_boolean(!!(ents[i].vol_flags & RBLK_VOL_F_READ_ONLY)));
			/* As volume show has them: one spelling of flags. */
			json_object_object_add(e, "flags", json_object_new_string(
				rblk_vol_flags_str(ents[i].vol_flags, fl, sizeof(fl))));
			json_object_array_add(arr, e);
		}
		json_object_object_add(out, "ok", json_object_new_boolean(1));
		json_object_object_add(out, "volumes", arr);
		ctl_print_json(out);
		json_object_put(out);
	} else {
		printf("%-24s %10s %6s %s\n", "VOLUME", "SIZE", "BLOCK", "MODE");
		for (int i = 0; i < n; i++) {
			char sz[32];

			printf("%-24s %10s %6u %s\n", ents[i].volume,
			       rblk_format_size(ents[i].size, sz, sizeof(sz)),
			       ents[i].block_size,
			       ents[i].vol_flags & RBLK_VOL_F_READ_ONLY ? "ro" : "rw");
		}
	}
	free(ents);
	return 0;
}
