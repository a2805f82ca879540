// SPDX-License-Identifier: MIT
/*
 * Backends on temp files, driven by a reactor without its thread
 * (tgt_reactor_run_once): data written is read back, FUA writes, flush,
 * discard and write-zeroes read back as zeroes, read-only volumes refuse
 * writes; plus volume open rules and the buffer pool allocator.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cmocka.h>

#include "reactor_fixture.h"

#include "backend.h"
#include "bufpool.h"
#include "offload.h"
#include "reactor.h"
#include "volume.h"

#define VOL_SIZE	(4u << 20)

/* Runs one command to completion; returns its result (0 or -errno). */
static int run_io(struct fixture *f, struct tgt_volume *v, int op,
		  uint64_t off, uint32_t len, void *buf, bool fua)
{
	struct waiter w;
	int ret, turns = 0;

	memset(&w, 0, sizeof(w));
	w.io.r = f->r;
	w.io.vol = v;
	w.io.op = op;
	w.io.fua = fua;
	w.io.offset = off;
	w.io.length = len;
	w.io.buf = buf;
	w.io.buf_index = buf ? tgt_reactor_buf_index(f->r) : -1;
	w.io.complete = waiter_done;
	ret = tgt_backend_submit(&w.io);
	if (ret)
		return ret;
	/* complete() must never run inside submit() */
	assert_int_equal(w.done, 0);
	while (!w.done && turns++ < 1000)
		assert_true(tgt_reactor_run_once(f->r, true) >= 0);
	assert_int_equal(w.done, 1);
	return w.res;
}

/* direct = no for the volumes open_vol() opens; teardown clears it. */
static bool open_buffered;
/* Small I/O on the reactor (as for tmpfs) for the volumes open_vol()
 * opens; teardown clears it. */
static bool force_inline;

static int setup(void **state)
{
	return reactor_fixture_setup(state, "backend");
}

static int teardown(void **state)
{
	open_buffered = false;
	force_inline = false;
	return reactor_fixture_teardown(state);
}

