// SPDX-License-Identifier: MIT
/*
 * The durability chain, for the uring and aio paths:
 * - at the backend boundary, a FLUSH completes only after an fdatasync
 *   (io_uring FSYNC with DATASYNC) on the volume's fd was submitted AND its
 *   completion came back; a FUA WRITE is issued with RWF_DSYNC (io_uring
 *   rw_flags, libaio aio_rw_flags) and completes only after that write's
 *   completion; a plain WRITE carries neither; the io's syncs /
 *   dsync_writes (what the durability counters add up) match what was
 *   issued;
 * - through conn.c, driven by a scripted transport: the reply to a FLUSH
 *   or FUA WRITE is handed to the transport only after that completion,
 *   and the connection, session and volume counters agree.
 *
 * How it records: this program defines io_uring_submit*,
 * io_uring_peek_batch_cqe, io_submit and io_getevents itself.  The target
 * code is linked in statically, so its calls land here; each wrapper logs
 * what crosses the kernel boundary (SQEs about to be submitted, CQEs
 * reaped, iocbs, io_events) and calls the real library function (dlsym
 * RTLD_NEXT).  complete() and the transport's send_rsp log too, so the
 * test reads one ordered log.  Production code carries no test hook.
 */
#include <dlfcn.h>
#include <errno.h>
#include <libaio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "reactor_fixture.h"

#include "export.h"
#include "backend.h"
#include "bufpool.h"
#include "conn.h"
#include "reactor.h"
#include "server.h"
#include "volume.h"

#define VOL_SIZE	(1u << 20)
#define LOG_MAX		4096

enum rec_kind {
	REC_SQE,		/* io_uring SQE handed to the kernel */
	REC_CQE,		/* io_uring CQE reaped */
	REC_AIO_SUBMIT,		/* iocb handed to io_submit (accepted) */
	REC_AIO_EVENT,		/* io_event reaped by io_getevents */
	REC_COMPLETE,		/* tgt_io complete() called */
	REC_REPLY,		/* conn.c handed an RSP to the transport */
};

struct rec {
	enum rec_kind kind;
	unsigned opcode;	/* IORING_OP_* or IO_CMD_* */
	unsigned flags;		/* rw_flags / fsync_flags / aio_rw_flags */
	int      fd;
	uint64_t key;		/* user_data, iocb data, or the tgt_io */
	long     res;
};

static struct rec log_[LOG_MAX];
static unsigned nlog;

static void record(enum rec_kind kind, unsigned opcode, unsigned flags,
		   int fd, uint64_t key, long res)
{
	if (nlog < LOG_MAX)
		log_[nlog++] = (struct rec){ kind, opcode, flags, fd, key, res };
}

static void *real(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());
		abort();
	}
	return f;
}

/* The SQEs between sqe_head and sqe_tail are what the next submit sends. */
static void record_pending_sqes(struct io_uring *ring)
{
	for (unsigned i = ring->sq.sqe_head; i != ring->sq.sqe_tail; i++) {
		const struct io_uring_sqe *s =
			&ring->sq.sqes[i & ring->sq.ring_mask];

		record(REC_SQE, s->opcode,
		       s->opcode == IORING_OP_FSYNC ? s->fsync_flags
						    : (unsigned)s->rw_flags,
		       s->fd, s->user_data, 0);
	}
}

int io_uring_submit(struct io_uring *ring)
{
	static int (*fn)(struct io_uring *);

	if (!fn)
		fn = real("io_uring_submit");
	record_pending_sqes(ring);
	return fn(ring);
}

int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	static int (*fn)(struct io_uring *, unsigned);

	if (!fn)
		fn = real("io_uring_submit_and_wait");
	record_pending_sqes(ring);
	return fn(ring, wait_nr);
}

int io_uring_submit_and_wait_timeout(struct io_uring *ring,
				     struct io_uring_cqe **cqe_ptr,
				     unsigned wait_nr,
				     struct __kernel_timespec *ts,
				     sigset_t *sigmask)
{
	static int (*fn)(struct io_uring *, struct io_uring_cqe **, unsigned,
			 struct __kernel_timespec *, sigset_t *);

	if (!fn)
		fn = real("io_uring_submit_and_wait_timeout");
	record_pending_sqes(ring);
	return fn(ring, cqe_ptr, wait_nr, ts, sigmask);
}

