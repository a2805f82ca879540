// SPDX-License-Identifier: MIT
/*
 * rblkctl status: what the running target is (version, pid, uptime,
 * config file, listeners, volume and session counts, memory), in a few lines or,
 * with --json, the target's answer as it is.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl status [--socket PATH] [--json]\n"
"The running target: its version, pid, uptime, config file, admin socket,\n"
"listeners (TCP and RDMA), how many volumes and sessions it has, and its\n"
"memory: resident (RSS) and the heap bytes in use (what a leak grows).\n"
"Exit 1 with the reason when no target answers on the socket.\n");
}

/* "3d 04:05:06" or "04:05:06". */
static void print_uptime(int64_t s)
{
	printf("uptime:      ");
	if (s >= 86400)
		printf("%" PRId64 "d ", s / 86400);
	printf("%02" PRId64 ":%02" PRId64 ":%02" PRId64 "\n",
	       s % 86400 / 3600, s % 3600 / 60, s % 60);
}

static void print_status(json_object *rsp)
{
	json_object *tcp;
	size_t n = 0;

	printf("rblk-target %s (protocol %" PRId64 "), pid %" PRId64 "\n",
	       ctl_jstr(rsp, "version", "?"), ctl_jint(rsp, "protocol"),
	       ctl_jint(rsp, "pid"));
	print_uptime(ctl_jint(rsp, "uptime_s"));
	printf("config:      %s\n", ctl_jstr(rsp, "config", "(none: changes are not saved)"));
	printf("socket:      %s\n", ctl_jstr(rsp, "socket", "?"));
	printf("listen tcp:  ");
	if (json_object_object_get_ex(rsp, "listen_tcp", &tcp) &&
	    json_object_is_type(tcp, json_type_array))
		n = json_object_array_length(tcp);
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? ", " : "",
		       json_object_get_string(json_object_array_get_idx(tcp, i)));
	printf("%s\n", n ? "" : "-");
	printf("listen rdma: %s\n", ctl_jstr(rsp, "listen_rdma", "-"));
	printf("volumes:     %" PRId64 "\n", ctl_jint(rsp, "volumes"));
	printf("sessions:    %" PRId64 "\n", ctl_jint(rsp, "sessions"));
	printf("memory:      %.1f MiB resident, %.1f MiB heap in use\n",
	       ctl_jint(rsp, "rss_kib") / 1024.0,
	       ctl_jint(rsp, "heap_in_use_bytes") / 1048576.0);
}

int rblkctl_status(int argc, char **argv)
{
	json_object *req, *rsp;
	int ret = ctl_no_args(argc, argv, "status", usage);

	if (ret >= 0)
		return ret;
	req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("status"));
	if (ctl_request(req, &rsp))
		return 1;
	if (ctl_json)
		ctl_print_json(rsp);
	else
		print_status(rsp);
	json_object_put(rsp);
	return 0;
}
