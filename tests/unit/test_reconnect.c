// SPDX-License-Identifier: MIT
/*
 * The client queue's fault handling (initiator/client/reconnect.c) against
 * a scripted target on loopback that can hang up, stop listening, go mute,
 * ignore commands or answer SHUTTING_DOWN, and that logs every command it
 * receives with the connection it came on:
 *  - held commands (sent when the connection went, and submitted while
 *    CONNECTING) are sent again in submission order once reconnected;
 *  - SHUTTING_DOWN switches to the fast retry schedule (250 ms, not
 *    reconnect_delay);
 *  - ctrl_loss_tmo fails held I/O and the queue; fast_io_fail_tmo fails
 *    I/O while reconnecting goes on, and a later reconnect works;
 *  - an unanswered keep-alive declares the connection dead; answered ones
 *    keep an idle queue LIVE;
 *  - io_timeout tears the connection down and the command is resent;
 *  - a reconnect refused NO_SUCH_VOLUME, ACCESS_DENIED or AUTH_FAILED is
 *    final: held I/O fails at once and no attempt follows; other
 *    refusals (NO_RESOURCES) are retried;
 *  - a stopping caller (opts.stop) is heard within RBLK_STOP_POLL_MS
 *    while reconnecting, while an attempt waits for LOGIN_RSP and at
 *    open; a live target silent for RBLK_STOP_GRACE_MS is given up on,
 *    and a target that answers is not cut off.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "clock.h"
#include "log.h"
#include "rblk_client.h"
#include "fake_wire.h"

#define VOL_SIZE	(1u << 20)
#define DEPTH		8
#define LOG_MAX		256

enum fmode {
	FM_ANSWER,		/* answer everything */
	FM_SILENT,		/* answer keep-alives, ignore commands */
	FM_MUTE,		/* answer nothing */
	FM_SHUTDOWN,		/* commands and keep-alives: SHUTTING_DOWN */
	FM_SLOW,		/* answer each command 300 ms after it came */
};

struct cmd_log {
	unsigned conn;		/* 1 = first connection */
	uint8_t  op;
	uint64_t off;
};

struct fake {
	pthread_t thr;
	uint16_t port;
	atomic_int listen_on;	/* wanted: listening (else connects are refused) */
	atomic_int mode;
	atomic_uint silent_conns;	/* commands on connections <= this are ignored */
	atomic_int kick;	/* close the current connection */
	atomic_int login_status; /* nonzero: LOGINs are refused with it */
	atomic_int login_mute;	/* LOGINs are never answered */
	atomic_int stop;
	atomic_int listening;	/* what the thread did about listen_on */
	atomic_uint nconn, nka;
	_Atomic int64_t ka_answered;	/* rblk_now_ms() of the last KEEPALIVE_RSP */
	_Atomic uint64_t size;		/* the volume's size KEEPALIVE_RSPs say */
	pthread_mutex_t mu;
	struct cmd_log log[LOG_MAX];
	unsigned nlog;
	uint8_t vol[VOL_SIZE];
};

