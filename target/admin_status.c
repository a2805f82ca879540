// SPDX-License-Identifier: MIT
/*
 * The "status" admin request (rblkctl status): what a running target is,
 * in one answer an admin or a monitoring script reads first, as
 * `nvme list-subsys` or `systemctl status` would show it: the version,
 * pid, uptime, config file, listeners, and how many volumes and sessions,
 * and its memory: the RSS, and the heap bytes in use, which is what tells
 * a leak from memory the allocator keeps (docs/admin.md).
 */
#include "admin_int.h"
#include "admin_json.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

#include "export.h"
#include "clock.h"
#include "rblk_proto.h"
#include "version.h"

/* VmRSS of this process in KiB, 0 when /proc does not say. */
static uint64_t rss_kib(void)
{
	char line[128];
	uint64_t kib = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %" SCNu64, &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Bytes malloc has handed out and not had back, over every arena and
 * the chunks it mmapped: flat across failovers unless something leaks. */
static uint64_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + mi.hblkhd;
}

int tgt_admin_cmd_status(struct tgt_admin *a, json_object *req,
			 json_object *rsp, char *err, size_t errlen)
{
	json_object *tcp = json_object_new_array();
	unsigned volumes = 0, sessions = 0;

	if (!tcp)
		return -ENOMEM;
	for (unsigned i = 0; i < a->cfg.n_listen_tcp; i++)
		json_object_array_add(tcp, json_object_new_string(a->cfg.listen_tcp[i]));
	tgt_exports_lock();
	for (struct tgt_export *e = tgt_exports_first(); e; e = e->next) {
		volumes++;
		sessions += e->n_sessions;
	}
	tgt_exports_unlock();
	add_str(rsp, "version", rblk_version());
	add_u64(rsp, "protocol", RBLK_PROTO_VERSION);
	add_u64(rsp, "pid", (uint64_t)getpid());
	add_u64(rsp, "uptime_s", (uint64_t)(rblk_now_ms() - a->start_ms) / 1000);
	add_str(rsp, "config", a->config_path);
	add_str(rsp, "socket", a->socket_path);
	json_object_object_add(rsp, "listen_tcp", tcp);
	add_str(rsp, "listen_rdma", a->cfg.listen_rdma);
	add_u64(rsp, "volumes", volumes);
	add_u64(rsp, "sessions", sessions);
	add_u64(rsp, "rss_kib", rss_kib());
	add_u64(rsp, "heap_in_use_bytes", heap_in_use());
	return 0;
}
