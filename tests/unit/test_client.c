// SPDX-License-Identifier: MIT
/*
 * Client library over TCP against a scripted in-process target (a thread on
 * loopback): login, tags and depth, data round trips, out-of-order and
 * batched responses, the rule that anything malformed from the target
 * fails every outstanding I/O and kills the queue, and mutual
 * authentication: a target that cannot prove the secret is not used.
 * Queues here are opened with ctrl_loss_tmo "now" (no reconnect), so a
 * hang-up fails I/O at once; test_reconnect.c covers what happens
 * otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "auth.h"
#include "helpers.h"
#include "rblk_client.h"
#include "fake_wire.h"
#include "log.h"

#define VOL_SIZE	(8u << 20)
#define DEPTH		8

enum misbehave {
	MB_NONE,
	MB_BAD_TAG,		/* answer a READ on a tag that is not in flight */
	MB_SHORT_READ,		/* READ data shorter than asked */
	MB_BAD_VERSION,		/* response header with version 9 */
	MB_CLOSE,		/* hang up instead of answering a READ */
	MB_SILENT,		/* never answer */
	MB_DATA_ON_WRITE,	/* data bytes after a WRITE response */
	MB_HUGE_LENGTH,		/* header length far above max_io */
	MB_MUTE_LOGIN,		/* accept, read LOGIN, never answer */
	MB_TAG_NONE,		/* a connection error (tag NONE) instead of a READ answer */
	MB_AUTH_GOOD,		/* challenge, check MAC_I, answer the right MAC_T */
	MB_AUTH_BAD_PROOF,	/* ... answer a MAC_T with one bit flipped */
	MB_AUTH_NO_PROOF,	/* ... answer OK without any MAC_T */
};

static const char fake_key[] = "0123456789abcdef0123456789abcdef";

struct fake {
	int lfd;
	char port[16];
	pthread_t thr;
	enum misbehave mb;
	unsigned batch;		/* hold this many commands, answer in reverse */
	uint16_t grant;		/* depth granted */
	uint8_t *vol;
	uint8_t nonce[RBLK_NONCE_LEN];	/* the challenge sent (MB_AUTH_*) */
	atomic_uint ncmds;		/* commands received */
	uint16_t order[64];		/* their tags, in arrival order */
};

/* The auth part of the fake's LOGIN answer (MB_AUTH_*). */
static void fake_auth(struct fake *f, const struct rblk_login *l,
		      struct rblk_login_rsp *r)
{
	struct rblk_secret key = { .len = sizeof(fake_key) - 1 };

	memcpy(key.key, fake_key, key.len);
	if (!l->has_mac) {
		assert_int_equal(rblk_auth_nonce(f->nonce), 0);
		memcpy(r->auth, f->nonce, RBLK_NONCE_LEN);
		r->status = RBLK_S_AUTH_REQUIRED;
		return;
	}
	if (rblk_auth_verify(&key, RBLK_AUTH_INITIATOR, f->nonce, l->ini_nonce,
			     l->volume, l->host, l->auth_mac)) {
		r->status = RBLK_S_AUTH_FAILED;
		return;
	}
	if (f->mb == MB_AUTH_NO_PROOF)
		return;
	rblk_auth_mac(&key, RBLK_AUTH_TARGET, f->nonce, l->ini_nonce,
		      l->volume, l->host, r->auth);
	if (f->mb == MB_AUTH_BAD_PROOF)
		r->auth[7] ^= 0x10;
}

struct held {
	struct rblk_cmd cmd;
	uint8_t *data;
};