static int listen_on(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(*port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* One PDU from c; returns -1 when the connection is to be closed. */
static int serve_pdu(struct fake *f, int c, unsigned conn)
{
	static uint8_t buf[RBLK_MAX_PDU];
	uint32_t len;
	uint8_t type;
	int mode = atomic_load(&f->mode);

	if (read_pdu(c, buf, &type, &len))
		return -1;
	if (type == RBLK_PDU_LOGIN) {
		struct rblk_login l;
		struct rblk_login_rsp r = {
			.queue_depth = DEPTH, .size = VOL_SIZE, .block_size = 512,
			.max_io = 1u << 20, .inline_size = 4096, .max_sge = 1,
			.session_id = conn,
		};

		if (rblk_decode_login(buf, len, &l) != RBLK_S_OK)
			return -1;
		if (atomic_load(&f->login_mute))
			return 0;
		if (l.queue_depth < r.queue_depth)
			r.queue_depth = l.queue_depth;
		r.status = (uint16_t)atomic_load(&f->login_status);
		wfull(c, buf, rblk_encode_login_rsp(buf, &r));
		return r.status ? -1 : 0;
	}
	if (type == RBLK_PDU_KEEPALIVE) {
		uint16_t st;
		uint64_t seq;

		if (rblk_decode_keepalive(buf, len, type, &st, &seq, NULL) != RBLK_S_OK)
			return -1;
		atomic_fetch_add(&f->nka, 1);
		if (mode == FM_MUTE)
			return 0;
		/* Before the write: the client cannot have it earlier. */
		atomic_store(&f->ka_answered, rblk_now_ms());
		wfull(c, buf, rblk_encode_keepalive(buf, RBLK_PDU_KEEPALIVE_RSP,
				mode == FM_SHUTDOWN ? RBLK_S_SHUTTING_DOWN : RBLK_S_OK, seq,
				atomic_load(&f->size)));
		return 0;
	}
	if (type == RBLK_PDU_CMD) {
		struct rblk_cmd_limits lim = { DEPTH, 1u << 20, 4096, 1, 1, 0, 0 };
		struct rblk_rsp r = { .status = RBLK_S_OK };
		uint8_t out[sizeof(struct rblk_wire_rsp)];
		struct rblk_sge sgl[1];
		struct rblk_cmd cmd;
		uint32_t dl = 0;

		if (rblk_decode_cmd(buf, len, &lim, &cmd, sgl) != RBLK_S_OK)
			return -1;
		pthread_mutex_lock(&f->mu);
		if (f->nlog < LOG_MAX)
			f->log[f->nlog++] = (struct cmd_log) { conn, cmd.opcode, cmd.offset };
		pthread_mutex_unlock(&f->mu);
		if (mode == FM_SILENT || mode == FM_MUTE ||
		    conn <= atomic_load(&f->silent_conns))
			return 0;
		r.tag = cmd.tag;
		if (mode == FM_SLOW)
			usleep(300 * 1000);
		if (mode == FM_SHUTDOWN) {
			r.status = RBLK_S_SHUTTING_DOWN;
		} else if (cmd.opcode == RBLK_OP_WRITE) {
			memcpy(f->vol + cmd.offset, buf + sizeof(struct rblk_wire_cmd),
			       cmd.length);
			r.value = cmd.length;
		} else if (cmd.opcode == RBLK_OP_READ) {
			r.value = dl = cmd.length;
		}
		rblk_encode_rsp(out, &r, dl);
		wfull(c, out, sizeof(out));
		if (dl)
			wfull(c, f->vol + cmd.offset, dl);
		return 0;
	}
	return -1;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int lfd = -1, c = -1;
	unsigned conn = 0;

	while (!atomic_load(&f->stop)) {
		struct pollfd p = { .fd = -1, .events = POLLIN };

		if (atomic_load(&f->listen_on) && lfd < 0)
			lfd = listen_on(&f->port);
		if (!atomic_load(&f->listen_on) && lfd >= 0) {
			close(lfd);
			lfd = -1;
		}
		atomic_store(&f->listening, lfd >= 0);
		if (atomic_exchange(&f->kick, 0) && c >= 0) {
			close(c);
			c = -1;
		}
		p.fd = c >= 0 ? c : lfd;
		if (poll(&p, 1, 10) <= 0 || p.fd < 0)
			continue;
		if (c < 0) {
			c = accept(lfd, NULL, NULL);
			if (c >= 0)
				conn = atomic_fetch_add(&f->nconn, 1) + 1;
			continue;
		}
		if (serve_pdu(f, c, conn)) {
			close(c);
			c = -1;
		}
	}
	if (c >= 0)
		close(c);
	if (lfd >= 0)
		close(lfd);
	return NULL;
}

static void fake_listen(struct fake *f, int on);

static struct fake *fake_start(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	pthread_mutex_init(&f->mu, NULL);
	atomic_store(&f->size, VOL_SIZE);
	/* Bind here once so the port is known; the thread re-binds it. */
	close(listen_on(&f->port));
	atomic_store(&f->listen_on, 1);
	assert_int_equal(pthread_create(&f->thr, NULL, fake_main, f), 0);
	fake_listen(f, 1);
	return f;
}

static void fake_stop(struct fake *f)
{
	atomic_store(&f->stop, 1);
	pthread_join(f->thr, NULL);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* Waits until the fake has (not) a listener. */
static void fake_listen(struct fake *f, int on)
{
	atomic_store(&f->listen_on, on);
	for (int i = 0; i < 500 && atomic_load(&f->listening) != on; i++)
		usleep(2000);
	assert_int_equal(atomic_load(&f->listening), on);
}

static struct rblk_queue *open_q(struct fake *f, struct rblk_client_opts *o)
{
	struct rblk_queue *q = NULL;
	char port[16], err[256];

	snprintf(port, sizeof(port), "%u", f->port);
	o->host = "127.0.0.1";
	o->port = port;
	o->volume = "vol0";
	o->hostname = "unit-test";
	o->queue_depth = DEPTH;
	o->timeout_ms = 1000;
	assert_int_equal(rblk_queue_open(o, &q, NULL, err, sizeof(err)), 0);
	return q;
}

static enum rblk_queue_state qstate(struct rblk_queue *q)
{
	struct rblk_queue_status st;

	rblk_queue_status(q, &st);
	return st.state;
}

/* Reaps without waiting for I/O until the queue is in state s (or ms pass);
 * returns the time it took. */
static int64_t wait_state(struct rblk_queue *q, enum rblk_queue_state s, int ms)
{
	int64_t t0 = rblk_now_ms();
	struct rblk_io *done[DEPTH];

	while (qstate(q) != s && rblk_now_ms() - t0 < ms)
		assert_true(rblk_queue_reap(q, done, 0, 0, 20) >= 0);
	assert_int_equal(qstate(q), s);
	return rblk_now_ms() - t0;
}

static struct rblk_io wr(uint8_t *buf, uint64_t off)
{
	return (struct rblk_io) { .opcode = RBLK_OP_WRITE, .offset = off,
				  .length = 4096, .buf = buf };
}

/* Reaps n I/Os within ms; asserts each status is st.  Returns the time. */
static int64_t reap_n(struct rblk_queue *q, unsigned n, int st, int ms)
{
	int64_t t0 = rblk_now_ms();
	struct rblk_io *done[DEPTH];
	unsigned got = 0;

	while (got < n) {
		int left = ms - (int)(rblk_now_ms() - t0);
		int r = rblk_queue_reap(q, done, n - got, DEPTH, left > 0 ? left : 0);

		assert_true(r >= 0);
		if (r == 0 && left <= 0)
			fail_msg("only %u of %u I/Os back within %d ms", got, n, ms);
		for (int i = 0; i < r; i++)
			assert_int_equal(done[i]->status, st);
		got += (unsigned)r;
	}
	return rblk_now_ms() - t0;
}

static void test_held_reissued_in_order(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .reconnect_delay_ms = 300 };
	struct rblk_queue *q = open_q(f, &o);
	static uint8_t b[6][4096];
	struct rblk_io io[6];
	struct rblk_queue_status st;
	unsigned first2 = 0;

	atomic_store(&f->mode, FM_SILENT);
	for (unsigned i = 0; i < 4; i++) {
		memset(b[i], 'a' + i, sizeof(b[i]));
		io[i] = wr(b[i], i * 4096);
		assert_int_equal(rblk_queue_submit(q, &io[i]), 0);
	}
	/* The fake has all four (unanswered); then the connection goes and
	 * nothing listens. */
	for (int i = 0; i < 200 && f->nlog < 4; i++)
		usleep(10 * 1000);
	assert_int_equal(f->nlog, 4);
	fake_listen(f, 0);
	atomic_store(&f->kick, 1);
	wait_state(q, RBLK_QUEUE_CONNECTING, 2000);
	/* New submissions are held, not refused. */
	for (unsigned i = 4; i < 6; i++) {
		memset(b[i], 'a' + i, sizeof(b[i]));
		io[i] = wr(b[i], i * 4096);
		assert_int_equal(rblk_queue_submit(q, &io[i]), 0);
	}
	assert_int_equal(rblk_queue_inflight(q), 6);
	/* Still held a while later: no completion is made up. */
	assert_int_equal(rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 1, DEPTH, 400), 0);
	assert_int_equal(qstate(q), RBLK_QUEUE_CONNECTING);
	atomic_store(&f->mode, FM_ANSWER);
	fake_listen(f, 1);
	reap_n(q, 6, RBLK_S_OK, 3000);
	rblk_queue_status(q, &st);
	assert_int_equal(st.state, RBLK_QUEUE_LIVE);
	assert_int_equal(st.reconnects, 1);
	/* Second connection: all six, in submission order. */
	pthread_mutex_lock(&f->mu);
	for (unsigned i = 0; i < f->nlog; i++) {
		if (f->log[i].conn != 2)
			continue;
		assert_int_equal(f->log[i].off, (uint64_t)first2 * 4096);
		first2++;
	}
	pthread_mutex_unlock(&f->mu);
	assert_int_equal(first2, 6);
	for (unsigned i = 0; i < 6; i++)
		assert_memory_equal(f->vol + i * 4096, b[i], 4096);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_shutting_down_fast_retry(void **state)
{
	struct fake *f = fake_start();
	/* The slow schedule would wait 5 s. */
	struct rblk_client_opts o = { .reconnect_delay_ms = 5000 };
	struct rblk_queue *q = open_q(f, &o);
	static uint8_t b[4096];
	struct rblk_io io = wr(b, 8192);
	int64_t t0, ms;
	unsigned on2 = 0;

	memset(b, 'z', sizeof(b));
	atomic_store(&f->mode, FM_SHUTDOWN);
	fake_listen(f, 0);	/* the stopping target's port is closed */
	t0 = rblk_now_ms();
	assert_int_equal(rblk_queue_submit(q, &io), 0);
	/* SHUTTING_DOWN is not a result: the command is held. */
	assert_int_equal(rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 1, DEPTH, 300), 0);
	assert_int_equal(qstate(q), RBLK_QUEUE_CONNECTING);
	/* The new target comes up 1.2 s later. */
	while (rblk_now_ms() - t0 < 1200)
		assert_int_equal(rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 0, DEPTH, 50), 0);
	atomic_store(&f->mode, FM_ANSWER);
	fake_listen(f, 1);
	reap_n(q, 1, RBLK_S_OK, 3000);
	ms = rblk_now_ms() - t0;
	/* refused every 250 ms, so back within one period of listening */
	print_message("shutting-down: command done after %lld ms\n", (long long)ms);
	assert_true(ms >= 1200 && ms < 2200);
	pthread_mutex_lock(&f->mu);
	for (unsigned i = 0; i < f->nlog; i++)
		on2 += f->log[i].conn == 2 && f->log[i].off == 8192;
	pthread_mutex_unlock(&f->mu);
	assert_int_equal(on2, 1);
	assert_memory_equal(f->vol + 8192, b, 4096);
	rblk_queue_close(q);
	fake_stop(f);
}

