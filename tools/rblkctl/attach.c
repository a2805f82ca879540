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
#include "../../initiator/state.h"
#include "attach.h"
#include "ctl.h"
#include "rblk_proto.h"

#define ATTACH_TIMEOUT_S	60
#define DETACH_TIMEOUT_S	30

static int need_root(const char *cmd)
{
	if (geteuid() == 0)
		return 0;
	fprintf(stderr, "rblkctl %s: must be run as root\n", cmd);
	return -EPERM;
}

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

/* rblk-initiator next to this rblkctl, else $RBLK_INITIATOR, else PATH. */
static void find_initiator(char *buf, size_t len)
{
	const char *env = getenv("RBLK_INITIATOR");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 32);
	if (n > 0) {
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(buf, len, "%.*s/rblk-initiator",
				 (int)(sizeof(self) - 32), self);
			if (access(buf, X_OK) == 0)
				return;
		}
	}
	snprintf(buf, len, "rblk-initiator");
}

/* "/dev/ublkb3", "ublkb3" or "3" -> 3; -1 when it is none of those. */
static int parse_dev(const char *s)
{
	char *end;
	long v;

	if (!strncmp(s, "/dev/", 5))
		s += 5;
	if (!strncmp(s, "ublkb", 5))
		s += 5;
	if (!*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > (1 << 20))
		return -1;
	return (int)v;
}

static int dev_exists(int id)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/ublkb%d", id);
	return access(path, F_OK) == 0;
}

static int blk_exists(int id)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/ublkb%d", id);
	return stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

/* ---- attach ------------------------------------------------------------- */

static void attach_usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl attach --target ADDR[:PORT] --volume NAME [options]\n"
"Connects to a volume and shows it as a local block device; prints /dev/ublkbN.\n"
"  --target ADDR[:PORT]   target address ([v6addr]:port for IPv6)\n"
"  --volume NAME          volume to attach\n"
"  --transport rdma|tcp   (default tcp)\n"
"  --queues N             ublk queues, one connection each (default: CPUs, max 4)\n"
"  --depth N              requests per queue (default 64)\n"
"  --hostname NAME        host name presented to the target\n"
"  --secret-file FILE     shared secret for the login challenge (mode 0600)\n"
"  --timeout SECS         how long to wait for the device (default %d)\n"
"  --keep-alive-tmo S     connection dead after S s without an answer (default 5)\n"
"  --io-timeout S         rebuild a connection whose command waits S s (default 30)\n"
"  --reconnect-delay S    between reconnect attempts (default 2)\n"
"  --ctrl-loss-tmo S      reconnect this long, then fail I/O (default 600;\n"
"                         -1 forever, 0 never reconnect)\n"
"  --fast-io-fail-tmo S   fail I/O after S s disconnected (default -1: off)\n"
"  -h, --help\n", ATTACH_TIMEOUT_S);
}