/* Answers one command the honest way (or not, per f->mb). */
static int answer(struct fake *f, int c, struct held *h)
{
	struct rblk_rsp r = { .tag = h->cmd.tag, .status = RBLK_S_OK };
	uint8_t out[sizeof(struct rblk_wire_rsp)];
	uint32_t dl = 0;

	switch (h->cmd.opcode) {
	case RBLK_OP_READ:
		dl = h->cmd.length;
		r.value = dl;
		if (f->mb == MB_BAD_TAG)
			r.tag += 100;
		if (f->mb == MB_SHORT_READ)
			r.value = dl = dl / 2;
		if (f->mb == MB_CLOSE)
			return -1;
		if (f->mb == MB_TAG_NONE) {
			r.tag = RBLK_TAG_NONE;
			r.status = RBLK_S_TOO_LARGE;
			r.value = dl = 0;
		}
		break;
	case RBLK_OP_WRITE:
		memcpy(f->vol + h->cmd.offset, h->data, h->cmd.length);
		r.value = h->cmd.length;
		break;
	default:
		break;
	}
	if (f->mb == MB_DATA_ON_WRITE && h->cmd.opcode == RBLK_OP_WRITE) {
		/* A well-formed PDU (value = data bytes), wrong for a WRITE. */
		r.value = 4;
		rblk_encode_rsp(out, &r, 4);
		return wfull(c, out, sizeof(out)) || wfull(c, "junk", 4) ? -1 : 0;
	}
	rblk_encode_rsp(out, &r, dl);
	if (f->mb == MB_BAD_VERSION)
		out[1] = 9;
	if (f->mb == MB_HUGE_LENGTH) {
		uint32_t len = htole32(64u << 20);

		memcpy(out + 4, &len, 4);
	}
	if (wfull(c, out, sizeof(out)))
		return -1;
	if (dl)
		return wfull(c, f->vol + h->cmd.offset, dl);
	return 0;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	static uint8_t buf[RBLK_MAX_PDU];
	struct held held[DEPTH];
	unsigned nheld = 0;
	uint32_t len;
	uint8_t type;
	int c;

	c = accept(f->lfd, NULL, NULL);
	if (c < 0)
		return NULL;
	for (;;) {
		if (read_pdu(c, buf, &type, &len))
			break;
		if (type == RBLK_PDU_LOGIN) {
			struct rblk_login l;
			struct rblk_login_rsp r = {
				.queue_depth = f->grant, .size = VOL_SIZE,
				.block_size = 512, .max_io = 1u << 20,
				.inline_size = 4096, .max_sge = 1, .session_id = 42,
				.vol_flags = RBLK_VOL_F_FLUSH | RBLK_VOL_F_DISCARD,
				.max_discard = 1u << 30,
			};

			if (rblk_decode_login(buf, len, &l) != RBLK_S_OK)
				break;
			if (f->mb == MB_MUTE_LOGIN)
				continue;
			if (strcmp(l.volume, "vol0"))
				r.status = RBLK_S_NO_SUCH_VOLUME;
			else if (f->mb >= MB_AUTH_GOOD)
				fake_auth(f, &l, &r);
			if (l.queue_depth < r.queue_depth)
				r.queue_depth = l.queue_depth;
			wfull(c, buf, rblk_encode_login_rsp(buf, &r));
			continue;
		}
		if (type == RBLK_PDU_KEEPALIVE) {
			uint16_t st;
			uint64_t seq;

			if (rblk_decode_keepalive(buf, len, type, &st, &seq, NULL) != RBLK_S_OK)
				break;
			wfull(c, buf, rblk_encode_keepalive(buf, RBLK_PDU_KEEPALIVE_RSP,
							    RBLK_S_OK, seq, 0));
			continue;
		}
		if (type == RBLK_PDU_DISCOVER) {
			struct rblk_discover_entry e = { .size = VOL_SIZE, .block_size = 512 };
			size_t n = rblk_encode_discover_rsp(buf, RBLK_S_OK, 2, 0);

			strcpy(e.volume, "vol0");
			n += rblk_encode_discover_entry(buf + n, &e);
			strcpy(e.volume, "vol1");
			n += rblk_encode_discover_entry(buf + n, &e);
			wfull(c, buf, n);
			continue;
		}
		{
			struct rblk_cmd_limits lim = { DEPTH, 1u << 20, 4096, 1, 1, 0, 0 };
			struct rblk_sge sgl[1];
			struct held *h = &held[nheld++];

			if (type != RBLK_PDU_CMD ||
			    rblk_decode_cmd(buf, len, &lim, &h->cmd, sgl) != RBLK_S_OK)
				break;
			h->data = malloc(h->cmd.inline_len + 1);
			memcpy(h->data, buf + sizeof(struct rblk_wire_cmd), h->cmd.inline_len);
			if (f->ncmds < 64)
				f->order[f->ncmds] = h->cmd.tag;
			f->ncmds++;
		}
		if (f->mb == MB_SILENT) {
			free(held[--nheld].data);
			continue;
		}
		if (nheld < (f->batch ? f->batch : 1))
			continue;
		/* Reverse order: the client must not assume FIFO answers. */
		while (nheld) {
			struct held *h = &held[--nheld];
			int ret = answer(f, c, h);

			free(h->data);
			if (ret) {
				while (nheld)
					free(held[--nheld].data);
				goto out;
			}
		}
	}
out:
	while (nheld)
		free(held[--nheld].data);
	close(c);
	return NULL;
}

