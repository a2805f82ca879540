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

void ini_opts_usage(FILE *f)
{
	fprintf(f,
"usage: rblk-initiator --target HOST[:PORT] --volume NAME [options]\n"
"Serves one rblk volume as /dev/ublkbN until SIGTERM/SIGINT.\n"
"Normally started by `rblkctl attach`.\n"
"  --target HOST[:PORT]   target address ([v6addr]:port for IPv6)\n"
"  --volume NAME          volume to attach\n"
"  --transport tcp|rdma   (default tcp)\n"
"  --queues N             ublk queues = connections (default: CPUs, max 4)\n"
"  --depth N              tags per queue (default %d, capped by the target)\n"
"  --hostname NAME        host name sent at login (default: hostname)\n"
"  --secret-file FILE     shared secret for the login challenge\n"
"  --dev-id N             ask for /dev/ublkbN (default: next free)\n"
"  --grace-ms N           on stop, how long in-flight I/O may take (default %d)\n"
"  --keep-alive-tmo S     no answer to a keep-alive for S s = connection dead\n"
"                         (default 5; 0 or -1: no keep-alive)\n"
"  --io-timeout S         a command unanswered for S s rebuilds its connection\n"
"                         (default 30; 0 or -1: never)\n"
"  --reconnect-delay S    between reconnect attempts (default 2)\n"
"  --ctrl-loss-tmo S      reconnect this long, then fail I/O (default 600;\n"
"                         -1: forever, 0: never reconnect)\n"
"  --fast-io-fail-tmo S   fail I/O after S s disconnected, still reconnecting\n"
"                         (default -1: off)\n"
"  --poll MODE            how the queues wait for the ublk ring and the RDMA\n"
"                         CQ: event (sleep, default), busy (spin: one core\n"
"                         per queue), adaptive (spin --poll-us after work)\n"
"  --poll-us N            adaptive: microseconds to spin (default %u, max %u)\n"
"  --ready-fd FD          write \"OK ublkbN\" or \"ERR reason\" there once started\n"
"  --log-file PATH        recorded in the state file (the caller redirects)\n"
"  --log-level LEVEL      err|warn|info|debug\n"
"  --recovery MODE        auto|manual|off (default off): make the device with\n"
"                         ublk USER_RECOVERY + REISSUE, so that it survives\n"
"                         this process; recorded for rblkctl (auto = rblkctl\n"
"                         supervises; manual = rblkctl recover by hand)\n"
"  --recover N            take over /dev/ublkbN, quiesced after its server died\n"
"                         (exit 3: nothing to recover)\n"
"  --supervisor PID       recorded in the state file (rblkctl's supervisor)\n"
"  --cleanup-dev N        only remove ublk device N left by a dead server\n"
"  --debug MASK           debug areas (1 io, 2 conn, 4 rdma, 8 ublk)\n"
"  -h, --help\n"
"  --version\n", INI_DEFAULT_DEPTH, INI_DEFAULT_GRACE_MS, RBLK_POLL_US_DEFAULT,
	RBLK_POLL_US_MAX);
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

/* --target: the port, when given, is kept as text for the client. */
static int split_target(const char *arg, struct ini_opts *o)
{
	unsigned p;

	if (rblk_split_hostport(arg, o->host, sizeof(o->host), &p))
		return -EINVAL;
	if (p) {
		snprintf(o->port_buf, sizeof(o->port_buf), "%u", p);
		o->port = o->port_buf;
	}
	return 0;
}

int ini_opts_parse(int argc, char **argv, struct ini_opts *o)
{
	static const struct option lo[] = {
		{ "target",      required_argument, NULL, 't' },
		{ "volume",      required_argument, NULL, 'v' },
		{ "transport",   required_argument, NULL, 'T' },
		{ "queues",      required_argument, NULL, 'q' },
		{ "depth",       required_argument, NULL, 'd' },
		{ "hostname",    required_argument, NULL, 'H' },
		{ "secret-file", required_argument, NULL, 's' },
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
		{ "keep-alive-tmo",   required_argument, NULL, 'K' },
		{ "io-timeout",       required_argument, NULL, 'O' },
		{ "reconnect-delay",  required_argument, NULL, 'R' },
		{ "ctrl-loss-tmo",    required_argument, NULL, 'X' },
		{ "fast-io-fail-tmo", required_argument, NULL, 'F' },
		{ "poll",        required_argument, NULL, 'P' },
		{ "poll-us",     required_argument, NULL, 'U' },
		{ "help",        no_argument,       NULL, 'h' },
		{ "version",     no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned v;
	int c, ms, sec;

	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			if (split_target(optarg, o)) {
				fprintf(stderr, "rblk-initiator: bad --target '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'v': o->volume = optarg; break;
		case 'T':
			if (strcmp(optarg, "tcp") && strcmp(optarg, "rdma")) {
				fprintf(stderr, "rblk-initiator: --transport is tcp or rdma\n");
				return -EINVAL;
			}
			o->transport = optarg;
			break;
		case 'q':
			if (rblk_parse_uint(optarg, 1, INI_MAX_QUEUES, &o->queues)) {
				fprintf(stderr, "rblk-initiator: --queues is 1..%d\n", INI_MAX_QUEUES);
				return -EINVAL;
			}
			break;
		case 'd':
			if (rblk_parse_uint(optarg, 1, RBLK_MAX_QUEUE_DEPTH, &o->depth)) {
				fprintf(stderr, "rblk-initiator: --depth is 1..%d\n", RBLK_MAX_QUEUE_DEPTH);
				return -EINVAL;
			}
			break;
		case 'H': o->hostname = optarg; break;
		case 's': o->secret_file = optarg; break;
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
		case 'D':
			rblk_debug_mask = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'K': case 'O': case 'R': case 'X': case 'F':
			if (parse_tmo(optarg, c == 'R' ? 1 : -1, &ms, &sec)) {
				fprintf(stderr, "rblk-initiator: bad --%s '%s' (seconds%s)\n",
					c == 'K' ? "keep-alive-tmo" : c == 'O' ? "io-timeout" :
					c == 'R' ? "reconnect-delay" : c == 'X' ? "ctrl-loss-tmo" :
					"fast-io-fail-tmo", optarg, c == 'R' ? ", at least 1" :
					", -1 for never");
				return -EINVAL;
			}
			*(c == 'K' ? &o->ka_ms : c == 'O' ? &o->io_ms : c == 'R' ? &o->delay_ms :
			  c == 'X' ? &o->loss_ms : &o->fail_ms) = ms;
			o->tmo_s[c == 'K' ? INI_TMO_KEEP_ALIVE : c == 'O' ? INI_TMO_IO :
				 c == 'R' ? INI_TMO_RECONNECT_DELAY :
				 c == 'X' ? INI_TMO_CTRL_LOSS : INI_TMO_FAST_IO_FAIL] = sec;
			break;
		case 'y':
			if (strcmp(optarg, "auto") && strcmp(optarg, "manual") &&
			    strcmp(optarg, "off")) {
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
		case 'P':
			if (rblk_poll_mode_parse(optarg, &o->poll)) {
				fprintf(stderr, "rblk-initiator: --poll is event, busy or adaptive, not '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'U':
			if (rblk_parse_uint(optarg, 0, RBLK_POLL_US_MAX, &o->poll_us)) {
				fprintf(stderr, "rblk-initiator: --poll-us is 0..%u (microseconds), not '%s'\n",
					RBLK_POLL_US_MAX, optarg);
				return -EINVAL;
			}
			break;
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