unsigned io_uring_peek_batch_cqe(struct io_uring *ring,
				 struct io_uring_cqe **cqes, unsigned count)
{
	static unsigned (*fn)(struct io_uring *, struct io_uring_cqe **,
			      unsigned);
	unsigned n;

	if (!fn)
		fn = real("io_uring_peek_batch_cqe");
	n = fn(ring, cqes, count);
	for (unsigned i = 0; i < n; i++)
		record(REC_CQE, 0, 0, -1, cqes[i]->user_data, cqes[i]->res);
	return n;
}

int io_submit(io_context_t ctx, long nr, struct iocb *ios[])
{
	static int (*fn)(io_context_t, long, struct iocb **);
	int ret;

	if (!fn)
		fn = real("io_submit");
	ret = fn(ctx, nr, ios);
	for (int i = 0; i < ret; i++)
		record(REC_AIO_SUBMIT, ios[i]->aio_lio_opcode,
		       ios[i]->aio_rw_flags, ios[i]->aio_fildes,
		       (uint64_t)(uintptr_t)ios[i]->data, 0);
	return ret;
}

int io_getevents(io_context_t ctx, long min_nr, long nr,
		 struct io_event *events, struct timespec *timeout)
{
	static int (*fn)(io_context_t, long, long, struct io_event *,
			 struct timespec *);
	int n;

	if (!fn)
		fn = real("io_getevents");
	n = fn(ctx, min_nr, nr, events, timeout);
	for (int i = 0; i < n; i++)
		record(REC_AIO_EVENT, 0, 0, -1,
		       (uint64_t)(uintptr_t)events[i].obj->data,
		       (long)events[i].res);
	return n;
}

/* ---- fixture ------------------------------------------------------------ */

static void io_done(struct tgt_io *io, int res)
{
	record(REC_COMPLETE, io->op, 0, -1, (uint64_t)(uintptr_t)io, res);
	waiter_done(io, res);
}

static int setup(void **state)
{
	return reactor_fixture_setup(state, "durability");
}

static int teardown(void **state)
{
	return reactor_fixture_teardown(state);
}

static struct tgt_volume *open_vol(struct fixture *f, const char *backend)
{
	struct tgt_volume_cfg cfg = { .size = VOL_SIZE };
	struct tgt_volume *v = NULL;
	char err[256];

	snprintf(cfg.name, sizeof(cfg.name), "t");
	snprintf(cfg.backend, sizeof(cfg.backend), "%s", backend);
	cfg.path = f->path;
	if (tgt_volume_open(&v, &cfg, err, sizeof(err)))
		fail_msg("open %s: %s", backend, err);
	return v;
}

/* Runs one command to completion with a fresh log; returns its result. */
static int run_io(struct fixture *f, struct waiter *w, struct tgt_volume *v,
		  int op, uint64_t off, uint32_t len, void *buf, bool fua)
{
	int turns = 0;

	memset(w, 0, sizeof(*w));
	w->io.r = f->r;
	w->io.vol = v;
	w->io.op = op;
	w->io.fua = fua;
	w->io.offset = off;
	w->io.length = len;
	w->io.buf = buf;
	w->io.buf_index = buf ? tgt_reactor_buf_index(f->r) : -1;
	w->io.complete = io_done;
	/* Whatever a previous command left (an aio eventfd re-arm) goes
	 * out before the log starts. */
	while (tgt_reactor_run_once(f->r, false) > 0)
		;
	nlog = 0;
	assert_int_equal(tgt_backend_submit(&w->io), 0);
	assert_int_equal(w->done, 0);	/* never inside submit() */
	while (!w->done && turns++ < 1000)
		assert_true(tgt_reactor_run_once(f->r, true) >= 0);
	assert_int_equal(w->done, 1);
	return w->res;
}