/* An idle queue: the target's unsolicited SHUTTING_DOWN notice alone
 * (no command in flight) makes it reconnect at once. */
static void test_shutdown_notice_idle(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .reconnect_delay_ms = 5000, .keep_alive_tmo_ms = 200 };
	struct rblk_queue *q = open_q(f, &o);
	int64_t ms;

	struct rblk_queue_status st;
	int64_t t0 = rblk_now_ms();

	/* Keep-alives are answered SHUTTING_DOWN from now on. */
	atomic_store(&f->mode, FM_SHUTDOWN);
	do {
		assert_int_equal(rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 0, DEPTH, 20), 0);
		rblk_queue_status(q, &st);
	} while (!st.reconnects && rblk_now_ms() - t0 < 3000);
	ms = rblk_now_ms() - t0;
	print_message("shutdown notice on an idle queue: reconnected after %lld ms\n",
		      (long long)ms);
	/* first keep-alive after 67 ms, then at once: not reconnect_delay */
	assert_int_equal(st.reconnects, 1);
	assert_true(ms < 1000);
	assert_true(f->nconn >= 2);
	atomic_store(&f->mode, FM_ANSWER);
	wait_state(q, RBLK_QUEUE_LIVE, 3000);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_ctrl_loss_fails_held(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .reconnect_delay_ms = 200, .ctrl_loss_tmo_ms = 600 };
	struct rblk_queue *q = open_q(f, &o);
	static uint8_t b[2][4096];
	struct rblk_io io[2] = { wr(b[0], 0), wr(b[1], 4096) }, extra = wr(b[0], 0);
	struct rblk_io *done[DEPTH];
	int64_t ms;

	atomic_store(&f->mode, FM_SILENT);
	for (int i = 0; i < 2; i++)
		assert_int_equal(rblk_queue_submit(q, &io[i]), 0);
	fake_listen(f, 0);
	atomic_store(&f->kick, 1);
	ms = reap_n(q, 2, RBLK_S_IO_ERROR, 3000);
	print_message("ctrl_loss_tmo 600 ms: held I/O failed after %lld ms\n", (long long)ms);
	assert_true(ms >= 550 && ms < 1600);
	assert_int_equal(qstate(q), RBLK_QUEUE_FAILED);
	assert_int_equal(io[0].error, -EIO);
	assert_int_equal(rblk_queue_submit(q, &extra), -ENOTCONN);
	assert_true(rblk_queue_reap(q, done, 0, DEPTH, 0) < 0);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_ctrl_loss_zero_no_reconnect(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .ctrl_loss_tmo_ms = RBLK_TMO_NOW };
	struct rblk_queue *q = open_q(f, &o);
	static uint8_t b[4096];
	struct rblk_io io = wr(b, 0);
	int64_t ms;

	atomic_store(&f->mode, FM_SILENT);
	assert_int_equal(rblk_queue_submit(q, &io), 0);
	atomic_store(&f->kick, 1);
	ms = reap_n(q, 1, RBLK_S_IO_ERROR, 2000);
	assert_true(ms < 500);
	assert_int_equal(qstate(q), RBLK_QUEUE_FAILED);
	assert_int_equal(f->nconn, 1);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_fast_io_fail_then_reconnect(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .reconnect_delay_ms = 200, .fast_io_fail_tmo_ms = 400 };
	struct rblk_queue *q = open_q(f, &o);
	static uint8_t b[4096];
	struct rblk_io io = wr(b, 0), late = wr(b, 4096);
	struct rblk_queue_status st;
	int64_t ms;

	atomic_store(&f->mode, FM_SILENT);
	assert_int_equal(rblk_queue_submit(q, &io), 0);
	fake_listen(f, 0);
	atomic_store(&f->kick, 1);
	ms = reap_n(q, 1, RBLK_S_IO_ERROR, 3000);
	print_message("fast_io_fail_tmo 400 ms: held I/O failed after %lld ms\n", (long long)ms);
	assert_true(ms >= 350 && ms < 1400);
	rblk_queue_status(q, &st);
	assert_int_equal(st.state, RBLK_QUEUE_CONNECTING);
	assert_true(st.io_failing);
	/* New I/O fails at once while it lasts. */
	assert_int_equal(rblk_queue_submit(q, &late), -EIO);
	/* The target returns: the queue is LIVE again and I/O works. */
	atomic_store(&f->mode, FM_ANSWER);
	fake_listen(f, 1);
	wait_state(q, RBLK_QUEUE_LIVE, 3000);
	rblk_queue_status(q, &st);
	assert_false(st.io_failing);
	assert_int_equal(st.reconnects, 1);
	assert_int_equal(rblk_queue_submit(q, &late), 0);
	reap_n(q, 1, RBLK_S_OK, 2000);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_keepalive(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .keep_alive_tmo_ms = 1200, .reconnect_delay_ms = 200 };
	struct rblk_queue *q = open_q(f, &o);
	struct rblk_queue_status st;
	int64_t ms;

	/* Answered keep-alives keep an idle queue up. */
	assert_int_equal(rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 0, DEPTH, 0), 0);
	for (int64_t t0 = rblk_now_ms(); rblk_now_ms() - t0 < 2000;) {
		struct pollfd p = { .fd = rblk_queue_fd(q), .events = POLLIN };

		/* The queue fd alone wakes us for the timer. */
		poll(&p, 1, 1000);
		assert_int_equal(rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 0, DEPTH, 0), 0);
	}
	assert_int_equal(qstate(q), RBLK_QUEUE_LIVE);
	assert_true(f->nka >= 3);
	/* A mute target: dead keep_alive_tmo after its last PDU, not a
	 * period after the unanswered keep-alive (1800 ms or more after the
	 * last answer).  Counted from the fake's last answer: a keep-alive
	 * may be on its way when the target goes mute, and then the last
	 * answer is up to 2/3 of the period older than the mute. */
	atomic_store(&f->mode, FM_MUTE);
	ms = wait_state(q, RBLK_QUEUE_CONNECTING, 3000);
	ms = rblk_now_ms() - atomic_load(&f->ka_answered);
	print_message("keep-alive 1200 ms: mute target declared dead %lld ms after its last answer\n",
		      (long long)ms);
	assert_true(ms >= 1190 && ms < 1700);
	rblk_queue_status(q, &st);
	assert_non_null(strstr(st.reason, "keep-alive"));
	assert_int_equal(st.last_err, -ETIMEDOUT);
	atomic_store(&f->mode, FM_ANSWER);
	wait_state(q, RBLK_QUEUE_LIVE, 3000);
	rblk_queue_close(q);
	fake_stop(f);
}