static struct fake *fake_start(enum misbehave mb, unsigned batch, uint16_t grant)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);

	assert_non_null(f);
	f->mb = mb;
	f->batch = batch;
	f->grant = grant;
	f->vol = calloc(1, VOL_SIZE);
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(f->lfd >= 0);
	{
		/* Small buffers (inherited by the accepted socket): a 1 MiB
		 * answer blocks the fake until the client reads it. */
		int sz = 64 << 10;

		setsockopt(f->lfd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(f->lfd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &alen), 0);
	snprintf(f->port, sizeof(f->port), "%u", ntohs(a.sin_port));
	assert_int_equal(pthread_create(&f->thr, NULL, fake_main, f), 0);
	return f;
}

static void fake_stop(struct fake *f)
{
	/* Unblocks accept() if the test never connected. */
	shutdown(f->lfd, SHUT_RDWR);
	pthread_join(f->thr, NULL);
	close(f->lfd);
	free(f->vol);
	free(f);
}

static struct rblk_queue *open_q(struct fake *f, unsigned depth,
				 struct rblk_volume_info *info)
{
	struct rblk_client_opts o = {
		.host = "127.0.0.1", .port = f->port, .volume = "vol0",
		.hostname = "unit-test", .queue_depth = depth, .timeout_ms = 2000,
		.ctrl_loss_tmo_ms = RBLK_TMO_NOW,
	};
	struct rblk_queue *q = NULL;
	char err[256];

	assert_int_equal(rblk_queue_open(&o, &q, info, err, sizeof(err)), 0);
	return q;
}

