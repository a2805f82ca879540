// SPDX-License-Identifier: MIT
/*
 * rblk-zeroes: zeroes a large range of a volume with WRITE_ZEROES (or
 * discards it), split
 * into commands of at most the max_write_zeroes the target granted at
 * LOGIN ([V34]), several in flight, as a block layer client would.
 *
 *   rblk-zeroes [--depth N] [--bytes B] [--seconds S] HOST PORT VOLUME
 *     --bytes B     how much to zero from offset 0 (default: 4 GiB, or the
 *                   volume when smaller)
 *     --depth N     commands in flight (default 4)
 *     --seconds S   zero the range again until S seconds passed (default 0:
 *                   once)
 *     --pause-ms P  wait P ms between two passes (default 0)
 *     --discard     DISCARD instead (split to the granted max_discard)
 *
 * Prints "OK bytes=... cmds=... secs=... max_cmd_ms=..." (exit 0) or
 * "ERR ..." (exit 1).  Used by tests/integration/48-write-zeroes-bystander.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "rblk_client.h"
#include "rblk_proto.h"

#define MAX_DEPTH	32

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "depth", required_argument, NULL, 'd' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "seconds", required_argument, NULL, 's' },
		{ "pause-ms", required_argument, NULL, 'p' },
		{ "discard", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct rblk_io ios[MAX_DEPTH] = { { 0 } }, *done[MAX_DEPTH];
	double started[MAX_DEPTH], t0, max_cmd = 0, secs = 0;
	uint64_t bytes = 4ull << 30, next = 0, zeroed = 0, cmds = 0;
	unsigned depth = 4, inflight = 0, pass = 0, pause_ms = 0, max_len;
	int opcode = RBLK_OP_WRITE_ZEROES;
	struct rblk_volume_info info;
	struct rblk_queue *q;
	char err[256];
	int opt, ret;

	rblk_log_init("rblk-zeroes");
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': depth = (unsigned)atoi(optarg); break;
		case 'b': bytes = strtoull(optarg, NULL, 0); break;
		case 's': secs = atof(optarg); break;
		case 'p': pause_ms = (unsigned)atoi(optarg); break;
		case 'D': opcode = RBLK_OP_DISCARD; break;
		default: return 2;
		}
	}
	if (argc - optind != 3 || !depth || depth > MAX_DEPTH) {
		fprintf(stderr, "usage: rblk-zeroes [--depth 1..%d] [--bytes B] [--seconds S] [--pause-ms P] [--discard] HOST PORT VOLUME\n",
			MAX_DEPTH);
		return 2;
	}
	struct rblk_client_opts o = {
		.host = argv[optind], .port = argv[optind + 1],
		.volume = argv[optind + 2], .hostname = "rblk-zeroes",
		.queue_depth = depth, .ctrl_loss_tmo_ms = RBLK_TMO_NOW,
		/* A slow device may take a while per 128 MiB zeroing. */
		.io_timeout_ms = 120000,
	};
	ret = rblk_queue_open(&o, &q, &info, err, sizeof(err));
	if (ret) {
		printf("ERR open: %s\n", err);
		return 1;
	}
	max_len = opcode == RBLK_OP_DISCARD ? info.max_discard : info.max_write_zeroes;
	if (!max_len) {
		printf("ERR the volume offers no %s\n", rblk_opcode_str(opcode));
		return 1;
	}
	if (bytes > info.size)
		bytes = info.size;
	if (depth > info.queue_depth)
		depth = info.queue_depth;
	t0 = rblk_now_s();
	for (;;) {
		/* Fill the queue. */
		while (inflight < depth && next < bytes) {
			unsigned i;

			for (i = 0; i < depth && ios[i].priv; i++)
				;
			memset(&ios[i], 0, sizeof(ios[i]));
			ios[i].opcode = opcode;
			ios[i].offset = next;
			ios[i].length = bytes - next < max_len ?
					(uint32_t)(bytes - next) : max_len;
			ios[i].priv = &ios[i];
			started[i] = rblk_now_s();
			ret = rblk_queue_submit(q, &ios[i]);
			if (ret) {
				printf("ERR submit at %" PRIu64 ": %s\n", next, strerror(-ret));
				return 1;
			}
			next += ios[i].length;
			inflight++;
		}
		if (!inflight) {
			pass++;
			if (rblk_now_s() - t0 >= secs)
				break;
			next = 0;		/* again, until --seconds */
			if (pause_ms)
				usleep(pause_ms * 1000);
			continue;
		}
		ret = rblk_queue_reap(q, done, 1, depth, 130000);
		if (ret <= 0) {
			printf("ERR reap: %s\n", ret ? strerror(-ret) : "timed out");
			return 1;
		}
		for (int k = 0; k < ret; k++) {
			struct rblk_io *io = done[k];
			double d = rblk_now_s() - started[io - ios];

			if (io->status != RBLK_S_OK) {
				printf("ERR %s offset %" PRIu64 " length %u: %s\n",
				       rblk_opcode_str(opcode), io->offset, io->length,
				       rblk_status_str(io->status));
				return 1;
			}
			if (d > max_cmd)
				max_cmd = d;
			zeroed += io->length;
			cmds++;
			io->priv = NULL;
			inflight--;
		}
	}
	printf("OK bytes=%" PRIu64 " passes=%u cmds=%" PRIu64 " max_len=%u secs=%.2f max_cmd_ms=%.0f\n",
	       zeroed, pass, cmds, max_len, rblk_now_s() - t0, max_cmd * 1000);
	rblk_queue_close(q);
	return 0;
}