/* Index of the first record of kind matching (key, pred), or -1. */
static int find(enum rec_kind kind, uint64_t key, bool (*pred)(const struct rec *))
{
	for (unsigned i = 0; i < nlog; i++)
		if (log_[i].kind == kind && log_[i].key == key &&
		    (!pred || pred(&log_[i])))
			return (int)i;
	return -1;
}

static int count(enum rec_kind kind, bool (*pred)(const struct rec *))
{
	int n = 0;

	for (unsigned i = 0; i < nlog; i++)
		if (log_[i].kind == kind && (!pred || pred(&log_[i])))
			n++;
	return n;
}

static int vol_fd;

static bool is_fdatasync(const struct rec *r)
{
	return r->opcode == IORING_OP_FSYNC &&
	       (r->flags & IORING_FSYNC_DATASYNC) && r->fd == vol_fd;
}

static bool is_uring_write(const struct rec *r)
{
	return (r->opcode == IORING_OP_WRITE ||
		r->opcode == IORING_OP_WRITE_FIXED) && r->fd == vol_fd;
}

static bool is_dsync(const struct rec *r)
{
	return r->flags & RWF_DSYNC;
}

static bool is_aio_write(const struct rec *r)
{
	return r->opcode == IO_CMD_PWRITE && r->fd == vol_fd;
}

static void dump_log(void)
{
	static const char *const k[] = { "SQE", "CQE", "AIO_SUBMIT",
					 "AIO_EVENT", "COMPLETE", "REPLY" };

	for (unsigned i = 0; i < nlog; i++)
		print_message("  %2u %-10s op %u flags %#x fd %d key %#llx res %ld\n",
			      i, k[log_[i].kind], log_[i].opcode, log_[i].flags,
			      log_[i].fd, (unsigned long long)log_[i].key,
			      log_[i].res);
}

/* ---- cases --------------------------------------------------------------- */

/* FLUSH: fdatasync submitted, its CQE back, only then complete(). */
static void check_flush(struct fixture *f, struct tgt_volume *v)
{
	struct waiter w;
	uint64_t ev = (uint64_t)(uintptr_t)&w.io.ev;
	int sqe, cqe, done;

	assert_int_equal(run_io(f, &w, v, TGT_IO_FLUSH, 0, 0, NULL, false), 0);
	sqe = find(REC_SQE, ev, is_fdatasync);
	cqe = find(REC_CQE, ev, NULL);
	done = find(REC_COMPLETE, (uint64_t)(uintptr_t)&w.io, NULL);
	if (sqe < 0 || cqe < 0 || !(sqe < cqe && cqe < done))
		dump_log();
	assert_true(sqe >= 0);
	assert_true(sqe < cqe);
	assert_true(cqe < done);
	assert_int_equal(log_[cqe].res, 0);
	assert_int_equal(w.io.syncs, 1);
	assert_int_equal(w.io.dsync_writes, 0);
}

static void test_uring_flush_fua_order(void **state)
{
	struct fixture *f = *state;
	struct tgt_volume *v = open_vol(f, "uring");
	void *buf = tgt_buf_alloc(tgt_reactor_pool(f->r), 8192);
	uint64_t ev;
	struct waiter w;
	int sqe, cqe, done;

	vol_fd = v->fd;
	memset(buf, 0x5a, 8192);
	ev = (uint64_t)(uintptr_t)&w.io.ev;

	/* plain WRITE: no RWF_DSYNC, no fdatasync (the control case) */
	assert_int_equal(run_io(f, &w, v, TGT_IO_WRITE, 0, 8192, buf, false), 0);
	assert_true(find(REC_SQE, ev, is_uring_write) >= 0);
	assert_int_equal(count(REC_SQE, is_dsync), 0);
	assert_int_equal(count(REC_SQE, is_fdatasync), 0);
	assert_int_equal(w.io.syncs + w.io.dsync_writes, 0);

	/* FUA WRITE: the write itself carries RWF_DSYNC; complete after its CQE */
	assert_int_equal(run_io(f, &w, v, TGT_IO_WRITE, 8192, 8192, buf, true), 0);
	sqe = find(REC_SQE, ev, is_uring_write);
	cqe = find(REC_CQE, ev, NULL);
	done = find(REC_COMPLETE, (uint64_t)(uintptr_t)&w.io, NULL);
	assert_true(sqe >= 0);
	assert_true(log_[sqe].flags & RWF_DSYNC);
	assert_true(sqe < cqe && cqe < done);
	assert_int_equal(log_[cqe].res, 8192);
	assert_int_equal(w.io.dsync_writes, 1);

	check_flush(f, v);

	tgt_buf_free(tgt_reactor_pool(f->r), buf);
	assert_int_equal(tgt_volume_close(v), 0);
}