/* Reaps an idle queue until its status says size, or 3 s pass. */
static uint64_t wait_size(struct rblk_queue *q, uint64_t size)
{
	struct rblk_queue_status st;

	for (int64_t t0 = rblk_now_ms(); rblk_now_ms() - t0 < 3000;) {
		struct pollfd p = { .fd = rblk_queue_fd(q), .events = POLLIN };

		poll(&p, 1, 200);
		rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 0, DEPTH, 0);
		rblk_queue_status(q, &st);
		if (st.size == size)
			break;
	}
	return st.size;
}

/* A volume that grew (volume.resize) reaches the queue in a KEEPALIVE_RSP;
 * a smaller size said later never shrinks what the queue was told. */
static void test_size_grows(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .keep_alive_tmo_ms = 600, .reconnect_delay_ms = 200 };
	struct rblk_queue *q = open_q(f, &o);
	unsigned nka;

	assert_int_equal(wait_size(q, VOL_SIZE), VOL_SIZE);
	atomic_store(&f->size, 3 * VOL_SIZE);
	assert_int_equal(wait_size(q, 3 * VOL_SIZE), 3 * VOL_SIZE);
	atomic_store(&f->size, 2 * VOL_SIZE);
	nka = atomic_load(&f->nka);
	while (atomic_load(&f->nka) < nka + 2)
		wait_size(q, 0);
	assert_int_equal(wait_size(q, 3 * VOL_SIZE), 3 * VOL_SIZE);
	assert_int_equal(qstate(q), RBLK_QUEUE_LIVE);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_io_timeout_reissues(void **state)
{
	struct fake *f = fake_start();
	/* No keep-alive: only the command's own clock can notice. */
	struct rblk_client_opts o = { .io_timeout_ms = 400, .keep_alive_tmo_ms = RBLK_TMO_OFF };
	struct rblk_queue *q = open_q(f, &o);
	static uint8_t b[4096];
	struct rblk_io io = { .opcode = RBLK_OP_READ, .offset = 4096, .length = 4096, .buf = b };
	struct rblk_queue_status st;
	unsigned seen[3] = { 0 };
	int64_t ms;

	memset(f->vol + 4096, 0x5a, 4096);
	atomic_store(&f->silent_conns, 1);	/* the first connection never answers */
	assert_int_equal(rblk_queue_submit(q, &io), 0);
	ms = reap_n(q, 1, RBLK_S_OK, 3000);
	print_message("io_timeout 400 ms: command answered after %lld ms\n", (long long)ms);
	assert_true(ms >= 380 && ms < 2000);
	assert_memory_equal(b, f->vol + 4096, 4096);
	rblk_queue_status(q, &st);
	assert_int_equal(st.reconnects, 1);
	assert_non_null(strstr(st.reason, "io_timeout"));
	pthread_mutex_lock(&f->mu);
	for (unsigned i = 0; i < f->nlog; i++)
		if (f->log[i].conn < 3)
			seen[f->log[i].conn]++;
	pthread_mutex_unlock(&f->mu);
	assert_int_equal(seen[1], 1);
	assert_int_equal(seen[2], 1);
	rblk_queue_close(q);
	fake_stop(f);
}