static void test_login_geometry(void **state)
{
	struct fake *f = fake_start(MB_NONE, 0, 4);
	struct rblk_volume_info info;
	struct rblk_queue *q = open_q(f, DEPTH, &info);

	assert_int_equal(info.size, VOL_SIZE);
	assert_int_equal(info.block_size, 512);
	assert_int_equal(info.queue_depth, 4);	/* target lowered it */
	assert_int_equal(info.session_id, 42);
	assert_true(rblk_queue_fd(q) >= 0);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_login_refused(void **state)
{
	struct fake *f = fake_start(MB_NONE, 0, DEPTH);
	struct rblk_client_opts o = {
		.host = "127.0.0.1", .port = f->port, .volume = "nope",
		.hostname = "unit-test", .timeout_ms = 2000,
	};
	struct rblk_queue *q = NULL;
	char err[256];

	assert_int_equal(rblk_queue_open(&o, &q, NULL, err, sizeof(err)), -ENOENT);
	assert_null(q);
	assert_non_null(strstr(err, "no such volume"));
	fake_stop(f);
}

static void test_bad_options(void **state)
{
	struct rblk_client_opts o = {
		.host = "127.0.0.1", .port = "1", .volume = "bad/name",
		.hostname = "unit-test",
	};
	struct rblk_queue *q = NULL;
	char err[256];

	assert_int_equal(rblk_queue_open(&o, &q, NULL, err, sizeof(err)), -EINVAL);
	o.volume = "vol0";
	o.transport = "carrier-pigeon";
	assert_int_equal(rblk_queue_open(&o, &q, NULL, err, sizeof(err)),
			 -EPROTONOSUPPORT);
	o.transport = NULL;
	o.hostname = "bad host";
	assert_int_equal(rblk_queue_open(&o, &q, NULL, err, sizeof(err)), -EINVAL);
}

static void test_connect_refused(void **state)
{
	struct fake *f = fake_start(MB_NONE, 0, DEPTH);
	struct rblk_client_opts o = {
		.host = "127.0.0.1", .volume = "vol0", .hostname = "unit-test",
		.timeout_ms = 2000,
	};
	struct rblk_queue *q = NULL;
	char port[16], err[256];

	/* The fake's port, once it stops listening, refuses. */
	strcpy(port, f->port);
	fake_stop(f);
	o.port = port;
	assert_int_equal(rblk_queue_open(&o, &q, NULL, err, sizeof(err)),
			 -ECONNREFUSED);
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + seed);
}

/* Reaps until want I/Os came back, each within timeout_ms, every one OK. */
static void reap_all_ok(struct rblk_queue *q, unsigned want, int timeout_ms)
{
	struct rblk_io *done[DEPTH];
	unsigned got = 0;

	while (got < want) {
		int n = rblk_queue_reap(q, done, 1, DEPTH, timeout_ms);

		assert_true(n > 0);
		for (int i = 0; i < n; i++)
			assert_int_equal(done[i]->status, RBLK_S_OK);
		got += (unsigned)n;
	}
}

/* DEPTH writes answered in reverse order, then reads of each back. */
static void test_roundtrip_out_of_order(void **state)
{
	struct fake *f = fake_start(MB_NONE, DEPTH, DEPTH);
	struct rblk_queue *q = open_q(f, DEPTH, NULL);
	static uint8_t wbuf[DEPTH][8192], rbuf[DEPTH][8192];
	struct rblk_io io[DEPTH], extra = { .opcode = RBLK_OP_FLUSH };
	struct rblk_io *done[DEPTH];
	unsigned got = 0;

	for (unsigned i = 0; i < DEPTH; i++) {
		fill(wbuf[i], sizeof(wbuf[i]), i);
		io[i] = (struct rblk_io) { .opcode = RBLK_OP_WRITE, .offset = i * 8192,
					   .length = 8192, .buf = wbuf[i] };
		assert_int_equal(rblk_queue_submit(q, &io[i]), 0);
	}
	assert_int_equal(rblk_queue_inflight(q), DEPTH);
	assert_int_equal(rblk_queue_submit(q, &extra), -EBUSY);
	reap_all_ok(q, DEPTH, 2000);
	assert_memory_equal(f->vol + 3 * 8192, wbuf[3], 8192);

	for (unsigned i = 0; i < DEPTH; i++) {
		io[i] = (struct rblk_io) { .opcode = RBLK_OP_READ, .offset = i * 8192,
					   .length = 8192, .buf = rbuf[i] };
		assert_int_equal(rblk_queue_submit(q, &io[i]), 0);
	}
	for (got = 0; got < DEPTH;) {
		int n = rblk_queue_reap(q, done, DEPTH, DEPTH, 2000);

		assert_true(n > 0);
		got += (unsigned)n;
	}
	for (unsigned i = 0; i < DEPTH; i++)
		assert_memory_equal(rbuf[i], wbuf[i], 8192);
	assert_int_equal(rblk_queue_inflight(q), 0);
	rblk_queue_close(q);
	fake_stop(f);
}