static struct tgt_volume *open_vol(struct fixture *f, const char *backend,
				   uint64_t size, bool ro)
{
	struct tgt_volume_cfg cfg = { .size = size, .read_only = ro,
				      .buffered = open_buffered };
	struct tgt_volume *v = NULL;
	char err[256];

	snprintf(cfg.name, sizeof(cfg.name), "t");
	snprintf(cfg.backend, sizeof(cfg.backend), "%s", backend);
	cfg.path = strcmp(backend, "null") ? f->path : NULL;
	if (tgt_volume_open(&v, &cfg, err, sizeof(err)))
		fail_msg("open %s: %s", backend, err);
	if (force_inline)
		v->mem_inline = true;
	return v;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void data_roundtrip(struct fixture *f, const char *backend)
{
	struct tgt_bufpool *pool = tgt_reactor_pool(f->r);
	struct tgt_volume *v = open_vol(f, backend, VOL_SIZE, false);
	uint8_t *wbuf = tgt_buf_alloc(pool, 1u << 20);
	uint8_t *rbuf = tgt_buf_alloc(pool, 1u << 20);

	assert_non_null(wbuf);
	assert_non_null(rbuf);
	assert_true(v->size == VOL_SIZE);
	assert_int_equal(v->block_size, 512);
	assert_true(v->flags & RBLK_VOL_F_FLUSH);
	assert_true(v->flags & RBLK_VOL_F_FUA);

	/* big and small, aligned to 512 only, plus a FUA write */
	fill(wbuf, 1u << 20, 1);
	assert_int_equal(run_io(f, v, TGT_IO_WRITE, 512, 1u << 20, wbuf, false), 0);
	memset(rbuf, 0xaa, 1u << 20);
	assert_int_equal(run_io(f, v, TGT_IO_READ, 512, 1u << 20, rbuf, false), 0);
	assert_memory_equal(rbuf, wbuf, 1u << 20);

	fill(wbuf, 4096, 2);
	assert_int_equal(run_io(f, v, TGT_IO_WRITE, VOL_SIZE - 4096, 4096, wbuf, true), 0);
	assert_int_equal(run_io(f, v, TGT_IO_READ, VOL_SIZE - 4096, 4096, rbuf, false), 0);
	assert_memory_equal(rbuf, wbuf, 4096);
	assert_int_equal(run_io(f, v, TGT_IO_FLUSH, 0, 0, NULL, false), 0);

	/* never-written space reads as zeroes */
	memset(rbuf, 0xaa, 8192);
	assert_int_equal(run_io(f, v, TGT_IO_READ, 2u << 20, 8192, rbuf, false), 0);
	assert_true(all_zero(rbuf, 8192));

	tgt_buf_free(pool, wbuf);
	tgt_buf_free(pool, rbuf);
	assert_int_equal(tgt_volume_close(v), 0);

	/* data survives close + reopen (what a target restart does) */
	v = open_vol(f, backend, VOL_SIZE, true);
	rbuf = tgt_buf_alloc(pool, 4096);
	fill(wbuf = malloc(4096), 4096, 2);
	assert_int_equal(run_io(f, v, TGT_IO_READ, VOL_SIZE - 4096, 4096, rbuf, false), 0);
	assert_memory_equal(rbuf, wbuf, 4096);
	free(wbuf);
	tgt_buf_free(pool, rbuf);
	tgt_volume_close(v);
	unlink(f->path);
}

static void test_uring_data(void **state)
{
	data_roundtrip(*state, "uring");
}

static void test_aio_data(void **state)
{
	data_roundtrip(*state, "aio");
}

/*
 * DISCARD and WRITE_ZEROES on a written volume: the range reads back as
 * zeroes, the data around it is intact.  A file system without
 * PUNCH_HOLE / ZERO_RANGE (probed at open) makes the test skip, saying so.
 */
static void discard_zeroes(struct fixture *f, const char *backend, uint32_t cap)
{
	struct tgt_bufpool *pool = tgt_reactor_pool(f->r);
	struct tgt_volume *v = open_vol(f, backend, VOL_SIZE, false);
	uint8_t *wbuf = tgt_buf_alloc(pool, 1u << 20);
	uint8_t *rbuf = tgt_buf_alloc(pool, 1u << 20);
	bool has = v->flags & cap;

	if (has) {
		fill(wbuf, 1u << 20, 1);
		assert_int_equal(run_io(f, v, TGT_IO_WRITE, 512, 1u << 20, wbuf, false), 0);
		if (cap == RBLK_VOL_F_DISCARD)
			assert_int_equal(run_io(f, v, TGT_IO_DISCARD, 512 + 65536, 65536, NULL, false), 0);
		else
			assert_int_equal(run_io(f, v, TGT_IO_WRITE_ZEROES, 512 + 65536, 65536, NULL, true), 0);
		memset(rbuf, 0xaa, 1u << 20);
		assert_int_equal(run_io(f, v, TGT_IO_READ, 512, 1u << 20, rbuf, false), 0);
		assert_true(all_zero(rbuf + 65536, 65536));
		assert_memory_equal(rbuf, wbuf, 65536);
		assert_memory_equal(rbuf + 131072, wbuf + 131072, 65536);
	}
	tgt_buf_free(pool, wbuf);
	tgt_buf_free(pool, rbuf);
	assert_int_equal(tgt_volume_close(v), 0);
	unlink(f->path);
	if (!has) {
		print_message("%s: the file system under %s has no %s: skipped\n", backend,
			      f->path, cap == RBLK_VOL_F_DISCARD ? "PUNCH_HOLE (DISCARD)" :
			      "ZERO_RANGE (WRITE_ZEROES)");
		skip();
	}
}

static void test_uring_discard(void **state)
{
	discard_zeroes(*state, "uring", RBLK_VOL_F_DISCARD);
}

static void test_uring_write_zeroes(void **state)
{
	discard_zeroes(*state, "uring", RBLK_VOL_F_WRITE_ZEROES);
}

static void test_aio_discard(void **state)
{
	discard_zeroes(*state, "aio", RBLK_VOL_F_DISCARD);
}

static void test_aio_write_zeroes(void **state)
{
	discard_zeroes(*state, "aio", RBLK_VOL_F_WRITE_ZEROES);
}

/* O_DIRECT on the fd the backend actually uses, seen by the kernel. */
static bool fd_direct(const struct tgt_volume *v)
{
	int fl = fcntl(v->fd, F_GETFL);

	assert_true(fl >= 0);
	return fl & O_DIRECT;
}

/* direct = yes (default) takes O_DIRECT where the store allows it;
 * direct = no never does, and the data path still round-trips. */
static void direct_modes(struct fixture *f, const char *backend)
{
	struct tgt_volume *v = open_vol(f, backend, VOL_SIZE, false);

	assert_false(v->buffered);
	assert_int_equal(v->direct, fd_direct(v));
	if (!v->direct)
		print_message("%s: no O_DIRECT on this file system\n", backend);
	tgt_volume_close(v);

	open_buffered = true;
	v = open_vol(f, backend, VOL_SIZE, false);
	assert_true(v->buffered);
	assert_false(v->direct);
	assert_false(fd_direct(v));
	tgt_volume_close(v);
	unlink(f->path);
	data_roundtrip(f, backend);
}

static void test_direct_uring(void **state)
{
	direct_modes(*state, "uring");
}

static void test_direct_aio(void **state)
{
	direct_modes(*state, "aio");
}

/*
 * Submits a 4 KiB read and reports whether the data was in buf when
 * submit returned: a read done on the reactor (mem_inline) has copied it
 * already, one handed to io_uring has not even been submitted.  Either way
 * complete() runs later, and the data is right then.
 */
static bool read_is_synchronous(struct fixture *f, struct tgt_volume *v)
{
	struct tgt_bufpool *pool = tgt_reactor_pool(f->r);
	uint8_t *wbuf = tgt_buf_alloc(pool, 4096), *rbuf = tgt_buf_alloc(pool, 4096);
	struct waiter w = { .io = { .r = f->r, .vol = v, .op = TGT_IO_READ,
				    .offset = 8192, .length = 4096, .buf = rbuf,
				    .buf_index = tgt_reactor_buf_index(f->r),
				    .complete = waiter_done } };
	bool sync;

	fill(wbuf, 4096, 9);
	assert_int_equal(run_io(f, v, TGT_IO_WRITE, 8192, 4096, wbuf, false), 0);
	memset(rbuf, 0xaa, 4096);
	assert_int_equal(tgt_backend_submit(&w.io), 0);
	assert_int_equal(w.done, 0);
	sync = memcmp(rbuf, wbuf, 4096) == 0;
	while (!w.done)
		assert_true(tgt_reactor_run_once(f->r, true) >= 0);
	assert_int_equal(w.res, 0);
	assert_memory_equal(rbuf, wbuf, 4096);
	tgt_buf_free(pool, wbuf);
	tgt_buf_free(pool, rbuf);
	return sync;
}

/* The reactor-side path of the uring backend, forced on a file of the
 * build tree: small I/O (4 KiB, FUA, holes) runs on the reactor, 1 MiB
 * still through io_uring, and the data round-trips through both. */
static void test_uring_inline(void **state)
{
	struct fixture *f = *state;
	struct tgt_volume *v = open_vol(f, "uring", VOL_SIZE, false);

	assert_false(read_is_synchronous(f, v));
	tgt_volume_close(v);
	unlink(f->path);
	force_inline = true;
	v = open_vol(f, "uring", VOL_SIZE, false);
	assert_true(read_is_synchronous(f, v));
	tgt_volume_close(v);
	unlink(f->path);
	data_roundtrip(f, "uring");
}

/* A file on tmpfs takes the reactor-side path exactly when the kernel
 * has no nonblocking I/O for it; a file of the build tree never does. */
static void test_uring_tmpfs(void **state)
{
	struct fixture *f = *state;
	struct tgt_volume *v = open_vol(f, "uring", VOL_SIZE, false);
	char saved[sizeof(f->path)], tmpl[] = "/dev/shm/rblk-unit-XXXXXX";
	struct statfs sfs;
	struct iovec iov = { .iov_len = 4096 };
	int fd;
	bool nowait;

	if (statfs(f->dir, &sfs) == 0 && sfs.f_type != TMPFS_MAGIC &&
	    sfs.f_type != RAMFS_MAGIC)
		assert_false(v->mem_inline);
	tgt_volume_close(v);
	unlink(f->path);
	if (statfs("/dev/shm", &sfs) || sfs.f_type != TMPFS_MAGIC) {
		print_message("no tmpfs at /dev/shm: the tmpfs half skipped\n");
		skip();
	}
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, VOL_SIZE), 0);
	iov.iov_base = malloc(4096);
	nowait = preadv2(fd, &iov, 1, 0, RWF_NOWAIT) >= 0 || errno != EOPNOTSUPP;
	free(iov.iov_base);
	close(fd);
	memcpy(saved, f->path, sizeof(saved));
	snprintf(f->path, sizeof(f->path), "%s", tmpl);
	v = open_vol(f, "uring", VOL_SIZE, false);
	print_message("tmpfs: nonblocking I/O %s, mem_inline %d\n",
		      nowait ? "offered" : "not offered", v->mem_inline);
	assert_int_equal(v->mem_inline, !nowait);
	assert_int_equal(read_is_synchronous(f, v), !nowait);
	tgt_volume_close(v);
	unlink(tmpl);
	memcpy(f->path, saved, sizeof(saved));
}