static void test_aio_flush_fua_order(void **state)
{
	struct fixture *f = *state;
	struct tgt_volume *v = open_vol(f, "aio");
	void *buf = tgt_buf_alloc(tgt_reactor_pool(f->r), 8192);
	uint64_t io;
	struct waiter w;
	int sub, evt, done;

	if (!v->direct) {
		tgt_buf_free(tgt_reactor_pool(f->r), buf);
		tgt_volume_close(v);
		skip();	/* buffered libaio: not the path we ship */
	}
	vol_fd = v->fd;
	memset(buf, 0xa5, 8192);
	io = (uint64_t)(uintptr_t)&w.io;

	assert_int_equal(run_io(f, &w, v, TGT_IO_WRITE, 0, 8192, buf, false), 0);
	sub = find(REC_AIO_SUBMIT, io, is_aio_write);
	assert_true(sub >= 0);
	assert_false(log_[sub].flags & RWF_DSYNC);
	assert_int_equal(count(REC_SQE, is_fdatasync), 0);
	assert_int_equal(w.io.syncs + w.io.dsync_writes, 0);

	assert_int_equal(run_io(f, &w, v, TGT_IO_WRITE, 8192, 8192, buf, true), 0);
	sub = find(REC_AIO_SUBMIT, io, is_aio_write);
	evt = find(REC_AIO_EVENT, io, NULL);
	done = find(REC_COMPLETE, io, NULL);
	if (sub < 0 || !(sub < evt && evt < done))
		dump_log();
	assert_true(sub >= 0);
	assert_true(log_[sub].flags & RWF_DSYNC);
	assert_true(sub < evt && evt < done);
	assert_int_equal(log_[evt].res, 8192);
	assert_int_equal(w.io.dsync_writes, 1);

	/* aio sends FLUSH through the reactor's io_uring helper */
	check_flush(f, v);

	tgt_buf_free(tgt_reactor_pool(f->r), buf);
	assert_int_equal(tgt_volume_close(v), 0);
}

/* FUA WRITE_ZEROES on a file: the zeroing, then an fdatasync, then done. */
static void test_write_zeroes_fua(void **state)
{
	struct fixture *f = *state;
	struct tgt_volume *v = open_vol(f, "uring");
	struct waiter w;
	uint64_t ev = (uint64_t)(uintptr_t)&w.io.ev;
	int zero, sync, done;

	if (!(v->flags & RBLK_VOL_F_WRITE_ZEROES)) {
		tgt_volume_close(v);
		skip();	/* the file system has no ZERO_RANGE */
	}
	vol_fd = v->fd;
	assert_int_equal(run_io(f, &w, v, TGT_IO_WRITE_ZEROES, 4096, 4096, NULL, true), 0);
	zero = find(REC_SQE, ev, NULL);
	sync = find(REC_SQE, ev, is_fdatasync);
	done = find(REC_COMPLETE, (uint64_t)(uintptr_t)&w.io, NULL);
	assert_true(zero >= 0);
	assert_int_equal(log_[zero].opcode, IORING_OP_FALLOCATE);
	assert_true(zero < sync && sync < done);
	assert_int_equal(w.io.syncs, 1);
	assert_int_equal(tgt_volume_close(v), 0);
}

/* ---- the reply: conn.c with a scripted transport --------------------------- */

struct fake_conn {
	struct tgt_conn c;		/* first: conn.c hands us &c */
	uint8_t payload[4096];		/* WRITE data "on the wire" */
	unsigned replies;
	bool freed;
};

static void fake_rsp_sent(struct tgt_event *ev, int res, uint32_t flags)
{
	tgt_req_sent((struct tgt_req *)((char *)ev - offsetof(struct tgt_req, ev)), 0);
}