/* 1 MiB READ (received straight into the buffer) between small ones. */
static void test_big_read(void **state)
{
	struct fake *f = fake_start(MB_NONE, 3, DEPTH);
	struct rblk_queue *q = open_q(f, DEPTH, NULL);
	uint8_t *big = malloc(1u << 20), small[2][512];
	struct rblk_io io[3] = {
		{ .opcode = RBLK_OP_READ, .offset = 0, .length = 512, .buf = small[0] },
		{ .opcode = RBLK_OP_READ, .offset = 1u << 20, .length = 1u << 20, .buf = big },
		{ .opcode = RBLK_OP_READ, .offset = 4096, .length = 512, .buf = small[1] },
	};
	struct rblk_io *done[3];
	int n = 0;

	fill(f->vol, VOL_SIZE, 5);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rblk_queue_submit(q, &io[i]), 0);
	while (n < 3) {
		int r = rblk_queue_reap(q, done, 1, 3, 2000);

		assert_true(r > 0);
		n += r;
	}
	assert_memory_equal(big, f->vol + (1u << 20), 1u << 20);
	assert_memory_equal(small[0], f->vol, 512);
	assert_memory_equal(small[1], f->vol + 4096, 512);
	rblk_queue_close(q);
	fake_stop(f);
	free(big);
}

/*
 * Full duplex without reaping: 1 MiB READ answers fill our receive buffer
 * while we send 1 MiB WRITEs; the fake target (like a target out of
 * buffers) stops reading until its answer is taken.  Submit must drain
 * answers while it waits to write, or both sides wait for each other.
 */