static void test_null(void **state)
{
	struct fixture *f = *state;
	struct tgt_volume *v = open_vol(f, "null", VOL_SIZE, false);
	uint8_t *buf = tgt_buf_alloc(tgt_reactor_pool(f->r), 4096);

	assert_int_equal(v->fd, -1);
	memset(buf, 0x55, 4096);
	assert_int_equal(run_io(f, v, TGT_IO_WRITE, 0, 4096, buf, true), 0);
	assert_int_equal(run_io(f, v, TGT_IO_READ, 0, 4096, buf, false), 0);
	assert_true(all_zero(buf, 4096));
	assert_int_equal(run_io(f, v, TGT_IO_FLUSH, 0, 0, NULL, false), 0);
	assert_int_equal(run_io(f, v, TGT_IO_DISCARD, 0, 4096, NULL, false), 0);
	tgt_buf_free(tgt_reactor_pool(f->r), buf);
	tgt_volume_close(v);
}

static void test_read_only(void **state)
{
	struct fixture *f = *state;
	struct tgt_volume *v = open_vol(f, "uring", VOL_SIZE, false);
	uint8_t *buf = tgt_buf_alloc(tgt_reactor_pool(f->r), 4096);

	tgt_volume_close(v);
	v = open_vol(f, "uring", VOL_SIZE, true);
	assert_true(v->flags & RBLK_VOL_F_READ_ONLY);
	assert_false(v->flags & (RBLK_VOL_F_DISCARD | RBLK_VOL_F_WRITE_ZEROES));
	/* the store itself is opened read-only: a write that slipped past
	 * command validation still cannot change data */
	memset(buf, 1, 4096);
	assert_int_equal(run_io(f, v, TGT_IO_WRITE, 0, 4096, buf, false), -EBADF);
	assert_int_equal(run_io(f, v, TGT_IO_READ, 0, 4096, buf, false), 0);
	assert_true(all_zero(buf, 4096));
	tgt_buf_free(tgt_reactor_pool(f->r), buf);
	tgt_volume_close(v);
	unlink(f->path);
}