/* The target forgot the volume (or this host): a reconnect's refusal is
 * final for these statuses, retried for others. */
static void final_refusal(int status, int err, const char *says)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .reconnect_delay_ms = 100 };
	struct rblk_queue *q = open_q(f, &o);
	static uint8_t b[2][4096];
	struct rblk_io io[2] = { wr(b[0], 0), wr(b[1], 4096) }, extra = wr(b[0], 0);
	struct rblk_queue_status st;
	int64_t ms;

	atomic_store(&f->mode, FM_SILENT);
	for (int i = 0; i < 2; i++)
		assert_int_equal(rblk_queue_submit(q, &io[i]), 0);
	atomic_store(&f->login_status, status);
	atomic_store(&f->kick, 1);
	ms = reap_n(q, 2, RBLK_S_IO_ERROR, 3000);
	print_message("%s on reconnect: held I/O failed after %lld ms\n",
		      rblk_status_str(status), (long long)ms);
	assert_true(ms < 1000);
	rblk_queue_status(q, &st);
	assert_int_equal(st.state, RBLK_QUEUE_FAILED);
	assert_int_equal(st.last_err, err);
	assert_non_null(strstr(st.reason, says));
	assert_non_null(strstr(st.reason, "final"));
	assert_int_equal(rblk_queue_submit(q, &extra), -ENOTCONN);
	/* No attempt after the verdict (reconnect_delay is 100 ms). */
	usleep(400 * 1000);
	assert_true(rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 0, DEPTH, 0) < 0);
	assert_int_equal(f->nconn, 2);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_final_no_such_volume(void **state)
{
	final_refusal(RBLK_S_NO_SUCH_VOLUME, -ENOENT, "no such volume");
}

