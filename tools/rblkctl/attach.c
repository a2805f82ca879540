// SPDX-License-Identifier: MIT
/*
 * rblkctl attach / detach / list: the client side.  attach starts one
 * rblk-initiator per device and waits on a pipe for its one-line verdict
 * ("OK ublkbN" / "ERR reason"); detach signals it and waits, escalating to
 * SIGKILL so it never hangs; list reads the state files in /run/rblk.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "getopt_exact.h"
#include "helpers.h"
#include "poll_mode.h"
#include "../../initiator/state.h"
#include "../../initiator/opts.h"
#include "../../initiator/ublk_ctrl.h"
#include "attach.h"
#include "initiator_proc.h"
#include "supervise.h"
#include "ctl.h"
#include "rblk_proto.h"

#define DETACH_TIMEOUT_S	30

static int have_ublk(void)
{
	pid_t pid;
	int st;

	if (access("/dev/ublk-control", F_OK) == 0)
		return 1;
	/* Loading the module is what an admin would do next; try it once. */
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execlp("modprobe", "modprobe", "-q", "ublk_drv", (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	for (int i = 0; i < 20; i++) {
		if (access("/dev/ublk-control", F_OK) == 0)
			return 1;
		usleep(50000);
	}
	return 0;
}

static int access_ublkc(int id)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/ublkc%d", id);
	return access(path, F_OK) == 0;
}

/* ---- attach ------------------------------------------------------------- */

static void attach_usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl attach --target ADDR[:PORT] --volume NAME [options]\n"
"Connects to a volume and shows it as a local block device; prints /dev/ublkbN.\n");
	ini_opts_help(f);
	ini_opt_help_line(f, "timeout", "SECS", "how long to wait for the device (default "
			  RBLK_XSTR(CTL_ATTACH_TIMEOUT_S) ")");
	ini_opt_help_line(f, "recovery", "MODE", "what happens when rblk-initiator dies (crash, kill -9,\n"
			  "OOM); the device stays, its I/O waits, and:\n"
			  "  auto    a supervisor starts a new server (default)\n"
			  "  manual  until `rblkctl recover DEVICE`\n"
			  "  off     no waiting: the device goes away");
	ini_opt_help_line(f, "no-recovery", NULL, "the same as --recovery off");
	ini_opt_help_line(f, "foreground", NULL, "stay: be the supervisor in this process (output on\n"
			  "stdout/stderr, SIGTERM detaches; for systemd units);\n"
			  "a crash is recovered only with --recovery auto");
	fprintf(f, "  -h, --help\n");
}

/* What attach was asked for: the shared options as given (each checked
 * as rblk-initiator will), and attach's own. */
struct attach_args {
	const char *given[INI_SHARED_OPTS];
	const char *targets[RBLK_MAX_PATHS];	/* every --target: the paths */
	unsigned ntargets;
	const char *recovery;
	int timeout_s;
	int foreground;
};