static void test_fault(void **state)
{
	struct fixture *f = *state;
	struct tgt_volume *v;
	uint8_t *buf = tgt_buf_alloc(tgt_reactor_pool(f->r), 4096);

	setenv("RBLK_FAULT_EIO", "8192:4096", 1);
	v = open_vol(f, "fault", VOL_SIZE, false);
	assert_int_equal(run_io(f, v, TGT_IO_READ, 0, 4096, buf, false), 0);
	assert_int_equal(run_io(f, v, TGT_IO_READ, 8192, 4096, buf, false), -EIO);
	assert_int_equal(run_io(f, v, TGT_IO_WRITE, 4096, 8192, buf, false), -EIO);
	tgt_volume_close(v);
	unsetenv("RBLK_FAULT_EIO");
	tgt_buf_free(tgt_reactor_pool(f->r), buf);
	unlink(f->path);
}

static void test_volume_open_rules(void **state)
{
	struct fixture *f = *state;
	struct tgt_volume_cfg cfg = { .size = 0 };
	struct tgt_volume *v;
	struct stat st;
	char err[256];

	snprintf(cfg.name, sizeof(cfg.name), "t");
	snprintf(cfg.backend, sizeof(cfg.backend), "uring");
	cfg.path = f->path;
	unlink(f->path);
	/* missing file and no size: refused, nothing created */
	assert_int_equal(tgt_volume_open(&v, &cfg, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no size"));
	assert_int_equal(stat(f->path, &st), -1);
	/* created sparse */
	cfg.size = 1u << 20;
	assert_int_equal(tgt_volume_open(&v, &cfg, err, sizeof(err)), 0);
	tgt_volume_close(v);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, 1u << 20);
	/* a larger size extends (lossless) */
	cfg.size = 2u << 20;
	assert_int_equal(tgt_volume_open(&v, &cfg, err, sizeof(err)), 0);
	assert_true(v->size == 2u << 20);
	tgt_volume_close(v);
	/* a smaller size would hide data: refused, file untouched */
	cfg.size = 1u << 20;
	assert_int_equal(tgt_volume_open(&v, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "larger than the configured size"));
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, 2u << 20);
	/* no size: taken from the file */
	cfg.size = 0;
	assert_int_equal(tgt_volume_open(&v, &cfg, err, sizeof(err)), 0);
	assert_true(v->size == 2u << 20);
	tgt_volume_close(v);
	/* not a multiple of 512 */
	assert_int_equal(truncate(f->path, 1000), 0);
	assert_int_equal(tgt_volume_open(&v, &cfg, err, sizeof(err)), -EINVAL);
	/* a directory is not a store */
	cfg.path = f->dir;
	assert_int_equal(tgt_volume_open(&v, &cfg, err, sizeof(err)), -EISDIR);
	unlink(f->path);
}