static void test_final_access_denied(void **state)
{
	final_refusal(RBLK_S_ACCESS_DENIED, -EACCES, "access denied");
}

static void test_final_auth_failed(void **state)
{
	final_refusal(RBLK_S_AUTH_FAILED, -EACCES, "auth");
}

static void test_busy_refusal_retried(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .reconnect_delay_ms = 100 };
	struct rblk_queue *q = open_q(f, &o);
	static uint8_t b[4096];
	struct rblk_io io = wr(b, 0);

	atomic_store(&f->mode, FM_SILENT);
	assert_int_equal(rblk_queue_submit(q, &io), 0);
	atomic_store(&f->login_status, RBLK_S_NO_RESOURCES);
	atomic_store(&f->kick, 1);
	assert_int_equal(rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 1, DEPTH, 600), 0);
	assert_int_equal(qstate(q), RBLK_QUEUE_CONNECTING);
	assert_true(f->nconn >= 3);
	atomic_store(&f->mode, FM_ANSWER);
	atomic_store(&f->login_status, 0);
	reap_n(q, 1, RBLK_S_OK, 3000);
	rblk_queue_close(q);
	fake_stop(f);
}

static atomic_int stop_flag;

static int stop_fn(void *arg)
{
	return atomic_load((atomic_int *)arg);
}

/* Sets the stop flag and returns how long until the queue failed all its
 * n outstanding I/O (-ECANCELED). */
static int64_t stop_and_time(struct rblk_queue *q, unsigned n)
{
	struct rblk_queue_status st;
	int64_t ms;

	atomic_store(&stop_flag, 1);
	ms = reap_n(q, n, RBLK_S_IO_ERROR, 3000);
	rblk_queue_status(q, &st);
	assert_int_equal(st.state, RBLK_QUEUE_FAILED);
	assert_int_equal(st.last_err, -ECANCELED);
	assert_non_null(strstr(st.reason, "stopped by the caller"));
	return ms;
}

