// SPDX-License-Identifier: MIT
/*
 * Watches one queue through a fault, for integration tests, on
 * librblkclient:
 *
 *   rblk-faultclient [options] HOST PORT VOLUME
 *     --seconds N            stop after N seconds (default 20)
 *     --keep-alive-tmo S, --io-timeout S, --reconnect-delay S,
 *     --ctrl-loss-tmo S, --fast-io-fail-tmo S   queue options (seconds)
 *
 * Loops: write 4 KiB with a fresh pattern, read it back, compare (QD1,
 * offsets cycling over the first 4 MiB).  Prints one line whenever the
 * outcome changes, with the wall clock in ms (compare with `date +%s%3N`):
 *   EVENT <ms> ok                   I/O works (first success, or again)
 *   EVENT <ms> fail <error> <state> I/O fails (reason, queue state)
 *   EVENT <ms> failed               the queue gave up (FAILED): exit
 * Exit 0, or 1 when read-back data differs (never acceptable) or the
 * queue cannot be opened.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rblk_client.h"

static long long wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One command to completion: 0, or -errno (submit refusal or status). */
static int one_io(struct rblk_queue *q, struct rblk_io *io)
{
	struct rblk_io *done;
	int ret = rblk_queue_submit(q, io);

	if (ret)
		return ret;
	do {
		ret = rblk_queue_reap(q, &done, 1, 1, -1);
	} while (ret == 0);
	if (ret < 0)
		return ret;
	return done->status == RBLK_S_OK ? 0 : (done->error ? done->error : -EIO);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "keep-alive-tmo", required_argument, NULL, 'k' },
		{ "io-timeout", required_argument, NULL, 'i' },
		{ "reconnect-delay", required_argument, NULL, 'r' },
		{ "ctrl-loss-tmo", required_argument, NULL, 'l' },
		{ "fast-io-fail-tmo", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct rblk_client_opts co = { .queue_depth = 4, .timeout_ms = 5000 };
	static uint8_t wbuf[4096], rbuf[4096];
	struct rblk_queue_status st;
	struct rblk_queue *q;
	int seconds = 20, opt, ret, was = -1;
	long long end;
	char err[256];

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's': seconds = atoi(optarg); break;
		case 'k': co.keep_alive_tmo_ms = rblk_tmo_from_sec(atol(optarg)); break;
		case 'i': co.io_timeout_ms = rblk_tmo_from_sec(atol(optarg)); break;
		case 'r': co.reconnect_delay_ms = rblk_tmo_from_sec(atol(optarg)); break;
		case 'l': co.ctrl_loss_tmo_ms = rblk_tmo_from_sec(atol(optarg)); break;
		case 'f': co.fast_io_fail_tmo_ms = rblk_tmo_from_sec(atol(optarg)); break;
		default: return 2;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: rblk-faultclient [options] HOST PORT VOLUME\n");
		return 2;
	}
	co.host = argv[optind];
	co.port = argv[optind + 1];
	co.volume = argv[optind + 2];
	co.hostname = "faultclient";
	if (rblk_queue_open(&co, &q, NULL, err, sizeof(err))) {
		fprintf(stderr, "faultclient: %s\n", err);
		return 1;
	}
	end = wall_ms() + seconds * 1000LL;
	for (unsigned i = 0; wall_ms() < end; i++) {
		uint64_t off = (uint64_t)(i % 1024) * 4096;
		struct rblk_io w = { .opcode = RBLK_OP_WRITE, .offset = off,
				     .length = 4096, .buf = wbuf };
		struct rblk_io r = { .opcode = RBLK_OP_READ, .offset = off,
				     .length = 4096, .buf = rbuf };

		memset(wbuf, (int)(i * 13 + 1), sizeof(wbuf));
		ret = one_io(q, &w);
		if (!ret)
			ret = one_io(q, &r);
		if (!ret && memcmp(rbuf, wbuf, sizeof(wbuf))) {
			printf("EVENT %lld mismatch at offset %llu\n", wall_ms(),
			       (unsigned long long)off);
			rblk_queue_close(q);
			return 1;
		}
		rblk_queue_status(q, &st);
		if (ret == -ENOTCONN || st.state == RBLK_QUEUE_FAILED) {
			printf("EVENT %lld failed\n", wall_ms());
			break;
		}
		if ((ret == 0) != (was == 1)) {
			if (ret)
				printf("EVENT %lld fail %s %s\n", wall_ms(), strerror(-ret),
				       rblk_queue_state_str(st.state));
			else
				printf("EVENT %lld ok\n", wall_ms());
			fflush(stdout);
			was = ret == 0;
		}
		if (ret)
			usleep(20 * 1000);	/* failing fast: do not spin */
	}
	rblk_queue_status(q, &st);
	printf("faultclient: state %s, %u reconnects\n", rblk_queue_state_str(st.state),
	       st.reconnects);
	rblk_queue_close(q);
	return 0;
}