/* A buffer is a power-of-two chunk, 4 KiB at least: what a request of n
 * bytes takes from the pool. */
static void test_bufpool_chunk_size(void **state)
{
	assert_int_equal(tgt_buf_chunk_size(1), 4096);
	assert_int_equal(tgt_buf_chunk_size(4096), 4096);
	assert_int_equal(tgt_buf_chunk_size(5000), 8192);
	assert_int_equal(tgt_buf_chunk_size((1u << 20) - 512), 1u << 20);
	assert_int_equal(tgt_buf_chunk_size(1u << 20), 1u << 20);
}

static void test_bufpool(void **state)
{
	struct tgt_bufpool *p;
	void *big[4], *small[600], *x;

	assert_int_equal(tgt_bufpool_create(&p, 3u << 20), 0);
	assert_true(tgt_bufpool_size(p) == 3u << 20);
	/* 3 x 1 MiB, then nothing of that size */
	for (int i = 0; i < 3; i++) {
		big[i] = tgt_buf_alloc(p, 1u << 20);
		assert_non_null(big[i]);
		assert_int_equal((uintptr_t)big[i] % 4096, 0);
	}
	assert_null(tgt_buf_alloc(p, 512));
	assert_null(tgt_buf_alloc(p, (1u << 20) + 1));
	tgt_buf_free(p, big[1]);
	/* a freed 1 MiB chunk splits into 256 x 4 KiB, then merges back */
	for (int i = 0; i < 256; i++) {
		small[i] = tgt_buf_alloc(p, 4096);
		assert_non_null(small[i]);
		memset(small[i], i, 4096);	/* no overlap: ASan would see */
	}
	assert_null(tgt_buf_alloc(p, 1));
	for (int i = 0; i < 256; i += 2)
		tgt_buf_free(p, small[i]);
	assert_null(tgt_buf_alloc(p, 8192));	/* fragmented: no 8 KiB */
	for (int i = 1; i < 256; i += 2)
		tgt_buf_free(p, small[i]);
	x = tgt_buf_alloc(p, 1u << 20);
	assert_non_null(x);			/* coalesced again */
	tgt_buf_free(p, x);
	tgt_buf_free(p, big[0]);
	tgt_buf_free(p, big[2]);
	assert_int_equal(tgt_bufpool_in_use(p), 0);
	tgt_bufpool_destroy(p);
}

/* ---- reactor thread: work handoff, stop, drain hooks --------------- */

struct rt_state {
	struct tgt_work work[8];
	pthread_t main_thread;
	int ran;			/* work items run (reactor thread) */
	int off_main;			/* ... of them not on the main thread */
	int stops, forced;
	int busy_turns;			/* pretend to drain for a few turns */
};

static struct rt_state rt;

static void rt_work(struct tgt_reactor *r, struct tgt_work *w)
{
	__atomic_add_fetch(&rt.ran, 1, __ATOMIC_SEQ_CST);
	if (!pthread_equal(pthread_self(), rt.main_thread))
		__atomic_add_fetch(&rt.off_main, 1, __ATOMIC_SEQ_CST);
}

static void rt_on_stop(struct tgt_reactor *r, bool force)
{
	rt.stops++;
	rt.forced += force;
}

static bool rt_busy(struct tgt_reactor *r)
{
	return rt.busy_turns-- > 0;
}

static void test_reactor_thread(void **state)
{
	struct tgt_reactor_params p = {
		.id = 7, .on_stop = rt_on_stop, .busy = rt_busy,
	};
	struct tgt_reactor *r;

	memset(&rt, 0, sizeof(rt));
	rt.main_thread = pthread_self();
	rt.busy_turns = 3;
	assert_int_equal(tgt_reactor_create(&r, &p), 0);
	assert_int_equal(tgt_reactor_id(r), 7);
	assert_null(tgt_reactor_pool(r));
	assert_int_equal(tgt_reactor_buf_index(r), -1);
	assert_int_equal(tgt_reactor_start(r), 0);
	for (int i = 0; i < 8; i++) {
		rt.work[i].fn = rt_work;
		tgt_reactor_post_work(r, &rt.work[i]);
	}
	for (int i = 0; i < 200 && __atomic_load_n(&rt.ran, __ATOMIC_SEQ_CST) < 8; i++)
		usleep(10000);
	assert_int_equal(__atomic_load_n(&rt.ran, __ATOMIC_SEQ_CST), 8);
	assert_int_equal(__atomic_load_n(&rt.off_main, __ATOMIC_SEQ_CST), 8);
	tgt_reactor_stop(r);
	tgt_reactor_join(r);
	/* stopped once, gracefully, and ran until busy() said done */
	assert_int_equal(rt.stops, 1);
	assert_int_equal(rt.forced, 0);
	assert_true(rt.busy_turns < 0);
	assert_true(tgt_reactor_stopping(r));
	tgt_reactor_destroy(r);
}