static void test_stop_while_reconnecting(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .reconnect_delay_ms = 5000,
				      .stop = stop_fn, .stop_arg = &stop_flag };
	struct rblk_queue *q;
	static uint8_t b[4096];
	struct rblk_io io = wr(b, 0);
	int64_t ms;

	atomic_store(&stop_flag, 0);
	q = open_q(f, &o);
	atomic_store(&f->mode, FM_SILENT);
	assert_int_equal(rblk_queue_submit(q, &io), 0);
	fake_listen(f, 0);
	atomic_store(&f->kick, 1);
	wait_state(q, RBLK_QUEUE_CONNECTING, 2000);
	ms = stop_and_time(q, 1);
	print_message("stop while reconnecting: I/O failed after %lld ms\n", (long long)ms);
	assert_true(ms < 500);
	rblk_queue_close(q);
	fake_stop(f);
}

/* Sets the stop flag from another thread, 200 ms into the fake's second
 * connection: the queue's thread is then inside an attempt. */
struct stopper {
	struct fake *f;
	int64_t at;
};

static void *stopper_main(void *arg)
{
	struct stopper *s = arg;

	while (atomic_load(&s->f->nconn) < 2)
		usleep(1000);
	usleep(200 * 1000);
	s->at = rblk_now_ms();
	atomic_store(&stop_flag, 1);
	return NULL;
}

/* An attempt whose LOGIN is never answered would wait its whole budget
 * (3 s here): the stop is heard inside it. */
static void test_stop_inside_attempt(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .stop = stop_fn, .stop_arg = &stop_flag };
	struct stopper st = { .f = f };
	struct rblk_queue_status qs;
	struct rblk_queue *q;
	static uint8_t b[4096];
	struct rblk_io io = wr(b, 0);
	pthread_t thr;
	int64_t ms;

	atomic_store(&stop_flag, 0);
	q = open_q(f, &o);
	atomic_store(&f->mode, FM_SILENT);
	assert_int_equal(rblk_queue_submit(q, &io), 0);
	atomic_store(&f->login_mute, 1);
	assert_int_equal(pthread_create(&thr, NULL, stopper_main, &st), 0);
	atomic_store(&f->kick, 1);
	/* Lost, then the first attempt (at once) waits for LOGIN_RSP. */
	reap_n(q, 1, RBLK_S_IO_ERROR, 5000);
	ms = rblk_now_ms() - st.at;
	pthread_join(thr, NULL);
	print_message("stop inside a reconnect attempt: I/O failed %lld ms after the stop\n",
		      (long long)ms);
	assert_true(ms < 500);
	rblk_queue_status(q, &qs);
	assert_int_equal(qs.state, RBLK_QUEUE_FAILED);
	assert_int_equal(qs.last_err, -ECANCELED);
	rblk_queue_close(q);
	fake_stop(f);
}

static void test_stop_live(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .stop = stop_fn, .stop_arg = &stop_flag };
	struct rblk_queue *q;
	static uint8_t b[2][4096];
	struct rblk_io io = wr(b[0], 0), late = wr(b[1], 4096), slow[4];
	int64_t ms;

	atomic_store(&stop_flag, 0);
	q = open_q(f, &o);
	/* A target that answers is not cut off by a stop. */
	atomic_store(&stop_flag, 1);
	assert_int_equal(rblk_queue_submit(q, &late), 0);
	reap_n(q, 1, RBLK_S_OK, 1000);
	assert_int_equal(qstate(q), RBLK_QUEUE_LIVE);
	/* One that answers slowly is waited for as long as answers come:
	 * four commands, one answer every 300 ms, 1.2 s in all. */
	atomic_store(&f->mode, FM_SLOW);
	for (unsigned i = 0; i < 4; i++) {
		slow[i] = wr(b[1], 4096 * (i + 2));
		assert_int_equal(rblk_queue_submit(q, &slow[i]), 0);
	}
	ms = reap_n(q, 4, RBLK_S_OK, 3000);
	print_message("stop with a slow, answering target: all answered after %lld ms\n",
		      (long long)ms);
	assert_true(ms > RBLK_STOP_GRACE_MS);
	assert_int_equal(qstate(q), RBLK_QUEUE_LIVE);
	/* One that does not answer gets the grace period, then no more. */
	atomic_store(&stop_flag, 0);
	atomic_store(&f->mode, FM_SILENT);
	assert_int_equal(rblk_queue_submit(q, &io), 0);
	ms = stop_and_time(q, 1);
	print_message("stop with a live, silent target: I/O failed after %lld ms\n", (long long)ms);
	assert_true(ms >= RBLK_STOP_GRACE_MS - 50 && ms < RBLK_STOP_GRACE_MS + 500);
	rblk_queue_close(q);
	fake_stop(f);
}