/* Waits for the daemon's one line; returns the device id or -1. */
static int wait_ready(int fd, pid_t child, int timeout_s, char *msg, size_t msglen)
{
	int64_t deadline = rblk_now_ms() + (int64_t)timeout_s * 1000;
	size_t got = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int id;

	msg[0] = 0;
	while (got < msglen - 1) {
		int64_t left = deadline - rblk_now_ms();
		ssize_t n;

		if (left <= 0) {
			snprintf(msg, msglen, "timed out after %d s waiting for the device", timeout_s);
			kill(child, SIGTERM);
			return -1;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			break;
		if (!pfd.revents)
			continue;
		n = read(fd, msg + got, msglen - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
		msg[got] = 0;
		if (strchr(msg, '\n'))
			break;
	}
	msg[got] = 0;
	msg[strcspn(msg, "\n")] = 0;
	if (sscanf(msg, "OK ublkb%d", &id) == 1)
		return id;
	if (!strncmp(msg, "ERR ", 4))
		memmove(msg, msg + 4, strlen(msg + 4) + 1);
	else if (!msg[0])
		snprintf(msg, msglen, "rblk-initiator exited before the device was ready");
	return -1;
}

int rblkctl_attach(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "target",      required_argument, NULL, 't' },
		{ "volume",      required_argument, NULL, 'v' },
		{ "transport",   required_argument, NULL, 'T' },
		{ "queues",      required_argument, NULL, 'q' },
		{ "depth",       required_argument, NULL, 'd' },
		{ "hostname",    required_argument, NULL, 'H' },
		{ "secret-file", required_argument, NULL, 's' },
		{ "timeout",     required_argument, NULL, 'w' },
		/* faults: handed to rblk-initiator as they are (it checks them) */
		{ "keep-alive-tmo",   required_argument, NULL, 'K' },
		{ "io-timeout",       required_argument, NULL, 'O' },
		{ "reconnect-delay",  required_argument, NULL, 'R' },
		{ "ctrl-loss-tmo",    required_argument, NULL, 'X' },
		{ "fast-io-fail-tmo", required_argument, NULL, 'F' },
		{ "help",        no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *target = NULL, *volume = NULL, *transport = "tcp";
	const char *queues = NULL, *depth = NULL, *hostname = NULL, *secret = NULL;
	char bin[PATH_MAX], logpath[PATH_MAX], msg[512];
	const char *args[48];
	const char *fault_opt[5] = { 0 };	/* K O R X F */
	static const char *const fault_name[5] = {
		"--keep-alive-tmo", "--io-timeout", "--reconnect-delay",
		"--ctrl-loss-tmo", "--fast-io-fail-tmo",
	};
	int timeout_s = ATTACH_TIMEOUT_S, na = 0, pfd[2], c, id, st;
	pid_t pid;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 't': target = optarg; break;
		case 'v': volume = optarg; break;
		case 'T':
			if (strcmp(optarg, "tcp") && strcmp(optarg, "rdma")) {
				fprintf(stderr, "rblkctl attach: --transport is rdma or tcp\n");
				return 2;
			}
			transport = optarg;
			break;
		case 'q': queues = optarg; break;
		case 'd': depth = optarg; break;
		case 'H': hostname = optarg; break;
		case 's': secret = optarg; break;
		case 'w':
			timeout_s = atoi(optarg);
			if (timeout_s <= 0) {
				fprintf(stderr, "rblkctl attach: bad --timeout\n");
				return 2;
			}
			break;
		case 'K': fault_opt[0] = optarg; break;
		case 'O': fault_opt[1] = optarg; break;
		case 'R': fault_opt[2] = optarg; break;
		case 'X': fault_opt[3] = optarg; break;
		case 'F': fault_opt[4] = optarg; break;
		case 'h': attach_usage(stdout); return 0;
		default: attach_usage(stderr); return 2;
		}
	}
	if (optind < argc || !target || !volume) {
		fprintf(stderr, "rblkctl attach: --target and --volume are required\n");
		return 2;
	}
	if (rblk_name_valid(volume)) {
		fprintf(stderr, "rblkctl attach: bad volume name '%s'\n", volume);
		return 2;
	}
	if (need_root("attach"))
		return 1;
	if (!have_ublk()) {
		fprintf(stderr, "rblkctl attach: no ublk support in this kernel (/dev/ublk-control missing; modprobe ublk_drv failed)\n");
		return 1;
	}
	if (mkdir(ini_state_dir(), 0755) && errno != EEXIST) {
		fprintf(stderr, "rblkctl attach: %s: %s\n", ini_state_dir(), strerror(errno));
		return 1;
	}
	find_initiator(bin, sizeof(bin));
	if (pipe2(pfd, O_CLOEXEC)) {
		fprintf(stderr, "rblkctl attach: pipe: %s\n", strerror(errno));
		return 1;
	}

	args[na++] = "rblk-initiator";
	args[na++] = "--target";	args[na++] = target;
	args[na++] = "--volume";	args[na++] = volume;
	args[na++] = "--transport";	args[na++] = transport;
	if (queues)   { args[na++] = "--queues";      args[na++] = queues; }
	if (depth)    { args[na++] = "--depth";       args[na++] = depth; }
	if (hostname) { args[na++] = "--hostname";    args[na++] = hostname; }
	if (secret)   { args[na++] = "--secret-file"; args[na++] = secret; }
	for (int i = 0; i < 5; i++) {
		if (fault_opt[i]) {
			args[na++] = fault_name[i];
			args[na++] = fault_opt[i];
		}
	}
	args[na++] = "--ready-fd";	args[na++] = "3";
	args[na++] = "--log-file";	args[na++] = logpath;
	args[na] = NULL;

	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "rblkctl attach: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		int fd;

		setsid();
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
		/* fd 3 is the pipe; dup2 clears its close-on-exec flag. */
		if (dup2(pfd[1], 3) < 0)
			_exit(127);
		execvp(bin, (char **)args);
		dprintf(3, "ERR cannot run %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	id = wait_ready(pfd[0], pid, timeout_s, msg, sizeof(msg));
	close(pfd[0]);
	if (id < 0) {
		/* It reported an error and exits; collect it (bounded). */
		for (int i = 0; i < 50 && waitpid(pid, &st, WNOHANG) == 0; i++)
			usleep(100000);
		fprintf(stderr, "rblkctl attach: %s\n", msg);
		return 1;
	}
	/* devtmpfs makes the node asynchronously (and may still be removing
	 * an old one of the same name): print it once it is there. */
	for (int i = 0; i < 100 && !blk_exists(id); i++)
		usleep(50000);
	if (!blk_exists(id)) {
		fprintf(stderr, "rblkctl attach: /dev/ublkb%d did not appear\n", id);
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
"Stops serving a device (/dev/ublkbN, ublkbN or N); it disappears.  I/O the\n"
"target does not answer in time fails with EIO; after --timeout (default %d)\n"
"the server is killed.\n"
"  --all           every attached device\n"
"  --timeout SECS\n"
"  -h, --help\n", DETACH_TIMEOUT_S);
}

static int wait_gone(pid_t pid, int id, int64_t deadline)
{
	while (rblk_now_ms() < deadline) {
		if ((pid <= 0 || (kill(pid, 0) && errno == ESRCH)) &&
		    !dev_exists(id))
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

	find_initiator(bin, sizeof(bin));
	snprintf(arg, sizeof(arg), "%d", id);
	pid = fork();
	if (pid == 0) {
		execlp(bin, "rblk-initiator", "--cleanup-dev", arg, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
}

static int detach_one(int id, int timeout_s)
{
	struct ini_state s;
	int ret;

	ret = ini_state_get(id, &s);
	if (ret) {
		fprintf(stderr, "rblkctl detach: /dev/ublkb%d is not attached by rblk\n", id);
		return 1;
	}
	if (!ini_state_alive(&s)) {
		ini_state_remove(id);
		cleanup_dev(id);
		if (dev_exists(id)) {
			fprintf(stderr, "rblkctl detach: /dev/ublkb%d has no server (pid %d gone); stale state removed\n",
				id, (int)s.pid);
			return 1;
		}
		return 0;
	}
	kill(s.pid, SIGTERM);
	if (wait_gone(s.pid, id, rblk_now_ms() + (int64_t)timeout_s * 1000)) {
		fprintf(stderr, "rblkctl detach: /dev/ublkb%d: server %d still running after %d s; killing it\n",
			id, (int)s.pid, timeout_s);
		kill(s.pid, SIGKILL);
		/* Without its server the kernel stops and removes the device. */
		if (wait_gone(s.pid, id, rblk_now_ms() + 15000)) {
			fprintf(stderr, "rblkctl detach: /dev/ublkb%d did not go away\n", id);
			return 1;
		}
		cleanup_dev(id);
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
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
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
		id = parse_dev(argv[optind]);
		if (id < 0) {
			fprintf(stderr, "rblkctl detach: '%s' is not a ublk device name\n",
				argv[optind]);
			return 2;
		}
	}
	if (need_root("detach"))
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
"connecting, failed, stopping; dead when the server is gone), size, time in\n"
"that state and reconnects so far.\n"
"  --json      one JSON array instead of the table\n"
"  -h, --help\n");
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

int rblkctl_list(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ini_state *list;
	int json = ctl_json, c, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
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
	if (json) {
		struct json_object *arr = json_object_new_array();

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
				ini_state_alive(s) ? s->state : "dead"));
			json_object_object_add(o, "size", json_object_new_int64((int64_t)s->size));
			json_object_object_add(o, "queues", json_object_new_int(s->queues));
			json_object_object_add(o, "depth", json_object_new_int(s->depth));
			json_object_object_add(o, "pid", json_object_new_int(s->pid));
			json_object_object_add(o, "reconnects", json_object_new_int(s->reconnects));
			json_object_object_add(o, "state_seconds", json_object_new_int64(
				s->state_since ? (int64_t)time(NULL) - s->state_since : 0));
			json_object_array_add(arr, o);
		}
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY));
		json_object_put(arr);
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
			       s->transport, ini_state_alive(s) ? s->state : "dead", size,
			       since, s->reconnects);
		}
	}
	free(list);
	return 0;
}