static int order[4], norder;
static int ticks;

static void defer_tick(struct tgt_event *ev, int res, uint32_t flags)
{
	ticks++;
}

static void defer_done(struct tgt_event *ev, int res, uint32_t flags)
{
	order[norder++] = res;
}

static void test_reactor_defer(void **state)
{
	struct tgt_reactor_params p = { .id = 0 };
	struct tgt_event ev[3] = {
		{ .done = defer_done }, { .done = defer_done }, { .done = defer_done },
	};
	struct tgt_reactor *r;

	norder = 0;
	assert_int_equal(tgt_reactor_create(&r, &p), 0);
	for (int i = 0; i < 3; i++)
		tgt_reactor_defer(r, &ev[i], 10 + i);
	assert_int_equal(norder, 0);		/* never synchronous */
	assert_true(tgt_reactor_run_once(r, true) > 0);	/* must not block */
	assert_int_equal(norder, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(order[i], 10 + i);	/* FIFO */
	tgt_reactor_destroy(r);
}

struct spinner {
	struct tgt_event ev;		/* first: spin_done casts back */
	struct tgt_reactor *r;
	int runs;
};

/* Work that defers itself again on every turn, as a spinning CQ does. */
static void spin_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct spinner *s = (struct spinner *)ev;

	s->runs++;
	tgt_reactor_defer(s->r, ev, 0);
}

static void nop_done(struct tgt_event *ev, int res, uint32_t flags)
{
	ev->res = 1;
}

/*
 * A turn that only runs deferred work leaves its SQEs to a later turn's
 * io_uring_enter (no syscall of its own), but work that defers itself on
 * every turn must not keep an SQE from the kernel for more than a few.
 */
static void test_reactor_defer_submits(void **state)
{
	struct tgt_reactor_params p = { .id = 0 };
	struct spinner spin = { .ev = { .done = spin_done } };
	struct tgt_event nop = { .done = nop_done };
	struct io_uring_sqe *sqe;
	int turns = 0;

	assert_int_equal(tgt_reactor_create(&spin.r, &p), 0);
	assert_true(tgt_reactor_run_once(spin.r, false) >= 0);
	tgt_reactor_defer(spin.r, &spin.ev, 0);
	assert_true(tgt_reactor_run_once(spin.r, true) > 0);	/* must not block */
	sqe = tgt_reactor_sqe(spin.r);
	io_uring_prep_nop(sqe);
	tgt_sqe_set_event(sqe, &nop);
	assert_true(tgt_reactor_run_once(spin.r, true) > 0);
	assert_int_equal(nop.res, 0);		/* that turn made no syscall */
	while (!nop.res && turns < 2 * TGT_REACTOR_TURNS_UNSUBMITTED) {
		assert_true(tgt_reactor_run_once(spin.r, true) > 0);
		turns++;
	}
	assert_int_equal(nop.res, 1);		/* submitted, and reaped */
	assert_true(turns <= TGT_REACTOR_TURNS_UNSUBMITTED);
	assert_int_equal(spin.runs, turns + 2);	/* ran on every turn */
	tgt_reactor_destroy(spin.r);
}

/* ---- offload thread: blocking calls off the reactor ------------------ */

struct ojob {
	struct tgt_offload_job job;	/* first: casts back */
	int gate;			/* read end: run() blocks on it */
	int sleep_ms;
	pthread_t ran_on;
	int started;
	int ran;
	int done;
	int res;
	pthread_t done_on;
};

static int ojob_run(struct tgt_offload_job *job)
{
	struct ojob *o = (struct ojob *)job;
	char c;

	o->ran_on = pthread_self();
	__atomic_store_n(&o->started, 1, __ATOMIC_SEQ_CST);
	if (o->gate >= 0 && read(o->gate, &c, 1) != 1)
		return -EIO;
	if (o->sleep_ms)
		usleep(o->sleep_ms * 1000);
	__atomic_store_n(&o->ran, 1, __ATOMIC_SEQ_CST);
	return -o->sleep_ms - 100;
}

