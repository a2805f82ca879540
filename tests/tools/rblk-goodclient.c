// SPDX-License-Identifier: MIT
/*
 * A well-behaved client for integration tests, on librblkclient:
 *
 *   rblk-goodclient [options] HOST PORT VOLUME
 *     --seconds N     run for N seconds (default 5)
 *     --region OFF:LEN  bytes of the volume to use (default: first half)
 *     --depth N       queue depth (default 16)
 *     --hammer        keep I/O in flight until the target goes away; a
 *                     lost connection is then the expected end (SIGTERM test),
 *                     so the queue does not reconnect (ctrl_loss_tmo 0)
 *     --check-only    read the region and verify the pattern of --pass P
 *     --pass P        pattern generation to write/check (default: 1, 2, ...)
 *     --wait-size B   first wait (idle, up to 10 s) until the target says
 *                     the volume has B bytes (volume.resize); --region
 *                     may then lie beyond the size LOGIN granted
 *   SIGTERM/SIGINT end the run after the current pass (with the verdict).
 *
 * Each pass writes the whole region in 64 KiB chunks (random order, up to
 * depth in flight) with a pattern derived from (pass, offset), flushes,
 * then reads it back and compares.  Exit 0 when every completed I/O had
 * the status it should and all data compared equal; 1 otherwise.  Prints
 * one summary line.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "rblk_client.h"

#define CHUNK	(64u << 10)

/* SIGTERM/SIGINT: finish the current pass, report, exit. */
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void pattern(uint8_t *p, size_t n, uint64_t pass, uint64_t off)
{
	uint64_t x = pass * 0x9e3779b97f4a7c15ull ^ off;

	for (size_t i = 0; i < n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

struct stats {
	uint64_t ok, shutting_down, io_err, other, mismatches, bytes;
};

struct slot {
	struct rblk_io io;
	uint8_t *buf;
	int busy;
};

/* Runs one phase (write or read+verify) over the region.  Returns 0, or
 * -errno when the connection went away. */
static int phase(struct rblk_queue *q, struct slot *slots, unsigned depth,
		 uint64_t base, uint64_t len, uint64_t pass, int write,
		 struct stats *st, uint8_t *expect)
{
	uint64_t nchunks = len / CHUNK, next = 0, done = 0;
	uint64_t *order = malloc(nchunks * sizeof(*order));
	struct rblk_io *comp[64];
	int ret = 0;

	if (!order)
		return -ENOMEM;
	for (uint64_t i = 0; i < nchunks; i++)
		order[i] = i;
	for (uint64_t i = nchunks; i > 1; i--) {
		uint64_t j = (uint64_t)rand() % i, t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	while (done < nchunks) {
		for (unsigned s = 0; s < depth && next < nchunks; s++) {
			struct slot *sl = &slots[s];

			if (sl->busy)
				continue;
			memset(&sl->io, 0, sizeof(sl->io));
			sl->io.opcode = write ? RBLK_OP_WRITE : RBLK_OP_READ;
			sl->io.offset = base + order[next] * CHUNK;
			sl->io.length = CHUNK;
			sl->io.buf = sl->buf;
			sl->io.priv = sl;
			if (write)
				pattern(sl->buf, CHUNK, pass, sl->io.offset);
			else
				memset(sl->buf, 0xee, CHUNK);
			ret = rblk_queue_submit(q, &sl->io);
			if (ret == -EBUSY)
				break;
			if (ret)
				goto out;
			sl->busy = 1;
			next++;
		}
		ret = rblk_queue_reap(q, comp, 1, 64, 10000);
		if (ret < 0)
			goto out;
		if (ret == 0) {
			fprintf(stderr, "goodclient: no completion in 10 s\n");
			ret = -ETIMEDOUT;
			goto out;
		}
		for (int i = 0; i < ret; i++) {
			struct slot *sl = comp[i]->priv;

			sl->busy = 0;
			done++;
			switch (comp[i]->status) {
			case RBLK_S_OK:
				st->ok++;
				st->bytes += CHUNK;
				break;
			case RBLK_S_SHUTTING_DOWN:
				st->shutting_down++;
				continue;
			case RBLK_S_IO_ERROR:
				st->io_err++;
				continue;
			default:
				st->other++;
				fprintf(stderr, "goodclient: %s at %" PRIu64 ": status %s\n",
					write ? "WRITE" : "READ", comp[i]->offset,
					rblk_status_str(comp[i]->status));
				continue;
			}
			if (!write) {
				pattern(expect, CHUNK, pass, comp[i]->offset);
				if (memcmp(expect, sl->buf, CHUNK)) {
					st->mismatches++;
					fprintf(stderr, "goodclient: data mismatch at offset %" PRIu64 " (pass %" PRIu64 ")\n",
						comp[i]->offset, pass);
				}
			}
		}
		ret = 0;
	}
out:
	free(order);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "region", required_argument, NULL, 'r' },
		{ "depth", required_argument, NULL, 'd' },
		{ "hammer", no_argument, NULL, 'H' },
		{ "check-only", no_argument, NULL, 'c' },
		{ "pass", required_argument, NULL, 'p' },
		{ "wait-size", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	struct rblk_client_opts co = { .queue_depth = 16, .timeout_ms = 5000 };
	struct rblk_volume_info info;
	struct rblk_queue *q = NULL;
	struct stats st = { 0 };
	struct slot *slots;
	uint64_t off = 0, len = 0, pass = 0, passes = 0, t_end, want_size = 0;
	unsigned seconds = 5;
	int hammer = 0, check_only = 0, opt, ret, rc;
	uint8_t *expect;
	char err[256];

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's': seconds = atoi(optarg); break;
		case 'r':
			if (sscanf(optarg, "%" SCNu64 ":%" SCNu64, &off, &len) != 2) {
				fprintf(stderr, "--region OFF:LEN\n");
				return 2;
			}
			break;
		case 'd': co.queue_depth = atoi(optarg); break;
		case 'H':
			hammer = 1;
			co.ctrl_loss_tmo_ms = RBLK_TMO_NOW;
			break;
		case 'c': check_only = 1; break;
		case 'p': pass = strtoull(optarg, NULL, 0); break;
		case 'w': want_size = strtoull(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: rblk-goodclient [--seconds N] [--region OFF:LEN] [--depth N] [--hammer] [--check-only --pass P] [--wait-size B] HOST PORT VOLUME\n");
		return 2;
	}
	co.host = argv[optind];
	co.port = argv[optind + 1];
	co.volume = argv[optind + 2];
	co.hostname = "goodclient";
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	ret = rblk_queue_open(&co, &q, &info, err, sizeof(err));
	if (ret) {
		printf("goodclient: login failed: %s\n", err);
		return 1;
	}
	if (want_size) {
		struct rblk_queue_status qs;
		int64_t t0 = rblk_now_ms();

		do {
			struct pollfd pfd = { .fd = rblk_queue_fd(q), .events = POLLIN };

			/* The queue's fd wakes us for its PDUs and timers. */
			poll(&pfd, 1, 200);
			rblk_queue_reap(q, (struct rblk_io *[1]){ 0 }, 0, 1, 0);
			rblk_queue_status(q, &qs);
		} while (qs.size < want_size && rblk_now_ms() - t0 < 10000);
		printf("goodclient: the volume is %" PRIu64 " bytes after %lld ms (LOGIN said %" PRIu64 ")\n",
		       qs.size, (long long)(rblk_now_ms() - t0), info.size);
		if (qs.size < want_size) {
			rblk_queue_close(q);
			return 1;
		}
		info.size = qs.size;
	}
	if (!len)
		len = info.size / 2;
	len -= len % CHUNK;
	if (!len || off % info.block_size || off + len > info.size) {
		printf("goodclient: bad region %" PRIu64 ":%" PRIu64 " for a %" PRIu64 "-byte volume\n",
		       off, len, info.size);
		rblk_queue_close(q);
		return 2;
	}
	slots = calloc(info.queue_depth, sizeof(*slots));
	expect = malloc(CHUNK);
	for (unsigned i = 0; i < info.queue_depth; i++)
		slots[i].buf = aligned_alloc(4096, CHUNK);
	t_end = (uint64_t)rblk_now_ms() + seconds * 1000ull;
	ret = 0;
	if (check_only) {
		ret = phase(q, slots, info.queue_depth, off, len, pass, 0, &st, expect);
		passes = 1;
	} else {
		do {
			uint64_t p = pass ? pass : passes + 1;

			ret = phase(q, slots, info.queue_depth, off, len, p, 1, &st, expect);
			if (!ret)
				ret = phase(q, slots, info.queue_depth, off, len, p, 0, &st, expect);
			if (ret)
				break;
			passes++;
		} while (!stop && ((uint64_t)rblk_now_ms() < t_end || hammer));
	}
	if (hammer) {
		/* The end we expect: the target stopped and closed us.  I/O
		 * that completed must be OK or SHUTTING_DOWN (or lost with
		 * the connection: IO_ERROR from the library). */
		rc = (st.other || st.mismatches || ret == 0) ? 1 : 0;
	} else {
		rc = (ret || st.other || st.mismatches || st.shutting_down ||
		      st.io_err) ? 1 : 0;
	}
	printf("goodclient: %s: %" PRIu64 " passes, %" PRIu64 " ok, %" PRIu64 " shutting_down, %" PRIu64 " io_error, %" PRIu64 " other, %" PRIu64 " mismatches, %" PRIu64 " MiB, end: %s\n",
	       rc ? "FAIL" : "PASS", passes, st.ok, st.shutting_down, st.io_err,
	       st.other, st.mismatches, st.bytes >> 20,
	       ret ? strerror(-ret) : "done");
	/* Close first: it completes I/Os still outstanding in slots. */
	rblk_queue_close(q);
	for (unsigned i = 0; i < info.queue_depth; i++)
		free(slots[i].buf);
	free(slots);
	free(expect);
	return rc;
}