/* 0, 1 after --help, or 2 after a usage error (printed). */
static int attach_parse(int argc, char **argv, struct attach_args *aa)
{
	static const struct option own[] = {
		{ "timeout",     required_argument, NULL, 'w' },
		{ "recovery",    required_argument, NULL, 'y' },
		{ "no-recovery", no_argument,       NULL, 'N' },
		{ "foreground",  no_argument,       NULL, 'f' },
		{ "help",        no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct option lo[INI_SHARED_OPTS + ARRAY_SIZE(own)];
	struct ini_opts check = { 0 };
	unsigned v;
	int c, ret;

	memcpy(lo + ini_opts_getopt(lo), own, sizeof(own));
	optind = 1;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		ret = ini_opt_apply(c, optarg, &check, "rblkctl attach");
		if (ret < 0)
			return 2;
		if (ret == 0 && c == 't') {
			aa->targets[aa->ntargets++] = optarg;
			continue;
		}
		if (ret == 0) {
			aa->given[ini_opt_index(c)] = optarg;
			continue;
		}
		switch (c) {
		case 'w':
			if (rblk_parse_uint(optarg, 1, 86400, &v)) {
				fprintf(stderr, "rblkctl attach: --timeout is 1..86400 seconds, not '%s'\n",
					optarg);
				return 2;
			}
			aa->timeout_s = (int)v;
			break;
		case 'y':
			if (!ini_recovery_mode_valid(optarg)) {
				fprintf(stderr, "rblkctl attach: --recovery is auto, manual or off\n");
				return 2;
			}
			aa->recovery = optarg;
			break;
		case 'N': aa->recovery = "off"; break;
		case 'f': aa->foreground = 1; break;
		case 'h': attach_usage(stdout); return 1;
		default: attach_usage(stderr); return 2;
		}
	}
	if (optind < argc || !check.host[0] || !check.volume) {
		fprintf(stderr, "rblkctl attach: --target and --volume are required\n");
		return 2;
	}
	if (rblk_name_valid(check.volume)) {
		fprintf(stderr, "rblkctl attach: bad volume name '%s'\n", check.volume);
		return 2;
	}
	return 0;
}

/* The machine can serve a device: root, ublk, the state directory. */
static int attach_check_host(void)
{
	if (ctl_need_root("attach"))
		return -1;
	if (!have_ublk()) {
		fprintf(stderr, "rblkctl attach: no ublk support in this kernel (/dev/ublk-control missing; modprobe ublk_drv failed)\n");
		return -1;
	}
	if (mkdir(ini_state_dir(), 0755) && errno != EEXIST) {
		fprintf(stderr, "rblkctl attach: %s: %s\n", ini_state_dir(), strerror(errno));
		return -1;
	}
	return 0;
}

int rblkctl_attach(int argc, char **argv)
{
	struct attach_args aa = { .recovery = "auto", .timeout_s = CTL_ATTACH_TIMEOUT_S };
	int id, ret = 0;
	struct ctl_argv a;
	char msg[512];

	ret = attach_parse(argc, argv, &aa);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (attach_check_host())
		return 1;
	/* rblk-initiator gets each shared option as it was given; the
	 * transport always (its default could change), and the recovery. */
	if (!aa.given[ini_opt_index('T')])
		aa.given[ini_opt_index('T')] = "tcp";
	ctl_argv_init(&a);
	ret |= ctl_argv_add(&a, "rblk-initiator");
	ret |= ctl_argv_add(&a, "--recovery");
	ret |= ctl_argv_add(&a, "%s", aa.recovery);
	for (unsigned i = 0; i < aa.ntargets; i++)
		ret |= ctl_argv_add_opt(&a, "--target", aa.targets[i]);
	for (unsigned i = 0; i < INI_SHARED_OPTS; i++)
		if (aa.given[i])
			ret |= ctl_argv_add(&a, "--%s", ini_shared_opts[i].name) ||
			       ctl_argv_add(&a, "%s", aa.given[i]);
	if (ret) {
		fprintf(stderr, "rblkctl attach: arguments too long\n");
		return 2;
	}
	if (aa.foreground) {
		char bin[PATH_MAX];

		ctl_find_initiator(bin, sizeof(bin));
		ctl_supervise(&a, bin, "", -1, !strcmp(aa.recovery, "auto"));
	}
	id = ctl_start(&a, !strcmp(aa.recovery, "auto"), NULL, aa.timeout_s, msg, sizeof(msg));
	if (id < 0) {
		fprintf(stderr, "rblkctl attach: %s\n", msg);
		return 1;
	}
	printf("/dev/ublkb%d\n", id);
	return 0;
}

/* ---- detach ------------------------------------------------------------- */

static void detach_usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl detach DEVICE | --all [--timeout SECS]\n"
"Stops serving a device (/dev/ublkbN, ublkbN or N); it disappears.  Its\n"
"supervisor (if any) is stopped first, so nothing recovers it.  I/O the\n"
"target does not answer in time fails with EIO; after --timeout (default %d)\n"
"the server is killed and the device removed.  A device whose server died\n"
"(dead, quiesced) is removed too.\n"
"  --all           every attached device\n"
"  --timeout SECS\n"
"  -h, --help\n", DETACH_TIMEOUT_S);
}

/* Waits until both processes are gone and, with dev_too, the device. */
static int wait_gone(pid_t pid, pid_t sup, int id, int dev_too, int64_t deadline)
{
	while (rblk_now_ms() < deadline) {
		if (!ini_pid_alive(pid) && !ini_pid_alive(sup) &&
		    (!dev_too || !ctl_blk_exists(id)))
			return 0;
		usleep(50000);
	}
	return -ETIMEDOUT;
}

/* A server that died without DEL_DEV leaves the ublk device (and its id)
 * behind; rblk-initiator --cleanup-dev removes it.  Best effort. */