static void ojob_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct ojob *o = (struct ojob *)((char *)ev - offsetof(struct ojob, job.ev));

	o->done++;
	o->res = res;
	o->done_on = pthread_self();
}

static void ojob_init(struct ojob *o, int gate, int sleep_ms)
{
	memset(o, 0, sizeof(*o));
	o->job.run = ojob_run;
	o->job.ev.done = ojob_done;
	o->gate = gate;
	o->sleep_ms = sleep_ms;
}

static void test_offload(void **state)
{
	struct fixture *f = *state;
	struct tgt_event tick = { .done = defer_tick };
	struct ojob a, b, c;
	int gate[2];

	assert_int_equal(pipe(gate), 0);
	assert_null(tgt_reactor_slot(f->r, TGT_SLOT_OFFLOAD)->data);
	ojob_init(&a, gate[0], 0);
	ojob_init(&b, -1, 1);
	assert_int_equal(tgt_offload_submit(f->r, &a.job), 0);
	assert_int_equal(tgt_offload_submit(f->r, &b.job), 0);
	assert_non_null(tgt_reactor_slot(f->r, TGT_SLOT_OFFLOAD)->data);
	assert_int_equal(a.done, 0);		/* never inside submit */

	/* a is blocked in its call, and the reactor still turns */
	ticks = 0;
	for (int i = 0; i < 3; i++) {
		tgt_reactor_defer(f->r, &tick, 0);
		assert_true(tgt_reactor_run_once(f->r, true) > 0);
	}
	assert_int_equal(ticks, 3);
	assert_int_equal(a.done + b.done, 0);

	/* released: both complete, in order, on the reactor's thread */
	assert_int_equal(write(gate[1], "x", 1), 1);
	for (int i = 0; i < 1000 && !(a.done && b.done); i++)
		assert_true(tgt_reactor_run_once(f->r, true) >= 0);
	assert_int_equal(a.done, 1);
	assert_int_equal(b.done, 1);
	assert_int_equal(a.res, -100);
	assert_int_equal(b.res, -101);
	assert_false(pthread_equal(a.ran_on, pthread_self()));
	assert_true(pthread_equal(a.done_on, pthread_self()));

	/* one still running at destroy: the thread finishes it and is joined
	 * (teardown would hang or leak otherwise); it is never completed */
	ojob_init(&c, -1, 100);
	assert_int_equal(tgt_offload_submit(f->r, &c.job), 0);
	for (int i = 0; i < 2000 && !__atomic_load_n(&c.started, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	assert_int_equal(__atomic_load_n(&c.started, __ATOMIC_SEQ_CST), 1);
	tgt_reactor_destroy(f->r);
	f->r = NULL;
	assert_int_equal(__atomic_load_n(&c.ran, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(c.done, 0);
	close(gate[0]);
	close(gate[1]);
}

static void *open_gate_later(void *arg)
{
	usleep(100 * 1000);	/* destroy is joining by now */
	if (write(*(int *)arg, "x", 1) != 1)
		abort();
	return NULL;
}

/* A must_run job (a deleted volume's final flush and close) still runs
 * when its reactor stops before it, and is completed by the destroy; a
 * plain job queued before it is dropped as before. */
static void test_offload_must_run(void **state)
{
	struct fixture *f = *state;
	struct ojob a, d, e;
	pthread_t opener;
	int gate[2];

	assert_int_equal(pipe(gate), 0);
	ojob_init(&a, gate[0], 0);
	ojob_init(&d, -1, 0);
	ojob_init(&e, -1, 0);
	d.job.must_run = true;
	assert_int_equal(tgt_offload_submit(f->r, &a.job), 0);
	assert_int_equal(tgt_offload_submit(f->r, &e.job), 0);
	assert_int_equal(tgt_offload_submit(f->r, &d.job), 0);
	for (int i = 0; i < 2000 && !__atomic_load_n(&a.started, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	assert_int_equal(pthread_create(&opener, NULL, open_gate_later, &gate[1]), 0);
	tgt_reactor_destroy(f->r);
	f->r = NULL;
	pthread_join(opener, NULL);
	assert_int_equal(a.ran, 1);
	assert_int_equal(a.done, 0);
	assert_int_equal(e.ran, 0);
	assert_int_equal(e.done, 0);
	assert_int_equal(d.ran, 1);
	assert_int_equal(d.done, 1);
	assert_int_equal(d.res, -100);
	assert_true(pthread_equal(d.done_on, pthread_self()));
	close(gate[0]);
	close(gate[1]);
}

/*
 * A loop device as the store: WRITE_ZEROES (FUA) and DISCARD run as
 * BLKZEROOUT / BLKDISCARD on the offload thread and read back as zeroes.
 * Skipped without root or a free loop device.
 */
static void blkdev_zeroes(struct fixture *f, const char *backend)
{
	struct tgt_volume_cfg cfg = { .size = 0 };
	struct tgt_bufpool *pool = tgt_reactor_pool(f->r);
	struct tgt_volume *v = NULL;
	char cmd[600], loop[64] = "", err[256];
	uint8_t *wbuf, *rbuf;
	FILE *p;
	int fd;

	if (geteuid() != 0) {
		print_message("not root: no loop device, skipped\n");
		skip();
	}
	fd = open(f->path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 16u << 20), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s 2>/dev/null", f->path);
	p = popen(cmd, "r");
	if (!p || !fgets(loop, sizeof(loop), p) || strncmp(loop, "/dev/loop", 9)) {
		if (p)
			pclose(p);
		print_message("cannot set up a loop device, skipped\n");
		skip();
	}
	pclose(p);
	loop[strcspn(loop, "\n")] = 0;

	snprintf(cfg.name, sizeof(cfg.name), "t");
	snprintf(cfg.backend, sizeof(cfg.backend), "%s", backend);
	cfg.path = loop;
	if (tgt_volume_open(&v, &cfg, err, sizeof(err))) {
		snprintf(cmd, sizeof(cmd), "losetup -d %s", loop);
		assert_int_equal(system(cmd), 0);
		fail_msg("open %s: %s", loop, err);
	}
	assert_true(v->is_blkdev);
	assert_true(v->flags & RBLK_VOL_F_WRITE_ZEROES);
	wbuf = tgt_buf_alloc(pool, 1u << 20);
	rbuf = tgt_buf_alloc(pool, 1u << 20);
	fill(wbuf, 1u << 20, 3);
	assert_int_equal(run_io(f, v, TGT_IO_WRITE, 0, 1u << 20, wbuf, false), 0);
	assert_null(tgt_reactor_slot(f->r, TGT_SLOT_OFFLOAD)->data);
	assert_int_equal(run_io(f, v, TGT_IO_WRITE_ZEROES, 65536, 65536, NULL, true), 0);
	assert_non_null(tgt_reactor_slot(f->r, TGT_SLOT_OFFLOAD)->data);
	if (v->flags & RBLK_VOL_F_DISCARD)
		assert_int_equal(run_io(f, v, TGT_IO_DISCARD, 262144, 131072, NULL, false), 0);
	else
		print_message("%s: loop device offers no discard\n", loop);
	memset(rbuf, 0xaa, 1u << 20);
	assert_int_equal(run_io(f, v, TGT_IO_READ, 0, 1u << 20, rbuf, false), 0);
	assert_memory_equal(rbuf, wbuf, 65536);
	assert_true(all_zero(rbuf + 65536, 65536));
	assert_memory_equal(rbuf + 131072, wbuf + 131072, 131072);
	if (v->flags & RBLK_VOL_F_DISCARD)
		assert_true(all_zero(rbuf + 262144, 131072));
	assert_memory_equal(rbuf + 393216, wbuf + 393216, (1u << 20) - 393216);
	/* a zero-out past the end is the device's error, delivered the same way */
	assert_int_not_equal(run_io(f, v, TGT_IO_WRITE_ZEROES, 16u << 20, 4096,
				    NULL, false), 0);
	tgt_buf_free(pool, wbuf);
	tgt_buf_free(pool, rbuf);
	tgt_volume_close(v);
	snprintf(cmd, sizeof(cmd), "losetup -d %s", loop);
	assert_int_equal(system(cmd), 0);
	unlink(f->path);
}

static void test_blkdev_uring(void **state)
{
	blkdev_zeroes(*state, "uring");
}

static void test_blkdev_aio(void **state)
{
	blkdev_zeroes(*state, "aio");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_uring_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aio_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uring_discard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uring_write_zeroes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aio_discard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aio_write_zeroes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_direct_uring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_direct_aio, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uring_inline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uring_tmpfs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_null, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault, setup, teardown),
		cmocka_unit_test_setup_teardown(test_volume_open_rules, setup, teardown),
		cmocka_unit_test(test_bufpool),
		cmocka_unit_test(test_bufpool_chunk_size),
		cmocka_unit_test(test_reactor_thread),
		cmocka_unit_test(test_reactor_defer),
		cmocka_unit_test(test_reactor_defer_submits),
		cmocka_unit_test_setup_teardown(test_offload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offload_must_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blkdev_uring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blkdev_aio, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