/* The RSP "goes out": logged, and reported sent on the next loop turn
 * (a transport never calls back into conn.c synchronously). */
static void fake_send_rsp(struct tgt_req *req)
{
	struct fake_conn *f = (struct fake_conn *)req->conn;

	record(REC_REPLY, req->opcode, 0, -1, req->tag, req->status);
	f->replies++;
	req->ev.done = fake_rsp_sent;
	tgt_reactor_defer(req->conn->r, &req->ev, 0);
}

static void fake_data_done(struct tgt_event *ev, int res, uint32_t flags)
{
	tgt_req_data_done((struct tgt_req *)((char *)ev - offsetof(struct tgt_req, ev)), 0);
}

static int fake_fetch_data(struct tgt_req *req)
{
	struct fake_conn *f = (struct fake_conn *)req->conn;

	memcpy(req->buf, f->payload, req->length);
	req->ev.done = fake_data_done;
	tgt_reactor_defer(req->conn->r, &req->ev, 0);
	return 0;
}

static int fake_send_pdu(struct tgt_conn *c, const void *pdu, size_t len)
{
	return 0;	/* LOGIN_RSP: the state of c says how LOGIN went */
}

static void fake_resume(struct tgt_conn *c) {}
static void fake_shutdown(struct tgt_conn *c, bool force) {}

static void fake_free(struct tgt_conn *c)
{
	((struct fake_conn *)c)->freed = true;
}

static const struct tgt_transport_ops fake_tp = {
	.name = "fake",
	.flags = TGT_TP_F_INBAND_DATA,
	.fetch_data = fake_fetch_data,
	.send_rsp = fake_send_rsp,
	.send_pdu = fake_send_pdu,
	.resume = fake_resume,
	.shutdown = fake_shutdown,
	.free = fake_free,
};

/* Sends one command capsule (plus payload length for a WRITE) and runs the
 * reactor until its reply went out; the reply must not precede that. */
static void conn_cmd(struct fixture *f, struct fake_conn *fc, uint8_t opcode,
		     uint8_t flags, uint32_t tag, uint32_t len)
{
	struct rblk_cmd cmd = { .opcode = opcode, .flags = flags, .tag = tag,
				.length = len };
	uint8_t capsule[sizeof(struct rblk_wire_cmd)];
	uint32_t pdu_len = sizeof(capsule) + (opcode == RBLK_OP_WRITE ? len : 0);
	int turns = 0;

	rblk_encode_cmd(capsule, &cmd, pdu_len);
	while (tgt_reactor_run_once(f->r, false) > 0)
		;
	nlog = 0;
	fc->replies = 0;
	assert_int_equal(tgt_conn_pdu(&fc->c, capsule, sizeof(capsule), pdu_len), 0);
	assert_int_equal(fc->replies, 0);
	while (!fc->replies && turns++ < 1000)
		assert_true(tgt_reactor_run_once(f->r, true) >= 0);
	assert_int_equal(fc->replies, 1);
	/* let the "sent" report run so the slot is free again */
	while (tgt_reactor_run_once(f->r, false) > 0)
		;
}