static void cleanup_dev(int id)
{
	char bin[PATH_MAX], arg[16];
	pid_t pid;
	int st;

	ctl_find_initiator(bin, sizeof(bin));
	snprintf(arg, sizeof(arg), "%d", id);
	pid = fork();
	if (pid == 0) {
		execlp(bin, "rblk-initiator", "--cleanup-dev", arg, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
}

/*
 * The supervisor (if any) first, so that it does not take the device over
 * again, then the server.  A server killed by the escalation leaves a
 * device made with recovery quiesced, and one that died before leaves it
 * behind too: both are removed with --cleanup-dev.
 */
static int detach_one(int id, int timeout_s)
{
	struct ini_state s;
	pid_t pid, sup;
	int ret;

	ret = ini_state_get(id, &s);
	if (ret) {
		fprintf(stderr, "rblkctl detach: /dev/ublkb%d is not attached by rblk\n", id);
		return 1;
	}
	sup = ini_state_supervised(&s) ? s.supervisor : 0;
	pid = ini_state_alive(&s) ? s.pid : 0;
	if (sup)
		kill(sup, SIGTERM);
	if (pid)
		kill(pid, SIGTERM);
	if ((sup || pid) &&
	    wait_gone(pid, sup, id, 0, rblk_now_ms() + (int64_t)timeout_s * 1000)) {
		fprintf(stderr, "rblkctl detach: /dev/ublkb%d: server %d still running after %d s; killing it\n",
			id, (int)(pid ? pid : sup), timeout_s);
		if (sup)
			kill(sup, SIGKILL);
		if (pid)
			kill(pid, SIGKILL);
		wait_gone(pid, sup, id, 0, rblk_now_ms() + 15000);
	}
	/* A clean stop removed the device; without a server the kernel
	 * removes one made without recovery by itself, soon. */
	if (!strcmp(s.recovery, "off") || !s.recovery[0])
		wait_gone(0, 0, id, 1, rblk_now_ms() + 5000);
	if (ctl_blk_exists(id) || access_ublkc(id))
		cleanup_dev(id);
	if (wait_gone(0, 0, id, 1, rblk_now_ms() + 15000)) {
		fprintf(stderr, "rblkctl detach: /dev/ublkb%d did not go away\n", id);
		return 1;
	}
	ini_state_remove(id);	/* normally the server did; a killed one did not */
	return 0;
}

int rblkctl_detach(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "all",     no_argument,       NULL, 'a' },
		{ "timeout", required_argument, NULL, 'w' },
		{ "help",    no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int all = 0, timeout_s = DETACH_TIMEOUT_S, c, id, n, rc = 0;
	struct ini_state *list;

	optind = 1;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case 'w':
			timeout_s = atoi(optarg);
			if (timeout_s <= 0) {
				fprintf(stderr, "rblkctl detach: bad --timeout\n");
				return 2;
			}
			break;
		case 'h': detach_usage(stdout); return 0;
		default: detach_usage(stderr); return 2;
		}
	}
	if (all == (optind < argc) || argc - optind > 1) {
		fprintf(stderr, "rblkctl detach: give one DEVICE or --all\n");
		return 2;
	}
	if (!all) {
		id = ctl_parse_dev(argv[optind]);
		if (id < 0) {
			fprintf(stderr, "rblkctl detach: '%s' is not a ublk device name\n",
				argv[optind]);
			return 2;
		}
	}
	if (ctl_need_root("detach"))
		return 1;
	if (!all)
		return detach_one(id, timeout_s);
	n = ini_state_list(&list);
	if (n < 0) {
		fprintf(stderr, "rblkctl detach: %s: %s\n", ini_state_dir(), strerror(-n));
		return 1;
	}
	for (int i = 0; i < n; i++)
		rc |= detach_one(list[i].dev_id, timeout_s);
	free(list);
	return rc;
}

/* ---- list --------------------------------------------------------------- */

static void list_usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl list [--json]\n"
"Attached devices: device, target, volume, transport, state (starting, live,\n"
"connecting, failed, stopping, recovering; quiesced when the server is gone\n"
"and the device waits for a new one; dead when the server is gone for\n"
"good), size, time in that state and reconnects so far; a device with\n"
"several paths (multipath) has a line per path: its target, state (live,\n"
"connecting, failed, untried, other-volume), role (optimized: in use, or\n"
"standby), what the last probe of a standby path found (reachable or\n"
"unreachable) and its failures.  JSON adds the recovery mode, supervisor\n"
"pid, recoveries and path moves (failovers) so far, and the paths.\n"
"  --json      {\"ok\": true, \"devices\": [...]} instead of the table\n"
"  -h, --help\n");
}

/* The state to show: the server's word while it lives, else the kernel's
 * (quiesced: waiting for a new server), else dead. */
static const char *show_state(const struct ini_state *s, struct ini_ctrl *ctrl)
{
	struct ublksrv_ctrl_dev_info info;

	if (ini_state_alive(s))
		return s->state;
	if (ctrl && ini_ctrl_get_dev_info(ctrl, s->dev_id, &info) == 0 &&
	    info.state == UBLK_S_DEV_QUIESCED)
		return "quiesced";
	return "dead";
}

static void human_size(uint64_t b, char *buf, size_t len)
{
	static const char u[] = "BKMGTP";
	int i = 0;
	double v = (double)b;

	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f%c" : "%.0f%c", v, u[i]);
}

/* A device's paths: [{target, state, role, probe, failures}]; one entry,
 * the target, for a device of one path. */
static struct json_object *paths_json(const struct ini_state *s)
{
	struct json_object *a = json_object_new_array();

