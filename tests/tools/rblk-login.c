// SPDX-License-Identifier: MIT
/*
 * LOGIN probe for control-plane tests, on librblkclient:
 *
 *   rblk-login [options] HOST PORT VOLUME
 *     --host NAME     host name to log in as (default: hostname)
 *     --secret FILE   secret file for the HMAC challenge
 *     --io N          N 4 KiB writes + read-back compares at the start
 *     --hold SECS     stay logged in up to SECS seconds, then do one more
 *                     I/O (shows whether the target dropped the session);
 *                     the hold ends early when the connection goes away
 *                     or on SIGUSR1
 *     --offset OFF    byte offset of the I/O (default 0)
 *     --fua           the --io writes carry FUA
 *     --no-readback   the --io writes are not read back (null backend)
 *     --flush N       N FLUSH commands after the --io writes
 *     --bind ADDR     connect from this local address (e.g. 127.0.0.2), so
 *                     a test can pick the peer address the target sees
 *     --transport T   tcp (default) or rdma
 *     --keep-alive MS keep_alive_tmo in ms (0: send no KEEPALIVE at all;
 *                     default: the library's 5000)
 *
 * The queue does not reconnect (ctrl_loss_tmo 0): a dropped session shows
 * as a failed I/O at once, which is what control-plane tests look for.
 *
 * Prints one line: "OK size=BYTES session=ID [io=N] [after-hold=ok|ERR]"
 * or "ERR errno=E <reason>".  Exit 0 when the login (and I/O) worked, 1
 * when the login was refused, 3 when an I/O failed (incl. after --hold).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "rblk_client.h"

static bool fua;

static int one_io(struct rblk_queue *q, int op, uint64_t off, void *buf)
{
	struct rblk_io io = { .opcode = op, .offset = off, .length = 4096, .buf = buf };

	if (op == RBLK_OP_FLUSH) {
		io.offset = 0;
		io.length = 0;
	} else if (op == RBLK_OP_WRITE && fua) {
		io.flags = RBLK_CMD_F_FUA;
	}
	struct rblk_io *done;
	int n;

	if (rblk_queue_submit(q, &io))
		return -EIO;
	n = rblk_queue_reap(q, &done, 1, 1, 10000);
	if (n != 1)
		return n < 0 ? n : -ETIMEDOUT;
	if (done->status)
		return done->error ? done->error : -EIO;
	return 0;
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "secret", required_argument, NULL, 's' },
		{ "io", required_argument, NULL, 'i' },
		{ "hold", required_argument, NULL, 'w' },
		{ "offset", required_argument, NULL, 'o' },
		{ "fua", no_argument, NULL, 'F' },
		{ "no-readback", no_argument, NULL, 'n' },
		{ "flush", required_argument, NULL, 'f' },
		{ "bind", required_argument, NULL, 'b' },
		{ "transport", required_argument, NULL, 't' },
		{ "keep-alive", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct rblk_client_opts o = { .transport = "tcp", .queue_depth = 4,
				      .ctrl_loss_tmo_ms = RBLK_TMO_NOW };
	struct rblk_volume_info vi;
	struct rblk_queue *q;
	unsigned nio = 0, hold = 0, nflush = 0;
	bool readback = true;
	uint64_t off = 0;
	char err[256] = "";
	static uint8_t wbuf[4096], rbuf[4096];
	int c, ret;

	/* Installed first: a test may signal as soon as it sees the session.
	 * No SA_RESTART, so the signal ends the hold's poll. */
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigaction(SIGUSR1, &sa, NULL);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'H': o.hostname = optarg; break;
		case 's': o.secret_file = optarg; break;
		case 'i': nio = strtoul(optarg, NULL, 0); break;
		case 'w': hold = strtoul(optarg, NULL, 0); break;
		case 'o': off = strtoull(optarg, NULL, 0); break;
		case 'F': fua = true; break;
		case 'n': readback = false; break;
		case 'f': nflush = strtoul(optarg, NULL, 0); break;
		case 'b': o.source_addr = optarg; break;
		case 't': o.transport = optarg; break;
		case 'k': o.keep_alive_tmo_ms = atoi(optarg) ?
				  atoi(optarg) : RBLK_TMO_OFF; break;
		default: return 2;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: rblk-login [options] HOST PORT VOLUME\n");
		return 2;
	}
	o.host = argv[optind];
	o.port = argv[optind + 1];
	o.volume = argv[optind + 2];
	ret = rblk_queue_open(&o, &q, &vi, err, sizeof(err));
	if (ret) {
		printf("ERR errno=%d %s\n", -ret, err);
		return 1;
	}
	/* RDMA moves data only to and from registered memory (no-op on TCP). */
	ret = rblk_queue_reg_buffer(q, wbuf, sizeof(wbuf));
	if (!ret)
		ret = rblk_queue_reg_buffer(q, rbuf, sizeof(rbuf));
	if (ret) {
		printf("ERR errno=%d registering I/O buffers\n", -ret);
		rblk_queue_close(q);
		return 3;
	}
	printf("OK size=%" PRIu64 " session=%" PRIu64, vi.size, vi.session_id);
	for (unsigned i = 0; i < nio; i++) {
		memset(wbuf, (int)(i + 1), sizeof(wbuf));
		ret = one_io(q, RBLK_OP_WRITE, off, wbuf);
		if (!ret && readback)
			ret = one_io(q, RBLK_OP_READ, off, rbuf);
		if (ret || (readback && memcmp(wbuf, rbuf, sizeof(rbuf)))) {
			printf(" io=FAIL(%s)\n", ret ? strerror(-ret) : "data mismatch");
			rblk_queue_close(q);
			return 3;
		}
	}
	if (nio)
		printf(" io=%u", nio);
	for (unsigned i = 0; i < nflush; i++) {
		ret = one_io(q, RBLK_OP_FLUSH, 0, NULL);
		if (ret) {
			printf(" flush=FAIL(%s)\n", strerror(-ret));
			rblk_queue_close(q);
			return 3;
		}
	}
	if (nflush)
		printf(" flush=%u", nflush);
	fflush(stdout);
	if (hold) {
		struct pollfd p = { .fd = rblk_queue_fd(q), .events = POLLIN };
		struct rblk_queue_status st;
		struct rblk_io *none[1];
		int left = (int)hold * 1000;

		/* The queue fd also wakes for keep-alives: reap (which sends
		 * and checks them) until the time is up, the queue is no
		 * longer live, or SIGUSR1 interrupts the poll. */
		for (;;) {
			int64_t t0 = rblk_now_ms();
			int n = poll(&p, 1, left);

			if (n < 0 || rblk_queue_reap(q, none, 0, 1, 0) < 0)
				break;
			rblk_queue_status(q, &st);
			left -= (int)(rblk_now_ms() - t0);
			if (st.state != RBLK_QUEUE_LIVE || left <= 0)
				break;
		}
		ret = one_io(q, RBLK_OP_READ, off, rbuf);
		printf(" after-hold=%s", ret ? "ERR" : "ok");
	}
	printf("\n");
	rblk_queue_close(q);
	return ret ? 3 : 0;
}
