// SPDX-License-Identifier: MIT
/* rblk-initiator's command line (opts.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "getopt_exact.h"
#include "helpers.h"
#include "hostport.h"
#include "log.h"
#include "opts.h"
#include "rblk_client.h"
#include "version.h"

/*
 * The options rblk-initiator and `rblkctl attach` share, written once:
 * getopt reads this table, the help prints it, ini_opt_apply checks each
 * value the same way for both (attach refuses a bad value before it
 * starts a daemon, then hands the text on as given), and
 * integration/91-options-documented checks the docs against the help.
 */
const struct ini_opt ini_shared_opts[INI_SHARED_OPTS] = {
	{ "target",   't', "[tcp:|rdma:]HOST[:PORT]", "target address ([v6addr]:port for IPv6); again for\n"
				  "more paths to the volume, tried in order (multipath)" },
	{ "volume",   'v', "NAME", "volume to attach" },
	{ "transport", 'T', "tcp|rdma", "(default tcp)" },
	{ "queues",   'q', "N", "ublk queues, one connection each (default: CPUs, max 4)" },
	{ "depth",    'd', "N", "requests per queue (default " RBLK_XSTR(INI_DEFAULT_DEPTH)
				", capped by the target)" },
	{ "hostname", 'H', "NAME", "host name sent at login (default: hostname)" },
	{ "secret-file", 's', "FILE", "shared secret for the login challenge (mode 0600)" },
	{ "keep-alive-tmo", 'K', "S", "nothing from the target for S s, a keep-alive unanswered\n"
				     "= connection dead "
				     "(default 5; 0 or -1: no keep-alive)" },
	{ "io-timeout", 'O', "S", "a command unanswered for S s rebuilds its connection\n"
				 "(default 30; 0 or -1: never)" },
	{ "reconnect-delay", 'R', "S", "between reconnect attempts (default 2)" },
	{ "ctrl-loss-tmo", 'X', "S", "reconnect this long, then fail I/O (default 600;\n"
				    "-1: forever, 0: never reconnect)" },
	{ "fast-io-fail-tmo", 'F', "S", "fail I/O after S s disconnected, still reconnecting\n"
				       "(default -1: off)" },
	{ "poll",     'P', "MODE", "how the queues wait for the ublk ring and the RDMA\n"
				  "CQ: event (sleep, default), busy (spin: one core\n"
				  "per queue), adaptive (spin --poll-us after work)" },
	{ "poll-us",  'U', "N", "adaptive: microseconds to spin (default 50, max 1000000)" },
	{ "batch-io", 'b', "auto|off", "ublk batch I/O (Linux 7.0+) where the kernel has it:\n"
				      "one command fetches many requests, one commits\n"
				      "many answers (default auto; off: per request)" },
	{ "pin-queues", 'a', "on|off", "on: keep each queue's thread on the CPUs whose\n"
				      "requests ublk sends it, within the process's own\n"
				      "(default off: the scheduler places it)" },
	{ "failback-delay", 'B', "S", "multipath: go back to the first --target once it has\n"
				      "answered for S s without a break (default -1: only\n"
				      "on rblkctl failback)" },
	{ "read-policy", 'A', "POLICY", "multipath: standby (default: every command on the\n"
				       "path in use) or spread (reads also on a standby\n"
				       "path, writes on the path in use: active/active reads)" },
};

_Static_assert(RBLK_POLL_US_DEFAULT == 50 && RBLK_POLL_US_MAX == 1000000,
	       "the --poll-us help names the default and the maximum");

int ini_opt_index(int code)
{
	for (unsigned i = 0; i < INI_SHARED_OPTS; i++)
		if (ini_shared_opts[i].code == code)
			return (int)i;
	return -1;
}

unsigned ini_opts_getopt(struct option *lo)
{
	for (unsigned i = 0; i < INI_SHARED_OPTS; i++)
		lo[i] = (struct option) { ini_shared_opts[i].name, required_argument,
					  NULL, ini_shared_opts[i].code };
	return INI_SHARED_OPTS;
}