	for (unsigned i = 0; a && i < s->npaths; i++) {
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "target", json_object_new_string(s->paths[i].spec));
		json_object_object_add(e, "state", json_object_new_string(s->paths[i].state));
		json_object_object_add(e, "role", json_object_new_string(s->paths[i].role));
		json_object_object_add(e, "probe", json_object_new_string(s->paths[i].probe));
		json_object_object_add(e, "failures", json_object_new_int((int)s->paths[i].failures));
		json_object_array_add(a, e);
	}
	return a;
}

int rblkctl_list(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ini_state *list;
	struct ini_ctrl *ctrl = NULL;
	int json = ctl_json, c, n;

	optind = 1;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': list_usage(stdout); return 0;
		default: list_usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		list_usage(stderr);
		return 2;
	}
	n = ini_state_list(&list);
	if (n < 0) {
		fprintf(stderr, "rblkctl list: %s: %s\n", ini_state_dir(), strerror(-n));
		return 1;
	}
	/* Only root can ask the kernel; others see "dead" for quiesced. */
	if (n > 0 && ini_ctrl_open(&ctrl))
		ctrl = NULL;
	if (json) {
		struct json_object *out, *arr = json_object_new_array();

		for (int i = 0; i < n; i++) {
			struct ini_state *s = &list[i];
			struct json_object *o = json_object_new_object();
			char dev[32];

			snprintf(dev, sizeof(dev), "/dev/ublkb%d", s->dev_id);
			json_object_object_add(o, "device", json_object_new_string(dev));
			json_object_object_add(o, "target", json_object_new_string(s->target));
			json_object_object_add(o, "port", json_object_new_string(s->port));
			json_object_object_add(o, "volume", json_object_new_string(s->volume));
			json_object_object_add(o, "transport", json_object_new_string(s->transport));
			json_object_object_add(o, "state", json_object_new_string(
				show_state(s, ctrl)));
			json_object_object_add(o, "size", json_object_new_int64((int64_t)s->size));
			json_object_object_add(o, "queues", json_object_new_int(s->queues));
			json_object_object_add(o, "depth", json_object_new_int(s->depth));
			json_object_object_add(o, "pid", json_object_new_int(s->pid));
			json_object_object_add(o, "reconnects", json_object_new_int(s->reconnects));
			json_object_object_add(o, "state_seconds", json_object_new_int64(
				s->state_since ? (int64_t)time(NULL) - s->state_since : 0));
			json_object_object_add(o, "recovery", json_object_new_string(
				s->recovery[0] ? s->recovery : "off"));
			json_object_object_add(o, "supervisor", json_object_new_int(
				ini_state_supervised(s) ? s->supervisor : 0));
			json_object_object_add(o, "recoveries", json_object_new_int(s->recoveries));
			json_object_object_add(o, "paths", paths_json(s));
			json_object_object_add(o, "failovers", json_object_new_int((int)s->failovers));
			json_object_object_add(o, "read_policy",
					       json_object_new_string(s->read_spread ? "spread" : "standby"));
			json_object_array_add(arr, o);
		}
		/* One shape for every --json: an object with "ok". */
		out = json_object_new_object();
		json_object_object_add(out, "ok", json_object_new_boolean(1));
		json_object_object_add(out, "devices", arr);
		printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY));
		json_object_put(out);
	} else {
		printf("%-14s %-24s %-20s %-9s %-12s %8s %8s %6s\n", "DEVICE", "TARGET",
		       "VOLUME", "TRANSPORT", "STATE", "SIZE", "FOR", "RECONN");
		for (int i = 0; i < n; i++) {
			struct ini_state *s = &list[i];
			char dev[32], tgt[300], size[16], since[24];

			snprintf(dev, sizeof(dev), "/dev/ublkb%d", s->dev_id);
			snprintf(tgt, sizeof(tgt), strchr(s->target, ':') ? "[%s]%s%s" : "%s%s%s",
				 s->target, s->port[0] ? ":" : "", s->port);
			human_size(s->size, size, sizeof(size));
			snprintf(since, sizeof(since), "%llds", s->state_since ?
				 (long long)(time(NULL) - s->state_since) : 0LL);
			printf("%-14s %-24s %-20s %-9s %-12s %8s %8s %6u\n", dev, tgt, s->volume,
			       s->transport, show_state(s, ctrl), size,
			       since, s->reconnects);
			/* Multipath: a line per path under its device. */
			for (unsigned j = 0; s->npaths > 1 && j < s->npaths; j++)
				printf("  path %u %-29s %-11s %-9s %s%s%u failure(s)\n", j + 1,
				       s->paths[j].spec, s->paths[j].state, s->paths[j].role,
				       s->paths[j].probe, s->paths[j].probe[0] ? ", " : "",
				       s->paths[j].failures);
		}
	}
	ini_ctrl_close(ctrl);
	free(list);
	return 0;
}