/*
 * The reconnect log line's "attempt N of M": M bounds N over a whole
 * ctrl_loss_tmo with two paths, both refused.  Each round tries every
 * path, so M counts them (it once counted rounds only: attempt 181 of 91
 * in a failover test).  The lines are read back from stderr.
 */
static void test_attempts_within_logged_bound(void **state)
{
	struct fake *f = fake_start();
	uint16_t closed = 0;
	char closed_port[16], line[512];
	struct rblk_client_path alt = { .host = "127.0.0.1", .port = closed_port };
	struct rblk_client_opts o = { .reconnect_delay_ms = 200,
				      .ctrl_loss_tmo_ms = 1500,
				      .alt_paths = &alt, .n_alt_paths = 1 };
	struct rblk_queue *q;
	char tmpl[] = "/tmp/rblk-reconnect-log.XXXXXX";
	int fd = mkstemp(tmpl), saved = dup(STDERR_FILENO), level = rblk_log_level;
	unsigned n = 0, worst = 0, bound = 0;
	FILE *log;

	assert_true(fd >= 0 && saved >= 0);
	close(listen_on(&closed));	/* nothing listens there now */
	snprintf(closed_port, sizeof(closed_port), "%u", closed);
	q = open_q(f, &o);
	fake_listen(f, 0);
	/* No assert while stderr is the file: cmocka reports there. */
	dup2(fd, STDERR_FILENO);
	rblk_log_level = RBLK_LOG_WARN;
	atomic_store(&f->kick, 1);
	for (int64_t t0 = rblk_now_ms(); rblk_now_ms() - t0 < 5000 &&
	     qstate(q) != RBLK_QUEUE_FAILED;)
		rblk_queue_reap(q, (struct rblk_io *[DEPTH]){ 0 }, 0, 0, 20);
	rblk_log_level = level;
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_int_equal(qstate(q), RBLK_QUEUE_FAILED);
	rblk_queue_close(q);
	fake_stop(f);
	log = fdopen(fd, "r");
	assert_non_null(log);
	rewind(log);
	while (fgets(line, sizeof(line), log)) {
		const char *at = strstr(line, "reconnect attempt ");
		unsigned a, m;

		if (!at || sscanf(at, "reconnect attempt %u of %u", &a, &m) != 2)
			continue;
		n++;
		if (a > m && a - m > worst)
			worst = a - m;
		bound = m;
	}
	fclose(log);
	unlink(tmpl);
	print_message("two refused paths: %u attempts logged, bound %u, worst overshoot %u\n",
		      n, bound, worst);
	assert_true(n >= 4);		/* both paths, more than one round */
	assert_int_equal(worst, 0);
}

static void test_stop_at_open(void **state)
{
	struct fake *f = fake_start();
	struct rblk_client_opts o = { .stop = stop_fn, .stop_arg = &stop_flag,
				      .queue_depth = DEPTH, .timeout_ms = 5000,
				      .host = "127.0.0.1", .volume = "vol0",
				      .hostname = "unit-test" };
	struct rblk_queue *q = NULL;
	char port[16], err[256];
	int64_t t0;
	int ret;

	snprintf(port, sizeof(port), "%u", f->port);
	o.port = port;
	atomic_store(&f->login_mute, 1);
	atomic_store(&stop_flag, 1);
	t0 = rblk_now_ms();
	ret = rblk_queue_open(&o, &q, NULL, err, sizeof(err));
	print_message("stop at open: %s after %lld ms\n", err, (long long)(rblk_now_ms() - t0));
	assert_int_equal(ret, -ECANCELED);
	assert_true(rblk_now_ms() - t0 < 500);
	assert_null(q);
	fake_stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_reissued_in_order),
		cmocka_unit_test(test_shutting_down_fast_retry),
		cmocka_unit_test(test_shutdown_notice_idle),
		cmocka_unit_test(test_ctrl_loss_fails_held),
		cmocka_unit_test(test_ctrl_loss_zero_no_reconnect),
		cmocka_unit_test(test_fast_io_fail_then_reconnect),
		cmocka_unit_test(test_keepalive),
		cmocka_unit_test(test_size_grows),
		cmocka_unit_test(test_io_timeout_reissues),
		cmocka_unit_test(test_final_no_such_volume),
		cmocka_unit_test(test_final_access_denied),
		cmocka_unit_test(test_final_auth_failed),
		cmocka_unit_test(test_busy_refusal_retried),
		cmocka_unit_test(test_stop_while_reconnecting),
		cmocka_unit_test(test_stop_inside_attempt),
		cmocka_unit_test(test_stop_live),
		cmocka_unit_test(test_stop_at_open),
		cmocka_unit_test(test_attempts_within_logged_bound),
	};

	/* The reconnect log lines are warnings: keep them out of the output. */
	rblk_log_level = RBLK_LOG_ERR - 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