void ini_opt_help_line(FILE *f, const char *name, const char *arg, const char *help)
{
	char left[64];
	const char *nl;

	snprintf(left, sizeof(left), "--%s%s%s", name, arg ? " " : "", arg ? arg : "");
	fprintf(f, "  %-22s ", left);
	/* Continuation lines of the help line up under its first. */
	while ((nl = strchr(help, '\n'))) {
		fprintf(f, "%.*s\n%25s", (int)(nl - help), help, "");
		help = nl + 1;
	}
	fprintf(f, "%s\n", help);
}

void ini_opts_help(FILE *f)
{
	for (unsigned i = 0; i < INI_SHARED_OPTS; i++)
		ini_opt_help_line(f, ini_shared_opts[i].name, ini_shared_opts[i].arg,
				  ini_shared_opts[i].help);
}

void ini_opts_usage(FILE *f)
{
	fprintf(f,
"usage: rblk-initiator --target HOST[:PORT] --volume NAME [options]\n"
"Serves one rblk volume as /dev/ublkbN until SIGTERM/SIGINT.\n"
"Normally started by `rblkctl attach`.\n");
	ini_opts_help(f);
	ini_opt_help_line(f, "dev-id", "N", "ask for /dev/ublkbN (default: next free)");
	ini_opt_help_line(f, "grace-ms", "N", "on stop, how long in-flight I/O may take (default "
			  RBLK_XSTR(INI_DEFAULT_GRACE_MS) ")");
	ini_opt_help_line(f, "ready-fd", "FD", "write \"OK ublkbN\" or \"ERR reason\" there once started");
	ini_opt_help_line(f, "log-file", "PATH", "recorded in the state file (the caller redirects)");
	ini_opt_help_line(f, "log-level", "LEVEL", "err|warn|info|debug");
	ini_opt_help_line(f, "recovery", "MODE", "auto|manual|off (default off): make the device with\n"
			  "ublk USER_RECOVERY + REISSUE, so that it survives\n"
			  "this process; recorded for rblkctl (auto = rblkctl\n"
			  "supervises; manual = rblkctl recover by hand)");
	ini_opt_help_line(f, "recover", "N", "take over /dev/ublkbN, quiesced after its server died\n"
			  "(exit 3: nothing to recover)");
	ini_opt_help_line(f, "supervisor", "PID", "recorded in the state file (rblkctl's supervisor)");
	ini_opt_help_line(f, "cleanup-dev", "N", "only remove ublk device N left by a dead server");
	ini_opt_help_line(f, "debug", "MASK", "debug areas (1 io, 2 conn, 4 rdma, 8 ublk)");
	fprintf(f, "  -h, --help\n  --version\n");
}

int ini_recovery_mode_valid(const char *s)
{
	return !strcmp(s, "auto") || !strcmp(s, "manual") || !strcmp(s, "off");
}

/* A timeout in seconds, lo (-1 or 1) .. one year, as an rblk_client_opts
 * value in *ms and as given in *sec. */
static int parse_tmo(const char *s, long lo, int *ms, int *sec)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > 365L * 86400)
		return -EINVAL;
	*ms = rblk_tmo_from_sec(v);
	*sec = (int)v;
	return 0;
}