static void conn_chain(struct fixture *f, const char *backend)
{
	struct tgt_volume_cfg cfg = { .size = VOL_SIZE, .allow_any_host = true };
	struct tgt_server srv;
	struct rblk_login l = { .queue_depth = 4 };
	struct fake_conn *fc = calloc(1, sizeof(*fc));
	struct tgt_volume *v = NULL;
	struct tgt_io_stats vs;
	uint8_t pdu[sizeof(struct rblk_wire_login)];
	struct tgt_req *req;
	uint64_t key;
	int a, b, reply;
	size_t n;
	char err[256];

	assert_non_null(fc);
	memset(&srv, 0, sizeof(srv));
	srv.cfg.max_queue_depth = 16;
	srv.cfg.login_timeout = 0;
	snprintf(cfg.name, sizeof(cfg.name), "v");
	snprintf(cfg.backend, sizeof(cfg.backend), "%s", backend);
	cfg.path = f->path;
	assert_int_equal(tgt_exports_init(1), 0);
	if (tgt_volume_open(&v, &cfg, err, sizeof(err)))
		fail_msg("open: %s", err);
	vol_fd = v->fd;
	if (!strcmp(backend, "aio") && !v->direct) {
		tgt_volume_close(v);
		tgt_exports_fini();
		free(fc);
		skip();
	}
	assert_int_equal(tgt_export_add(v, &cfg, err, sizeof(err)), 0);

	tgt_conn_init(&fc->c, &fake_tp, &srv, f->r, "test:1", NULL);
	snprintf(l.volume, sizeof(l.volume), "v");
	snprintf(l.host, sizeof(l.host), "h");
	n = rblk_encode_login(pdu, &l);
	assert_int_equal(tgt_conn_pdu(&fc->c, pdu, n, (uint32_t)n), 0);
	assert_int_equal(fc->c.state, TGT_CONN_LIVE);

	/* FLUSH: fdatasync submitted, its CQE, then (only then) the reply */
	conn_cmd(f, fc, RBLK_OP_FLUSH, 0, 1, 0);
	req = &fc->c.reqs[1];
	key = (uint64_t)(uintptr_t)&req->io.ev;
	a = find(REC_SQE, key, is_fdatasync);
	b = find(REC_CQE, key, NULL);
	reply = find(REC_REPLY, 1, NULL);
	if (a < 0 || !(a < b && b < reply))
		dump_log();
	assert_true(a >= 0);
	assert_true(a < b && b < reply);
	assert_int_equal(log_[reply].res, RBLK_S_OK);

	/* FUA WRITE: issued with RWF_DSYNC, its completion, then the reply */
	memset(fc->payload, 0x3c, sizeof(fc->payload));
	conn_cmd(f, fc, RBLK_OP_WRITE, RBLK_CMD_F_FUA, 2, 4096);
	req = &fc->c.reqs[2];
	if (!strcmp(backend, "aio")) {
		key = (uint64_t)(uintptr_t)&req->io;
		a = find(REC_AIO_SUBMIT, key, is_aio_write);
		b = find(REC_AIO_EVENT, key, NULL);
	} else {
		key = (uint64_t)(uintptr_t)&req->io.ev;
		a = find(REC_SQE, key, is_uring_write);
		b = find(REC_CQE, key, NULL);
	}
	reply = find(REC_REPLY, 2, NULL);
	if (a < 0 || !(a < b && b < reply))
		dump_log();
	assert_true(a >= 0);
	assert_true(log_[a].flags & RWF_DSYNC);
	assert_true(a < b && b < reply);
	assert_int_equal(log_[reply].res, RBLK_S_OK);

	/* a plain WRITE adds nothing to the durability counters */
	conn_cmd(f, fc, RBLK_OP_WRITE, 0, 3, 4096);

	/* connection, session and volume (export) counters agree */
	assert_int_equal(fc->c.stats.dur[TGT_DUR_FLUSH], 1);
	assert_int_equal(fc->c.stats.dur[TGT_DUR_FUA], 1);
	assert_int_equal(fc->c.stats.dur[TGT_DUR_FDATASYNC], 1);
	assert_int_equal(fc->c.stats.dur[TGT_DUR_DSYNC_WRITE], 1);
	assert_memory_equal(fc->c.sess->stats.dur, fc->c.stats.dur,
			    sizeof(fc->c.stats.dur));
	tgt_export_stats(fc->c.sess->exp, &vs);
	assert_memory_equal(vs.dur, fc->c.stats.dur, sizeof(vs.dur));
	assert_int_equal(vs.op[TGT_STAT_WRITE].ops, 2);

	tgt_conn_close(&fc->c, true, NULL);
	while (tgt_reactor_run_once(f->r, false) > 0)
		;
	assert_true(fc->freed);
	tgt_exports_fini();
	free(fc);
}

static void test_conn_uring(void **state)
{
	conn_chain(*state, "uring");
}

static void test_conn_aio(void **state)
{
	conn_chain(*state, "aio");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_uring_flush_fua_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aio_flush_fua_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_zeroes_fua, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conn_uring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conn_aio, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