static void test_submit_drains_responses(void **state)
{
	struct fake *f = fake_start(MB_NONE, 0, DEPTH);
	struct rblk_queue *q = open_q(f, DEPTH, NULL);
	const uint32_t mib = 1u << 20;
	uint8_t *buf = malloc((size_t)DEPTH * mib);
	struct rblk_io io[DEPTH];
	struct timespec a, b;

	assert_non_null(buf);
	/* Small socket buffers on our side too, so 1 MiB never just fits. */
	{
		int sz = 64 << 10, fd = rblk_queue_conn_fd(q);

		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	fill(f->vol, VOL_SIZE, 9);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned i = 0; i < DEPTH; i++) {
		int rd = !(i & 1);

		if (!rd)
			fill(buf + (size_t)i * mib, mib, i);
		io[i] = (struct rblk_io) { .opcode = rd ? RBLK_OP_READ : RBLK_OP_WRITE,
					   .offset = (uint64_t)(i / 2) * mib +
						     (rd ? 0 : 4ull * mib),
					   .length = mib, .buf = buf + (size_t)i * mib };
		assert_int_equal(rblk_queue_submit(q, &io[i]), 0);
	}
	reap_all_ok(q, DEPTH, 5000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(b.tv_sec - a.tv_sec < 10);
	for (unsigned i = 0; i < DEPTH; i += 2)
		assert_memory_equal(buf + (size_t)i * mib, f->vol + (size_t)(i / 2) * mib, mib);
	for (unsigned i = 1; i < DEPTH; i += 2)
		assert_memory_equal(f->vol + (4 + (size_t)(i / 2)) * mib,
				    buf + (size_t)i * mib, mib);
	rblk_queue_close(q);
	fake_stop(f);
	free(buf);
}

/*
 * rblk_queue_submit_more holds commands until rblk_queue_flush, which sends
 * them all (TCP: one sendmsg), in submit order, WRITE data included.
 */
static void test_submit_more_waits_for_flush(void **state)
{
	struct fake *f = fake_start(MB_NONE, DEPTH, DEPTH);
	struct rblk_queue *q = open_q(f, DEPTH, NULL);
	static uint8_t wbuf[DEPTH][4096];
	struct rblk_io io[DEPTH];
	unsigned tag[DEPTH];

	for (unsigned i = 0; i < DEPTH; i++) {
		fill(wbuf[i], sizeof(wbuf[i]), 40 + i);
		io[i] = (struct rblk_io) { .opcode = RBLK_OP_WRITE, .offset = i * 8192,
					   .length = 4096, .buf = wbuf[i] };
		assert_int_equal(rblk_queue_submit_more(q, &io[i]), 0);
		tag[i] = io[i].tag;
	}
	usleep(200 * 1000);
	assert_int_equal(f->ncmds, 0);
	rblk_queue_flush(q);
	reap_all_ok(q, DEPTH, 2000);
	assert_int_equal(f->ncmds, DEPTH);
	for (unsigned i = 0; i < DEPTH; i++) {
		assert_int_equal(f->order[i], tag[i]);
		assert_memory_equal(f->vol + i * 8192, wbuf[i], 4096);
	}
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_invalid_io(void **state)
{
	struct fake *f = fake_start(MB_NONE, 0, DEPTH);
	struct rblk_queue *q = open_q(f, DEPTH, NULL);
	uint8_t b[512];
	struct rblk_io bad[] = {
		{ .opcode = 77 },
		{ .opcode = RBLK_OP_READ, .length = 512 },		/* no buffer */
		{ .opcode = RBLK_OP_READ, .length = 2u << 20, .buf = b },	/* > max_io */
		{ .opcode = RBLK_OP_FLUSH, .length = 512 },
		{ .opcode = RBLK_OP_READ, .length = 512, .buf = b, .flags = RBLK_CMD_F_FUA },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(rblk_queue_submit(q, &bad[i]), -EINVAL);
	assert_int_equal(rblk_queue_inflight(q), 0);
	rblk_queue_close(q);
	fake_stop(f);
}

/* Sends a WRITE and two READs, expects all three back failed, then a dead
 * queue: reap says -ENOTCONN and submit refuses. */
static void expect_queue_killed(enum misbehave mb)
{
	struct fake *f = fake_start(mb, 3, DEPTH);
	struct rblk_queue *q = open_q(f, DEPTH, NULL);
	static uint8_t b[3][4096];
	/* Answered in reverse: the last READ first, then the WRITE. */
	struct rblk_io io[3] = {
		{ .opcode = RBLK_OP_READ, .offset = 0, .length = 4096, .buf = b[1] },
		{ .opcode = RBLK_OP_WRITE, .offset = 0, .length = 4096, .buf = b[0] },
		{ .opcode = RBLK_OP_READ, .offset = 8192, .length = 4096, .buf = b[2] },
	};
	struct rblk_io *done[3];
	unsigned failed = 0, got = 0;

	for (int i = 0; i < 3; i++)
		assert_int_equal(rblk_queue_submit(q, &io[i]), 0);
	while (got < 3) {
		int n = rblk_queue_reap(q, done, 3 - got, 3, 2000);

		assert_true(n > 0);
		for (int i = 0; i < n; i++)
			failed += done[i]->status == RBLK_S_IO_ERROR;
		got += (unsigned)n;
	}
	/* At most the first answer (a READ, when the WRITE misbehaves) is good. */
	assert_true(failed >= 2);
	/* Nothing left to hand back: the queue reports why it died. */
	assert_true(rblk_queue_reap(q, done, 0, 3, 0) < 0);
	assert_true(rblk_queue_reap(q, done, 1, 3, 100) < 0);
	assert_int_equal(rblk_queue_submit(q, &io[0]), -ENOTCONN);
	rblk_queue_close(q);
	fake_stop(f);
}

/* A RSP for RBLK_TAG_NONE: the queue dies with the errno of that status. */
static void test_tag_none(void **state)
{
	struct fake *f = fake_start(MB_TAG_NONE, 1, DEPTH);
	struct rblk_queue *q = open_q(f, DEPTH, NULL);
	static uint8_t b[4096];
	struct rblk_io io = { .opcode = RBLK_OP_READ, .length = 4096, .buf = b };
	struct rblk_io *done[1];

	assert_int_equal(rblk_queue_submit(q, &io), 0);
	assert_int_equal(rblk_queue_reap(q, done, 1, 1, 2000), 1);
	assert_int_equal(done[0]->status, RBLK_S_IO_ERROR);
	assert_int_equal(rblk_queue_reap(q, done, 0, 1, 0), -E2BIG);
	assert_int_equal(rblk_queue_submit(q, &io), -ENOTCONN);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_bad_tag(void **state)		{ expect_queue_killed(MB_BAD_TAG); }
static void test_short_read(void **state)	{ expect_queue_killed(MB_SHORT_READ); }
static void test_bad_version(void **state)	{ expect_queue_killed(MB_BAD_VERSION); }
static void test_peer_close(void **state)	{ expect_queue_killed(MB_CLOSE); }
static void test_data_on_write(void **state)	{ expect_queue_killed(MB_DATA_ON_WRITE); }
static void test_huge_length(void **state)	{ expect_queue_killed(MB_HUGE_LENGTH); }

static void test_reap_timeout(void **state)
{
	struct fake *f = fake_start(MB_SILENT, 0, DEPTH);
	struct rblk_queue *q = open_q(f, DEPTH, NULL);
	struct rblk_io io = { .opcode = RBLK_OP_FLUSH };
	struct rblk_io *done[1];
	struct timespec a, b;
	long ms;

	assert_int_equal(rblk_queue_submit(q, &io), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(rblk_queue_reap(q, done, 1, 1, 200), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	assert_true(ms >= 150 && ms < 2000);
	assert_int_equal(rblk_queue_reap(q, done, 0, 1, 0), 0);
	/* Closing with I/O outstanding marks it failed. */
	rblk_queue_close(q);
	assert_int_equal(io.status, RBLK_S_IO_ERROR);
	fake_stop(f);
}

static void test_login_timeout(void **state)
{
	struct fake *f = fake_start(MB_MUTE_LOGIN, 0, DEPTH);
	struct rblk_client_opts o = {
		.host = "127.0.0.1", .port = f->port, .volume = "vol0",
		.hostname = "unit-test", .timeout_ms = 300,
	};
	struct rblk_queue *q = NULL;
	struct timespec a, b;
	char err[256];
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(rblk_queue_open(&o, &q, NULL, err, sizeof(err)), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	assert_true(ms >= 250 && ms < 3000);
	assert_non_null(strstr(err, "LOGIN_RSP"));
	assert_null(q);
	fake_stop(f);
}

/* A 0600 copy of fake_key for the client. */
static const char *key_file(void)
{
	static char path[64];
	FILE *k;

	snprintf(path, sizeof(path), "/tmp/rblk-client-key.%d", (int)getpid());
	k = fopen(path, "w");
	assert_non_null(k);
	fputs(fake_key, k);
	fclose(k);
	assert_int_equal(chmod(path, 0600), 0);
	return path;
}

/* Opens vol0 with a secret against a fake in mode mb; returns the error. */
static int open_with_secret(enum misbehave mb, char *err, size_t errlen)
{
	struct fake *f = fake_start(mb, 0, DEPTH);
	struct rblk_client_opts o = {
		.host = "127.0.0.1", .port = f->port, .volume = "vol0",
		.hostname = "unit-test", .timeout_ms = 2000,
		.secret_file = key_file(),
	};
	struct rblk_queue *q = NULL;
	int ret;

	ret = rblk_queue_open(&o, &q, NULL, err, errlen);
	if (!ret) {
		assert_non_null(q);
		rblk_queue_close(q);
	} else {
		assert_null(q);
	}
	unlink(o.secret_file);
	fake_stop(f);
	return ret;
}

static void test_auth_mutual(void **state)
{
	char err[256];

	/* The fake checks our MAC_I and proves itself: a usable session. */
	assert_int_equal(open_with_secret(MB_AUTH_GOOD, err, sizeof(err)), 0);
	/* A wrong target proof: refused before the session is used. */
	assert_int_equal(open_with_secret(MB_AUTH_BAD_PROOF, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "target's proof for volume 'vol0' is wrong"));
	/* OK with no proof at all (a target that skips its half). */
	assert_int_equal(open_with_secret(MB_AUTH_NO_PROOF, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "proof"));
	/* No challenge although we hold a secret: an impostor's cheapest
	 * trick, refused too. */
	assert_int_equal(open_with_secret(MB_NONE, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "without authenticating itself"));
}

/* --target / target= as users write a path. */
static void test_path_parse(void **state)
{
	struct rblk_path_spec p;
	char err[160];

	assert_int_equal(rblk_path_parse("10.0.0.1", &p, err, sizeof(err)), 0);
	assert_string_equal(p.transport, "");
	assert_string_equal(p.host, "10.0.0.1");
	assert_string_equal(p.port, "");
	assert_int_equal(rblk_path_parse("rdma:node-a:4421", &p, err, sizeof(err)), 0);
	assert_string_equal(p.transport, "rdma");
	assert_string_equal(p.host, "node-a");
	assert_string_equal(p.port, "4421");
	assert_int_equal(rblk_path_parse("tcp:[fe80::1]:4420", &p, err, sizeof(err)), 0);
	assert_string_equal(p.transport, "tcp");
	assert_string_equal(p.host, "fe80::1");
	assert_string_equal(p.port, "4420");
	/* a bare IPv6 address is a host, not a transport */
	assert_int_equal(rblk_path_parse("fe80::2", &p, err, sizeof(err)), 0);
	assert_string_equal(p.transport, "");
	assert_string_equal(p.host, "fe80::2");
	assert_int_equal(rblk_path_parse("rdma:", &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "[tcp:|rdma:]HOST[:PORT]"));
	assert_int_equal(rblk_path_parse("tcp:h:99999", &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(rblk_path_parse("", &p, err, sizeof(err)), -EINVAL);
}

static void test_discover(void **state)
{
	struct fake *f = fake_start(MB_NONE, 0, DEPTH);
	struct rblk_client_opts o = {
		.host = "127.0.0.1", .port = f->port, .hostname = "unit-test",
		.timeout_ms = 2000,
	};
	struct rblk_discover_entry e[4];
	char err[256];

	assert_int_equal(rblk_discover(&o, e, 4, err, sizeof(err)), 2);
	assert_string_equal(e[0].volume, "vol0");
	assert_string_equal(e[1].volume, "vol1");
	assert_int_equal(e[1].size, VOL_SIZE);
	fake_stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_login_geometry),
		cmocka_unit_test(test_login_refused),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_connect_refused),
		cmocka_unit_test(test_roundtrip_out_of_order),
		cmocka_unit_test(test_big_read),
		cmocka_unit_test(test_submit_drains_responses),
		cmocka_unit_test(test_submit_more_waits_for_flush),
		cmocka_unit_test(test_invalid_io),
		cmocka_unit_test(test_bad_tag),
		cmocka_unit_test(test_tag_none),
		cmocka_unit_test(test_short_read),
		cmocka_unit_test(test_bad_version),
		cmocka_unit_test(test_peer_close),
		cmocka_unit_test(test_data_on_write),
		cmocka_unit_test(test_huge_length),
		cmocka_unit_test(test_reap_timeout),
		cmocka_unit_test(test_login_timeout),
		cmocka_unit_test(test_discover),
		cmocka_unit_test(test_path_parse),
		cmocka_unit_test(test_auth_mutual),
	};

	/* Keep expected protocol errors out of the test output. */
	rblk_log_level = RBLK_LOG_ERR - 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