/* --target, once per path: the first also sets host and port. */
static int add_target(const char *arg, struct ini_opts *o, const char *prog)
{
	struct rblk_path_spec *t = &o->targets[o->ntargets], parsed;
	char err[160];

	if (o->ntargets == RBLK_MAX_PATHS) {
		fprintf(stderr, "%s: at most %d --target (paths)\n", prog, RBLK_MAX_PATHS);
		return -EINVAL;
	}
	if (rblk_path_parse(arg, &parsed, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return -EINVAL;
	}
	*t = parsed;
	if (!o->ntargets++) {
		memcpy(o->host, t->host, sizeof(o->host));
		o->port = t->port[0] ? t->port : NULL;
	}
	return 0;
}

/* The value of shared option i, one of two words: 0 for the first, 1 for
 * the second, or -EINVAL after the line that names both. */
static int two_words(const char *arg, const char *first, const char *second,
		     int i, const char *prog)
{
	if (!strcmp(arg, first))
		return 0;
	if (!strcmp(arg, second))
		return 1;
	fprintf(stderr, "%s: --%s is %s or %s, not '%s'\n", prog,
		ini_shared_opts[i].name, first, second, arg);
	return -EINVAL;
}

int ini_opt_apply(int c, const char *arg, struct ini_opts *o, const char *prog)
{
	int ms, sec, w, i = ini_opt_index(c);

	switch (c) {
	case 't':
		return add_target(arg, o, prog);
	case 'v': o->volume = arg; return 0;
	case 'B':
		if (parse_tmo(arg, -1, &ms, &sec) || sec == 0) {
			fprintf(stderr, "%s: --failback-delay is -1 (manual) or 1..31536000 seconds\n", prog);
			return -EINVAL;
		}
		o->failback_s = sec;
		return 0;
	case 'A':
		w = two_words(arg, "standby", "spread", i, prog);
		if (w < 0)
			return w;
		o->read_spread = w;
		return 0;
	case 'T':
		if (strcmp(arg, "tcp") && strcmp(arg, "rdma")) {
			fprintf(stderr, "%s: --transport is tcp or rdma\n", prog);
			return -EINVAL;
		}
		o->transport = arg;
		return 0;
	case 'q':
		if (rblk_parse_uint(arg, 1, INI_MAX_QUEUES, &o->queues)) {
			fprintf(stderr, "%s: --queues is 1..%d\n", prog, INI_MAX_QUEUES);
			return -EINVAL;
		}
		return 0;
	case 'd':
		if (rblk_parse_uint(arg, 1, RBLK_MAX_QUEUE_DEPTH, &o->depth)) {
			fprintf(stderr, "%s: --depth is 1..%d\n", prog, RBLK_MAX_QUEUE_DEPTH);
			return -EINVAL;
		}
		return 0;
	case 'H': o->hostname = arg; return 0;
	case 's': o->secret_file = arg; return 0;
	case 'K': case 'O': case 'R': case 'X': case 'F':
		if (parse_tmo(arg, c == 'R' ? 1 : -1, &ms, &sec)) {
			fprintf(stderr, "%s: bad --%s '%s' (seconds%s)\n", prog,
				ini_shared_opts[i].name, arg,
				c == 'R' ? ", at least 1" : ", -1 for never");
			return -EINVAL;
		}
		*(c == 'K' ? &o->ka_ms : c == 'O' ? &o->io_ms : c == 'R' ? &o->delay_ms :
		  c == 'X' ? &o->loss_ms : &o->fail_ms) = ms;
		o->tmo_s[c == 'K' ? INI_TMO_KEEP_ALIVE : c == 'O' ? INI_TMO_IO :
			 c == 'R' ? INI_TMO_RECONNECT_DELAY :
			 c == 'X' ? INI_TMO_CTRL_LOSS : INI_TMO_FAST_IO_FAIL] = sec;
		return 0;
	case 'P':
		if (rblk_poll_mode_parse(arg, &o->poll)) {
			fprintf(stderr, "%s: --poll is event, busy or adaptive, not '%s'\n",
				prog, arg);
			return -EINVAL;
		}
		return 0;
	case 'U':
		if (rblk_parse_uint(arg, 0, RBLK_POLL_US_MAX, &o->poll_us)) {
			fprintf(stderr, "%s: --poll-us is 0..%u (microseconds), not '%s'\n",
				prog, RBLK_POLL_US_MAX, arg);
			return -EINVAL;
		}
		return 0;
	case 'b':
		w = two_words(arg, "auto", "off", i, prog);
		if (w < 0)
			return w;
		o->batch_io_off = w;
		return 0;
	case 'a':
		w = two_words(arg, "on", "off", i, prog);
		if (w < 0)
			return w;
		o->pin_queues = !w;
		return 0;
	}
	return 1;
}

int ini_opts_parse(int argc, char **argv, struct ini_opts *o)
{
	static const struct option own[] = {
		{ "dev-id",      required_argument, NULL, 'i' },
		{ "grace-ms",    required_argument, NULL, 'g' },
		{ "ready-fd",    required_argument, NULL, 'r' },
		{ "log-file",    required_argument, NULL, 'L' },
		{ "log-level",   required_argument, NULL, 'l' },
		{ "debug",       required_argument, NULL, 'D' },
		{ "cleanup-dev", required_argument, NULL, 'C' },
		{ "recovery",    required_argument, NULL, 'y' },
		{ "recover",     required_argument, NULL, 'Y' },
		{ "supervisor",  required_argument, NULL, 'S' },
		{ "help",        no_argument,       NULL, 'h' },
		{ "version",     no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct option lo[ARRAY_SIZE(ini_shared_opts) + ARRAY_SIZE(own)];
	unsigned v;
	int c, ret;

	memcpy(lo + ini_opts_getopt(lo), own, sizeof(own));

	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		ret = ini_opt_apply(c, optarg, o, "rblk-initiator");
		if (ret <= 0) {
			if (ret)
				return ret;
			continue;
		}
		switch (c) {
		case 'i':
			if (rblk_parse_uint(optarg, 0, 1u << 20, &v)) {
				fprintf(stderr, "rblk-initiator: bad --dev-id\n");
				return -EINVAL;
			}
			o->dev_id = (int)v;
			break;
		case 'g':
			if (rblk_parse_uint(optarg, 0, 3600000, &v)) {
				fprintf(stderr, "rblk-initiator: bad --grace-ms\n");
				return -EINVAL;
			}
			o->grace_ms = (int)v;
			break;
		case 'r':
			if (rblk_parse_uint(optarg, 0, INT_MAX, &v) || fcntl((int)v, F_GETFD) < 0) {
				fprintf(stderr, "rblk-initiator: bad --ready-fd\n");
				return -EINVAL;
			}
			o->ready_fd = (int)v;
			break;
		case 'L': o->log_path = optarg; break;
		case 'l':
			if (rblk_log_set_level(optarg)) {
				fprintf(stderr, "rblk-initiator: bad --log-level\n");
				return -EINVAL;
			}
			break;
		case 'D': {
			char *end;
			unsigned long m;

			errno = 0;
			m = strtoul(optarg, &end, 0);
			if (errno || end == optarg || *end || optarg[0] == '-' || m > UINT_MAX) {
				fprintf(stderr, "rblk-initiator: bad --debug '%s' (a mask: 1 io, 2 conn, 4 rdma, 8 ublk)\n",
					optarg);
				return -EINVAL;
			}
			rblk_debug_mask = (unsigned)m;
			break;
		}
		case 'y':
			if (!ini_recovery_mode_valid(optarg)) {
				fprintf(stderr, "rblk-initiator: --recovery is auto, manual or off\n");
				return -EINVAL;
			}
			o->recovery = optarg;
			break;
		case 'Y':
			if (rblk_parse_uint(optarg, 0, 1u << 20, &v)) {
				fprintf(stderr, "rblk-initiator: bad --recover\n");
				return -EINVAL;
			}
			o->recover_dev = (int)v;
			break;
		case 'S':
			if (rblk_parse_uint(optarg, 1, INT_MAX, &v)) {
				fprintf(stderr, "rblk-initiator: bad --supervisor\n");
				return -EINVAL;
			}
			o->supervisor = (pid_t)v;
			break;
		case 'C':
			if (rblk_parse_uint(optarg, 0, 1u << 20, &v)) {
				fprintf(stderr, "rblk-initiator: bad --cleanup-dev\n");
				return -EINVAL;
			}
			o->cleanup_dev = (int)v;
			return 0;
		case 'h':
			ini_opts_usage(stdout);
			exit(0);
		case 'V':
			rblk_print_version("rblk-initiator");
			exit(0);
		default:
			ini_opts_usage(stderr);
			return -EINVAL;
		}
	}
	if (o->cleanup_dev >= 0)
		return 0;
	if (optind < argc || !o->host[0] || !o->volume) {
		fprintf(stderr, "rblk-initiator: --target and --volume are required\n");
		ini_opts_usage(stderr);
		return -EINVAL;
	}
	if (rblk_name_valid(o->volume)) {
		fprintf(stderr, "rblk-initiator: bad volume name '%s'\n", o->volume);
		return -EINVAL;
	}
	return 0;
}
