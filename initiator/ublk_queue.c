// SPDX-License-Identifier: MIT
/*
 * One ublk queue: its thread, ring, tag buffers and target connection.
 *
 * Life of a tag: FETCHING (a FETCH/COMMIT_AND_FETCH sits in the kernel)
 * -> the kernel hands us a request -> AT_TARGET (submitted on the
 * connection) or BACKLOG (connection full) -> the target answers ->
 * COMMIT_AND_FETCH with the result -> FETCHING again.  When the device
 * stops the kernel completes the pending fetch with UBLK_IO_RES_ABORT and
 * the tag is DEAD; the thread ends when every tag is dead.
 *
 * With batch I/O (cfg.batch, ublk_batch.h) the same life runs on other
 * commands: PREP_IO_CMDS arms every tag at start, one multishot FETCH
 * brings the kernel's requests as lists of tags, and a tag's answer goes
 * into the turn's one COMMIT, which re-arms it.  When the kernel ends the
 * FETCH with UBLK_IO_RES_ABORT, every armed tag is DEAD, and every other
 * one once it is answered.
 *
 * Handing over (rblkctl restart, ini_queue_hand_over): the thread answers
 * what is at the target, sends nothing new (a request the kernel hands
 * it meanwhile is HELD, never committed), and ends once nothing is at the
 * target or the grace is over.  What it did not commit the kernel gives
 * to the next server (USER_RECOVERY_REISSUE).
 *
 * A lost connection is the client library's to mend: while its queue is
 * CONNECTING it holds what we submitted (the tags stay AT_TARGET, nothing
 * is committed) and accepts more; requests are failed only with what the
 * library fails (fast_io_fail_tmo, ctrl_loss_tmo).  The connection fd
 * rblk_queue_fd() stays the same across reconnects and also wakes us for
 * the library's timers.
 *
 * With --read-policy spread the queue has a second connection, the
 * reader, which starts on another path: READs alternate between the two,
 * everything else goes to the first (the writer's), so one target writes
 * the image while two serve its reads.  A READ the reader cannot take
 * (connecting, failed, full) goes to the writer's connection instead.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "clock.h"
#include "log.h"
#include "ublk_batch.h"
#include "ublk_queue.h"

enum tag_state {
	TAG_IDLE,		/* nothing submitted to the kernel yet */
	TAG_FETCHING,
	TAG_AT_TARGET,
	TAG_BACKLOG,
	TAG_DEAD,
	TAG_HELD,		/* handing over: left to the next server */
};

/* user_data values above any tag */
#define UD_CONN_POLL	0x10000u
#define UD_STOP_POLL	0x10001u
#define UD_GRACE	0x10002u
#define UD_IGNORE	0x10003u
#define UD_READ_POLL	0x10004u
#define UD_PREP		0x10005u	/* batch: PREP_IO_CMDS */
#define UD_FETCH	0x10006u	/* batch: the multishot FETCH_IO_CMDS */
#define UD_COMMIT	0x10010u	/* batch: + the commit's slot */

struct ini_tag {
	struct rblk_io io;
	uint8_t state;
};

struct ini_queue {
	struct ini_queue_cfg cfg;
	struct io_uring ring;
	int ring_ready;
	const struct ublksrv_io_desc *descs;
	size_t descs_len;
	char *bufs;
	size_t bufs_len;
	struct ini_tag *tags;
	struct ini_batch batch;		/* cfg.batch: its commands' buffers */
	int batch_ready;
	int fetch_dead;			/* batch: the kernel ended the FETCH */
	uint16_t *backlog;		/* FIFO of tags waiting for a free slot */
	unsigned bl_head, bl_count;
	int stop_efd;
	atomic_int grace_ms;
	atomic_int hand_over;		/* the stop asked is a hand-over */

	pthread_t thread;
	int started;
	sem_t ready;
	int start_ret;

	/* thread-private loop state */
	int conn_poll_armed;
	int read_poll_armed;
	int read_live;			/* the reader is LIVE: READs may go there */
	unsigned read_turn;		/* alternates READs between the two */
	int spinning;			/* not waiting: ring and CQ peeked each turn */
	uint64_t last_work_us;		/* adaptive: last turn that did something */
	int stopping;			/* stop asked: grace timer running */
	int abandoned;			/* grace over (or connection lost) */
	int handing;			/* handing over: nothing new is sent */
	int handed;			/* ... and done: the thread ends */
	unsigned ndead;
	unsigned errs_logged;
	uint64_t stop_buf;
	struct __kernel_timespec grace_ts;

	atomic_int conn_state;		/* enum rblk_queue_state */
	atomic_uint reconnects;
	/* Multipath, mirrored for the main thread: each path's state, the
	 * one in use, its failures; and a move the main thread asks for. */
	atomic_int path_state[RBLK_MAX_PATHS];	/* enum rblk_path_state */
	atomic_uint path_failures[RBLK_MAX_PATHS];
	atomic_int active_path;
	atomic_int want_path;		/* -1, or the path to move to */
	/* The reader (spread): its path, its state, a move asked for. */
	atomic_int read_path;		/* -1: no reader */
	atomic_int read_state;		/* enum rblk_queue_state */
	atomic_int want_read_path;
	/* The volume's size that every live connection of this queue was
	 * told (grows with volume.resize); UINT64_MAX while none is live. */
	atomic_uint_fast64_t vol_size;
	atomic_uint_fast64_t served, failed;
};

static uint32_t io_opcode(const struct ini_queue *q, int commit)
{
	if (q->cfg.ioctl_encode)
		return commit ? UBLK_U_IO_COMMIT_AND_FETCH_REQ : UBLK_U_IO_FETCH_REQ;
	return commit ? UBLK_IO_COMMIT_AND_FETCH_REQ : UBLK_IO_FETCH_REQ;
}

static struct io_uring_sqe *get_sqe(struct ini_queue *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	if (!sqe) {
		/* SQ full: push what is queued to make room. */
		io_uring_submit(&q->ring);
		sqe = io_uring_get_sqe(&q->ring);
	}
	return sqe;
}

/* The data of tag's requests, as the kernel knows it (per-tag commands
 * name it; ini_batch_init is given the same layout). */
static char *tag_buf(const struct ini_queue *q, unsigned tag)
{
	return q->bufs + (size_t)tag * q->cfg.buf_bytes;
}

/* FETCH (result ignored) or COMMIT_AND_FETCH with result for one tag. */
static int queue_io_cmd(struct ini_queue *q, unsigned tag, int commit,
			int result)
{
	struct io_uring_sqe *sqe = get_sqe(q);
	struct ublksrv_io_cmd cmd = {
		.q_id = q->cfg.q_id,
		.tag = tag,
		.result = result,
		.addr = (uintptr_t)tag_buf(q, tag),
	};

	if (!sqe)
		return -EBUSY;
	io_uring_prep_rw(IORING_OP_NOP, sqe, 0, NULL, 0, 0);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->cfg.cdev_fd;
	sqe->cmd_op = io_opcode(q, commit);
	sqe->user_data = tag;
	memcpy(ini_sqe_cmd(sqe), &cmd, sizeof(cmd));
	q->tags[tag].state = TAG_FETCHING;
	return 0;
}

static void mark_dead(struct ini_queue *q, unsigned tag)
{
	if (q->tags[tag].state != TAG_DEAD) {
		q->tags[tag].state = TAG_DEAD;
		q->ndead++;
	}
}

/* Batch: the answer waits in this turn's COMMIT (flush_commits). */
static void commit_batched(struct ini_queue *q, unsigned tag, int result)
{
	if (ini_batch_commit(&q->batch, tag, result)) {
		rblk_err("queue %u: no room to commit tag %u", q->cfg.q_id, tag);
		return;
	}
	q->tags[tag].state = TAG_FETCHING;
	if (q->fetch_dead)
		mark_dead(q, tag);	/* committed: the kernel has it back */
}

static void commit_tag(struct ini_queue *q, unsigned tag, int result)
{
	if (result < 0)
		atomic_fetch_add_explicit(&q->failed, 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&q->served, 1, memory_order_relaxed);
	if (q->cfg.batch)
		commit_batched(q, tag, result);
	else if (queue_io_cmd(q, tag, 1, result))
		rblk_err("queue %u: no SQE to commit tag %u", q->cfg.q_id, tag);
}

/* Batch: the turn's answers go to the kernel in one COMMIT.  Returns
 * how many commands it queued (0 or 1). */
static unsigned flush_commits(struct ini_queue *q)
{
	struct io_uring_sqe *sqe;

	if (!q->cfg.batch || !ini_batch_pending(&q->batch))
		return 0;
	sqe = get_sqe(q);
	if (!sqe) {
		rblk_err("queue %u: no SQE for the commit", q->cfg.q_id);
		return 0;	/* tried again next turn */
	}
	sqe->user_data = UD_COMMIT + (unsigned)ini_batch_flush(&q->batch, sqe);
	return 1;
}

static void arm_poll(struct ini_queue *q, int fd, uint64_t ud)
{
	struct io_uring_sqe *sqe = get_sqe(q);

	if (!sqe)
		return;
	io_uring_prep_poll_add(sqe, fd, POLLIN);
	sqe->user_data = ud;
}

/* ---- requests in -------------------------------------------------------- */

/* The block layer knows only a few errnos; anything else becomes EIO. */
static int blk_errno(int err)
{
	switch (err) {
	case -EOPNOTSUPP: case -ENOSPC: case -ETIMEDOUT: case -ENOLINK:
	case -ENODATA: case -EILSEQ: case -ENOMEM: case -EIO:
		return err;
	default:
		return -EIO;
	}
}

static int result_of(struct ini_queue *q, const struct rblk_io *io)
{
	if (io->status != RBLK_S_OK) {
		/* Worth a line, but not one per request of a dead target. */
		if (!q->abandoned && q->errs_logged < 10) {
			q->errs_logged++;
			rblk_warn("queue %u: %s offset %llu length %u: %s",
				  q->cfg.q_id, rblk_opcode_str(io->opcode),
				  (unsigned long long)io->offset, io->length,
				  io->status >= 0 ? rblk_status_str(io->status) :
				  strerror(-io->error));
		}
		return blk_errno(io->error < 0 ? io->error : -EIO);
	}
	/* READ/WRITE commit the byte count (0 would mean "resend"). */
	if (io->opcode == RBLK_OP_READ || io->opcode == RBLK_OP_WRITE)
		return (int)io->length;
	return 0;
}

/* Turns a ublk descriptor into an rblk_io; returns 0 or -errno to commit. */
static int map_request(struct ini_queue *q, unsigned tag)
{
	const struct ublksrv_io_desc *iod = &q->descs[tag];
	struct rblk_io *io = &q->tags[tag].io;
	unsigned op = ublksrv_get_op(iod);
	uint64_t len = (uint64_t)iod->nr_sectors << 9;

	memset(io, 0, sizeof(*io));
	io->priv = (void *)(uintptr_t)tag;
	switch (op) {
	case UBLK_IO_OP_READ:
	case UBLK_IO_OP_WRITE:
		if (!len || len > q->cfg.buf_bytes)
			return -EIO;
		io->opcode = op == UBLK_IO_OP_READ ? RBLK_OP_READ : RBLK_OP_WRITE;
		io->buf = tag_buf(q, tag);
		break;
	case UBLK_IO_OP_FLUSH:
		/* Arrives with start_sector = UINT64_MAX: never range-check it. */
		io->opcode = RBLK_OP_FLUSH;
		return 0;
	case UBLK_IO_OP_DISCARD:
		io->opcode = RBLK_OP_DISCARD;
		break;
	case UBLK_IO_OP_WRITE_ZEROES:
		io->opcode = RBLK_OP_WRITE_ZEROES;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (len > UINT32_MAX)
		return -EIO;
	io->offset = iod->start_sector << 9;
	io->length = (uint32_t)len;
	if ((iod->op_flags & UBLK_IO_F_FUA) &&
	    (io->opcode == RBLK_OP_WRITE || io->opcode == RBLK_OP_WRITE_ZEROES))
		io->flags |= RBLK_CMD_F_FUA;
	return 0;
}

static void backlog_push(struct ini_queue *q, unsigned tag)
{
	q->backlog[(q->bl_head + q->bl_count++) % q->cfg.depth] = tag;
	q->tags[tag].state = TAG_BACKLOG;
}

/*
 * A READ on the reader, every other one while it is LIVE; 0 when it took
 * the command, else the writer's connection is to be tried (the reader's
 * errors never fail a READ the writer's path can serve).
 */
static int send_read_spread(struct ini_queue *q, struct rblk_io *io)
{
	if (!q->cfg.read_conn || !q->read_live || io->opcode != RBLK_OP_READ)
		return -EAGAIN;
	/* All of them while the writer's connection is not LIVE. */
	if ((q->read_turn++ & 1) &&
	    atomic_load_explicit(&q->conn_state, memory_order_relaxed) == RBLK_QUEUE_LIVE)
		return -EAGAIN;
	return rblk_queue_submit_more(q->cfg.read_conn, io);
}

/* Sends a mapped request; 1 if it is now the target's, 0 if it waits. */
static int send_request(struct ini_queue *q, unsigned tag)
{
	int ret;

	if (!q->cfg.conn || q->abandoned) {
		commit_tag(q, tag, -EIO);
		return 0;
	}
	/* Sent with the turn's other commands: the loop flushes before it
	 * waits, and every reap flushes first. */
	ret = send_read_spread(q, &q->tags[tag].io);
	if (ret)
		ret = rblk_queue_submit_more(q->cfg.conn, &q->tags[tag].io);
	if (ret == 0) {
		q->tags[tag].state = TAG_AT_TARGET;
		return 1;
	}
	if (ret == -EBUSY) {
		backlog_push(q, tag);
		return 0;
	}
	if (ret != -ENOTCONN && q->errs_logged < 10) {
		q->errs_logged++;
		rblk_warn("queue %u: %s offset %llu length %u refused: %s",
			  q->cfg.q_id, rblk_opcode_str(q->tags[tag].io.opcode),
			  (unsigned long long)q->tags[tag].io.offset,
			  q->tags[tag].io.length, strerror(-ret));
	}
	commit_tag(q, tag, blk_errno(ret));
	return 0;
}

static void handle_request(struct ini_queue *q, unsigned tag)
{
	int ret = map_request(q, tag);

	RBLK_DBG(RBLK_DBG_IO, "q%u tag %u op %u sector %llu n %u", q->cfg.q_id,
		 tag, ublksrv_get_op(&q->descs[tag]),
		 (unsigned long long)q->descs[tag].start_sector,
		 q->descs[tag].nr_sectors);
	if (ret) {
		commit_tag(q, tag, ret);
		return;
	}
	/* Keep the order the kernel gave us behind anything already waiting. */
	if (q->bl_count)
		backlog_push(q, tag);
	else
		send_request(q, tag);
}

static void drain_backlog(struct ini_queue *q)
{
	while (q->bl_count) {
		unsigned tag = q->backlog[q->bl_head];

		if (q->cfg.conn && !q->abandoned &&
		    rblk_queue_inflight(q->cfg.conn) >= q->cfg.depth &&
		    (!q->read_live ||
		     rblk_queue_inflight(q->cfg.read_conn) >= q->cfg.depth))
			break;
		q->bl_head = (q->bl_head + 1) % q->cfg.depth;
		q->bl_count--;
		if (!send_request(q, tag) && q->tags[tag].state == TAG_BACKLOG) {
			/* went straight back: stop trying for now */
			break;
		}
	}
}

/* ---- completions from the target ---------------------------------------- */

static void note_paths(struct ini_queue *q)
{
	struct rblk_path_status ps[RBLK_MAX_PATHS];
	unsigned n = rblk_queue_paths(q->cfg.conn, ps, RBLK_MAX_PATHS);
	int want = atomic_exchange(&q->want_path, -1);

	if (want >= 0 && rblk_queue_prefer_path(q->cfg.conn, (unsigned)want))
		rblk_warn("queue %u: cannot move to path %d", q->cfg.q_id, want + 1);
	for (unsigned i = 0; i < n; i++) {
		atomic_store(&q->path_state[i], ps[i].state);
		atomic_store(&q->path_failures[i], ps[i].failures);
		if (ps[i].active)
			atomic_store(&q->active_path, (int)i);
	}
}

/* The reader's path and state, and a move the main thread asked for.
 * Returns the volume's size as the reader knows it, UINT64_MAX when it
 * is not live (or there is none). */
static uint64_t note_reader(struct ini_queue *q)
{
	struct rblk_path_status ps[RBLK_MAX_PATHS];
	struct rblk_queue_status st;
	int want = atomic_exchange(&q->want_read_path, -1);
	unsigned n;

	if (!q->cfg.read_conn)
		return UINT64_MAX;
	if (want >= 0 && rblk_queue_prefer_path(q->cfg.read_conn, (unsigned)want))
		rblk_warn("queue %u: cannot move the reader to path %d", q->cfg.q_id, want + 1);
	rblk_queue_status(q->cfg.read_conn, &st);
	if (st.state == RBLK_QUEUE_FAILED && atomic_load(&q->read_state) != RBLK_QUEUE_FAILED)
		rblk_warn("queue %u: the reader's connection failed (%s); reads go to the writer's path only",
			  q->cfg.q_id, st.reason);
	q->read_live = st.state == RBLK_QUEUE_LIVE;
	atomic_store(&q->read_state, st.state);
	n = rblk_queue_paths(q->cfg.read_conn, ps, RBLK_MAX_PATHS);
	for (unsigned i = 0; i < n; i++)
		if (ps[i].active)
			atomic_store(&q->read_path, (int)i);
	return q->read_live ? st.size : UINT64_MAX;
}

/* Mirrors the library's view for the main thread (state file). */
static void note_conn(struct ini_queue *q)
{
	struct rblk_queue_status st;
	uint64_t size, read_size;

	rblk_queue_status(q->cfg.conn, &st);
	if (st.state == RBLK_QUEUE_FAILED && atomic_load(&q->conn_state) != RBLK_QUEUE_FAILED)
		rblk_err("queue %u: the connection to the target failed for good (%s); failing I/O",
			 q->cfg.q_id, st.reason);
	atomic_store(&q->conn_state, st.state);
	atomic_store(&q->reconnects, st.reconnects);
	note_paths(q);
	read_size = note_reader(q);
	size = st.state == RBLK_QUEUE_LIVE ? st.size : UINT64_MAX;
	atomic_store_explicit(&q->vol_size, size < read_size ? size : read_size,
			      memory_order_relaxed);
}

static int conn_failed(const struct ini_queue *q)
{
	return atomic_load(&q->conn_state) == RBLK_QUEUE_FAILED;
}

/*
 * Commits what the target answered; returns how many.  peek: only what is
 * already in hand, for a loop that waits on the connection's fd next (no
 * syscall on RDMA when nothing came); else a full reap that also runs the
 * timers and connection events, as after the fd's wakeup.
 */
static unsigned take_answers_of(struct ini_queue *q, struct rblk_queue *conn,
				int peek)
{
	struct rblk_io *done[64];
	unsigned total = 0;
	int n, i;

	do {
		n = peek ? rblk_queue_peek(conn, done, 64) :
			   rblk_queue_reap(conn, done, 0, 64, 0);
		if (n < 0)
			break;	/* FAILED, and every failed I/O handed back */
		for (i = 0; i < n; i++) {
			unsigned tag = (unsigned)(uintptr_t)done[i]->priv;

			commit_tag(q, tag, result_of(q, done[i]));
		}
		total += (unsigned)n;
	} while (n == 64);
	return total;
}

static unsigned take_answers(struct ini_queue *q, int peek)
{
	unsigned total;

	if (!q->cfg.conn)
		return 0;
	total = take_answers_of(q, q->cfg.conn, peek);
	if (q->cfg.read_conn)
		total += take_answers_of(q, q->cfg.read_conn, peek);
	note_conn(q);
	drain_backlog(q);
	return total;
}

static unsigned reap_target(struct ini_queue *q)
{
	return take_answers(q, 0);
}

/*
 * Grace is over (or never given): fail everything the target still holds
 * and stop talking to it, so the kernel can finish tearing the disk down.
 */
/* Closes one of the queue's connections, its fd's poll cancelled; what
 * it still held is failed by abandon_target. */
static void close_conn(struct ini_queue *q, struct rblk_queue **conn,
		       int poll_armed, uint64_t poll_ud, const char *what)
{
	struct io_uring_sqe *sqe;

	reap_target(q);		/* take what did arrive */
	if (poll_armed && (sqe = get_sqe(q))) {
		io_uring_prep_poll_remove(sqe, poll_ud);
		sqe->user_data = UD_IGNORE;
	}
	if (rblk_queue_inflight(*conn))
		rblk_warn("queue %u: %u commands unanswered by %s; failing them",
			  q->cfg.q_id, rblk_queue_inflight(*conn), what);
	rblk_queue_close(*conn);
	*conn = NULL;
}

static void abandon_target(struct ini_queue *q)
{
	unsigned tag;

	if (q->abandoned)
		return;
	q->abandoned = 1;
	if (q->cfg.read_conn) {
		close_conn(q, &q->cfg.read_conn, q->read_poll_armed, UD_READ_POLL,
			   "the reader's target");
		q->read_live = 0;
	}
	if (q->cfg.conn) {
		close_conn(q, &q->cfg.conn, q->conn_poll_armed, UD_CONN_POLL,
			   "the target");
		atomic_store(&q->conn_state, RBLK_QUEUE_FAILED);
	}
	for (tag = 0; tag < q->cfg.depth; tag++) {
		uint8_t st = q->tags[tag].state;

		if (st == TAG_AT_TARGET || st == TAG_BACKLOG)
			commit_tag(q, tag, -EIO);
	}
	q->bl_count = 0;
}

/* ---- the thread ---------------------------------------------------------- */

static unsigned tags_in(const struct ini_queue *q, enum tag_state st)
{
	unsigned n = 0;

	for (unsigned tag = 0; tag < q->cfg.depth; tag++)
		n += q->tags[tag].state == st;
	return n;
}

/* Handing over: what waits for room is never sent, and the thread is
 * done at once when nothing is at the target. */
static void start_handing_over(struct ini_queue *q)
{
	q->handing = 1;
	while (q->bl_count) {
		q->tags[q->backlog[q->bl_head]].state = TAG_HELD;
		q->bl_head = (q->bl_head + 1) % q->cfg.depth;
		q->bl_count--;
	}
	if (!q->cfg.conn || !tags_in(q, TAG_AT_TARGET))
		q->handed = 1;
}

/* The grace is over, or the connection is down: what is still at the
 * target goes to the next server, uncommitted (never an error). */
static void end_handing_over(struct ini_queue *q, const char *why)
{
	unsigned left = tags_in(q, TAG_AT_TARGET);

	if (left)
		rblk_warn("queue %u: handing over with %u request(s) unanswered (%s): the next server sends them again",
			  q->cfg.q_id, left, why);
	q->handed = 1;
}

/* What the next server gets from this queue: the kernel hands it again
 * what we held (with QUIESCE, nothing should be). */
static void log_handed(const struct ini_queue *q)
{
	unsigned held = tags_in(q, TAG_HELD);

	if (held)
		rblk_info("queue %u: %u request(s) that arrived while handing over held for the next server",
			  q->cfg.q_id, held);
}

static void start_stopping(struct ini_queue *q)
{
	struct io_uring_sqe *sqe;
	int ms = atomic_load(&q->grace_ms);

	if (q->stopping)
		return;
	q->stopping = 1;
	if (atomic_load(&q->hand_over))
		start_handing_over(q);
	if (q->handed)
		return;
	if (ms <= 0 || !q->cfg.conn) {
		if (q->handing)
			end_handing_over(q, "no grace");
		else
			abandon_target(q);
		return;
	}
	q->grace_ts.tv_sec = ms / 1000;
	q->grace_ts.tv_nsec = (long long)(ms % 1000) * 1000000;
	sqe = get_sqe(q);
	if (!sqe) {
		if (q->handing)
			end_handing_over(q, "no SQE for the grace timer");
		else
			abandon_target(q);
		return;
	}
	io_uring_prep_timeout(sqe, &q->grace_ts, 0, 0);
	sqe->user_data = UD_GRACE;
}

/* The kernel handed us tag's request. */
static void request_in(struct ini_queue *q, unsigned tag)
{
	if (q->handing)
		q->tags[tag].state = TAG_HELD;
	else if (q->abandoned)
		commit_tag(q, tag, -EIO);
	else
		handle_request(q, tag);
}

static void arm_fetch(struct ini_queue *q)
{
	struct io_uring_sqe *sqe = get_sqe(q);

	if (!sqe) {
		rblk_err("queue %u: no SQE to fetch requests", q->cfg.q_id);
		return;
	}
	ini_batch_fetch(&q->batch, sqe);
	sqe->user_data = UD_FETCH;
}

/* Batch: a FETCH completion, with tags or the FETCH's end. */
static void fetched(struct ini_queue *q, const struct io_uring_cqe *cqe)
{
	const uint16_t *tags;
	unsigned n;
	int bid = ini_batch_fetched(&q->batch, cqe->res, cqe->flags, &tags, &n);

	if (bid >= 0) {
		for (unsigned i = 0; i < n; i++) {
			if (tags[i] < q->cfg.depth)
				request_in(q, tags[i]);
			else
				rblk_err("queue %u: the kernel fetched tag %u of %u",
					 q->cfg.q_id, tags[i], q->cfg.depth);
		}
		ini_batch_fetch_done(&q->batch, bid);
	} else if (cqe->res > 0) {
		rblk_err("queue %u: a fetch of %d bytes named no buffer of ours (flags 0x%x)",
			 q->cfg.q_id, cqe->res, cqe->flags);
	}
	if (cqe->flags & IORING_CQE_F_MORE)
		return;
	/* Out of buffers (they are back now) or done early: again. */
	if (cqe->res >= 0 || cqe->res == -ENOBUFS) {
		arm_fetch(q);
		return;
	}
	if (cqe->res != UBLK_IO_RES_ABORT)
		rblk_warn("queue %u: fetch failed: %s", q->cfg.q_id, strerror(-cqe->res));
	q->fetch_dead = 1;
	for (unsigned tag = 0; tag < q->cfg.depth; tag++)
		if (q->tags[tag].state == TAG_FETCHING)
			mark_dead(q, tag);
}

static void handle_cqe(struct ini_queue *q, const struct io_uring_cqe *cqe)
{
	uint64_t ud = cqe->user_data;

	if (ud < q->cfg.depth) {
		if (cqe->res == UBLK_IO_RES_OK) {
			request_in(q, (unsigned)ud);
			return;
		}
		if (cqe->res != UBLK_IO_RES_ABORT)
			rblk_warn("queue %u tag %u: fetch failed: %s", q->cfg.q_id,
				  (unsigned)ud, strerror(-cqe->res));
		mark_dead(q, (unsigned)ud);
		return;
	}
	if (ud >= UD_COMMIT && ud < UD_COMMIT + INI_BATCH_COMMIT_SLOTS) {
		ini_batch_committed(&q->batch, (int)(ud - UD_COMMIT), cqe->res);
		return;
	}
	switch (ud) {
	case UD_FETCH:
		fetched(q, cqe);
		break;
	case UD_CONN_POLL:
		q->conn_poll_armed = 0;
		reap_target(q);
		break;
	case UD_READ_POLL:
		q->read_poll_armed = 0;
		reap_target(q);
		break;
	case UD_STOP_POLL:
		start_stopping(q);
		break;
	case UD_GRACE:
		if (cqe->res == -ETIME && q->handing)
			end_handing_over(q, "grace over");
		else if (cqe->res == -ETIME)
			abandon_target(q);
		break;
	default:
		break;
	}
}

/* ---- polling ----------------------------------------------------------- */

static int want_spin(const struct ini_queue *q, uint64_t now)
{
	switch (q->cfg.poll) {
	case RBLK_POLL_BUSY:
		return 1;
	case RBLK_POLL_ADAPTIVE:
		return now - q->last_work_us < q->cfg.poll_us;
	default:
		return 0;
	}
}

/*
 * Starts or stops spinning.  While spinning the loop does not wait on the
 * ring and reaps the target every turn, so the connection's wakeup is not
 * needed and stays unarmed (the transport then polls its CQ without a
 * syscall).  Stopping arms it again and reaps once more: what came before
 * the arm raises no wakeup.  Returns 1 when that reap found answers (the
 * caller should keep spinning), else 0.
 */
static int set_spinning(struct ini_queue *q, int spin)
{
	q->spinning = spin;
	if (!q->cfg.conn)
		return 0;
	rblk_queue_set_spin(q->cfg.conn, spin);
	if (q->cfg.read_conn)
		rblk_queue_set_spin(q->cfg.read_conn, spin);
	return !spin && reap_target(q) > 0;
}

/* Batch: every tag armed with its buffer, waited for (START_DEV and
 * END_USER_RECOVERY wait for every queue's tags).  0 or -errno. */
static int prep_batch(struct ini_queue *q)
{
	struct io_uring_sqe *sqe = get_sqe(q);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	ini_batch_prep(&q->batch, sqe);
	sqe->user_data = UD_PREP;
	ret = io_uring_submit_and_wait(&q->ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_peek_cqe(&q->ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->user_data == UD_PREP ? ini_batch_prepped(&q->batch, cqe->res) : -EIO;
	io_uring_cqe_seen(&q->ring, cqe);
	if (ret) {
		rblk_err("queue %u: ublk PREP_IO_CMDS: %s", q->cfg.q_id, strerror(-ret));
		return ret;
	}
	for (unsigned tag = 0; tag < q->cfg.depth; tag++)
		q->tags[tag].state = TAG_FETCHING;
	return 0;
}

/* "rblk-qN" in ps and top; on the queue's CPUs where cfg says so. */
static void name_and_place(const struct ini_queue *q)
{
	char name[16];
	int ret;

	snprintf(name, sizeof(name), "rblk-q%u", q->cfg.q_id);
	pthread_setname_np(pthread_self(), name);
	if (!q->cfg.pin)
		return;
	ret = pthread_setaffinity_np(pthread_self(), sizeof(q->cfg.cpus), &q->cfg.cpus);
	if (ret)
		rblk_warn("queue %u: cannot keep its thread on its CPUs: %s",
			  q->cfg.q_id, strerror(ret));
}

static void *queue_thread(void *arg)
{
	struct ini_queue *q = arg;
	struct io_uring_cqe *cqe;
	unsigned head, n, tag, commits;
	uint64_t one = 1;
	int ret;

	name_and_place(q);
	if (q->cfg.batch) {
		ret = prep_batch(q);
		if (!ret)
			arm_fetch(q);
	} else {
		for (tag = 0; tag < q->cfg.depth; tag++)
			queue_io_cmd(q, tag, 0, 0);
		ret = 0;
	}
	if (!ret) {
		arm_poll(q, q->stop_efd, UD_STOP_POLL);
		ret = io_uring_submit(&q->ring);
	}
	q->start_ret = ret < 0 ? ret : 0;
	sem_post(&q->ready);
	if (ret < 0)
		goto out;

	while (q->ndead < q->cfg.depth) {
		uint64_t now = q->cfg.poll == RBLK_POLL_ADAPTIVE ? rblk_now_us() : 0;
		int spin = want_spin(q, now);

		if (spin != q->spinning && set_spinning(q, spin)) {
			q->last_work_us = now;
			continue;
		}
		if (q->cfg.conn && !q->conn_poll_armed && !q->spinning &&
		    !q->abandoned && !conn_failed(q)) {
			arm_poll(q, rblk_queue_fd(q->cfg.conn), UD_CONN_POLL);
			q->conn_poll_armed = 1;
		}
		if (q->cfg.read_conn && !q->read_poll_armed && !q->spinning &&
		    atomic_load(&q->read_state) != RBLK_QUEUE_FAILED) {
			arm_poll(q, rblk_queue_fd(q->cfg.read_conn), UD_READ_POLL);
			q->read_poll_armed = 1;
		}
		/* The commands this turn sent after its last reap go out
		 * in one post. */
		if (q->cfg.conn && !q->abandoned)
			rblk_queue_flush(q->cfg.conn);
		if (q->cfg.read_conn)
			rblk_queue_flush(q->cfg.read_conn);
		/* A COMMIT completes while it is submitted: waiting for its
		 * completion and one more keeps it from costing a wakeup (the
		 * kernel does not wait when it could not submit everything). */
		commits = flush_commits(q);
		/* Spinning: submit only (no syscall when there is nothing to
		 * submit) and peek the completions. */
		ret = io_uring_submit_and_wait(&q->ring, q->spinning ? 0 : 1 + commits);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			rblk_err("queue %u: io_uring: %s", q->cfg.q_id, strerror(-ret));
			break;
		}
		n = 0;
		io_uring_for_each_cqe(&q->ring, head, cqe) {
			handle_cqe(q, cqe);
			n++;
		}
		io_uring_cq_advance(&q->ring, n);
		/* A send may have failed inside submit: pick up its error, and
		 * whatever answers are already here, without another wakeup
		 * (a peek: the armed fd wakes us for the rest).  A spinner
		 * reaps in full every turn: its timers and the target's
		 * keep-alive answers have no wakeup either. */
		if (q->cfg.conn && !q->abandoned &&
		    (q->spinning || rblk_queue_inflight(q->cfg.conn) ||
		     (q->cfg.read_conn && rblk_queue_inflight(q->cfg.read_conn))))
			n += take_answers(q, !q->spinning);
		if (n && q->cfg.poll == RBLK_POLL_ADAPTIVE)
			q->last_work_us = rblk_now_us();
		/* Stopping does not wait for a reconnect. */
		if (q->handing && !q->handed &&
		    atomic_load(&q->conn_state) != RBLK_QUEUE_LIVE)
			end_handing_over(q, "the target is not connected");
		else if (!q->handing && !q->abandoned && q->stopping &&
			 atomic_load(&q->conn_state) != RBLK_QUEUE_LIVE)
			abandon_target(q);
		if (q->handing && !q->handed && !tags_in(q, TAG_AT_TARGET))
			q->handed = 1;
		if (q->handed)
			break;
	}
	flush_commits(q);
	io_uring_submit(&q->ring);	/* last commits */
	if (q->handed)
		log_handed(q);
out:
	if (write(q->cfg.exit_efd, &one, sizeof(one)) < 0)
		rblk_warn("queue %u: exit notification: %s", q->cfg.q_id,
			  strerror(errno));
	return NULL;
}

/* ---- create / start / stop / destroy ----------------------------------- */

int ini_queue_create(const struct ini_queue_cfg *cfg, struct ini_queue **qp)
{
	struct ini_queue *q;
	off_t off;
	int ret;

	q = calloc(1, sizeof(*q));
	if (!q) {
		rblk_queue_close(cfg->conn);
		rblk_queue_close(cfg->read_conn);
		return -ENOMEM;
	}
	q->cfg = *cfg;
	q->stop_efd = -1;
	atomic_store(&q->conn_state, RBLK_QUEUE_LIVE);
	atomic_store(&q->want_path, -1);
	atomic_store(&q->want_read_path, -1);
	atomic_store(&q->read_path, -1);
	atomic_store(&q->vol_size, UINT64_MAX);
	note_paths(q);
	note_reader(q);

	q->tags = calloc(cfg->depth, sizeof(*q->tags));
	q->backlog = calloc(cfg->depth, sizeof(*q->backlog));
	if (!q->tags || !q->backlog) {
		ret = -ENOMEM;
		goto out_destroy;
	}
	q->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->stop_efd < 0) {
		ret = -errno;
		goto out_destroy;
	}

	q->descs_len = ((size_t)cfg->depth * sizeof(struct ublksrv_io_desc) + 4095) & ~4095ul;
	off = UBLKSRV_CMD_BUF_OFFSET + (off_t)cfg->q_id * INI_UBLK_DESC_AREA;
	q->descs = mmap(NULL, q->descs_len, PROT_READ, MAP_SHARED | MAP_POPULATE,
			cfg->cdev_fd, off);
	if (q->descs == MAP_FAILED) {
		q->descs = NULL;
		ret = -errno;
		rblk_err("queue %u: mmap descriptors: %s", cfg->q_id, strerror(-ret));
		goto out_destroy;
	}

	q->bufs_len = (size_t)cfg->depth * cfg->buf_bytes;
	q->bufs = mmap(NULL, q->bufs_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q->bufs == MAP_FAILED) {
		q->bufs = NULL;
		ret = -errno;
		goto out_destroy;
	}
	/* One registration over every tag's buffer: over RDMA the target
	 * reads and writes them directly. */
	ret = rblk_queue_reg_buffer(cfg->conn, q->bufs, q->bufs_len);
	if (!ret && cfg->read_conn)
		ret = rblk_queue_reg_buffer(cfg->read_conn, q->bufs, q->bufs_len);
	if (ret) {
		rblk_err("queue %u: registering %zu bytes of I/O buffers: %s",
			 cfg->q_id, q->bufs_len, strerror(-ret));
		goto out_destroy;
	}

	/* Tag commands + two conn polls + stop poll + grace timer + cancels. */
	ret = io_uring_queue_init(cfg->depth + 8, &q->ring, 0);
	if (ret) {
		rblk_err("queue %u: io_uring_queue_init: %s", cfg->q_id, strerror(-ret));
		goto out_destroy;
	}
	q->ring_ready = 1;
	if (sem_init(&q->ready, 0, 0)) {
		ret = -errno;
		goto out_destroy;
	}
	if (cfg->batch) {
		ret = ini_batch_init(&q->batch, &q->ring, cfg->cdev_fd, cfg->q_id,
				     cfg->depth, q->bufs, cfg->buf_bytes);
		if (ret) {
			rblk_err("queue %u: batch I/O buffers: %s", cfg->q_id, strerror(-ret));
			goto out_destroy;
		}
		q->batch_ready = 1;
	}
	*qp = q;
	return 0;

out_destroy:
	ini_queue_destroy(q);
	return ret;
}

void ini_queue_destroy(struct ini_queue *q)
{
	if (!q)
		return;
	if (q->batch_ready)
		ini_batch_exit(&q->batch);
	if (q->ring_ready) {
		io_uring_queue_exit(&q->ring);
		sem_destroy(&q->ready);
	}
	if (q->cfg.conn)
		rblk_queue_close(q->cfg.conn);
	if (q->cfg.read_conn)
		rblk_queue_close(q->cfg.read_conn);
	if (q->bufs)
		munmap(q->bufs, q->bufs_len);
	if (q->descs)
		munmap((void *)q->descs, q->descs_len);
	if (q->stop_efd >= 0)
		close(q->stop_efd);
	free(q->backlog);
	free(q->tags);
	free(q);
}

int ini_queue_start(struct ini_queue *q)
{
	int ret;

	ret = pthread_create(&q->thread, NULL, queue_thread, q);
	if (ret)
		return -ret;
	q->started = 1;
	while (sem_wait(&q->ready) && errno == EINTR)
		;
	return q->start_ret;
}

void ini_queue_hand_over(struct ini_queue *q, int grace_ms)
{
	atomic_store(&q->hand_over, 1);
	ini_queue_stop(q, grace_ms);
}

void ini_queue_stop(struct ini_queue *q, int grace_ms)
{
	uint64_t one = 1;

	atomic_store(&q->grace_ms, grace_ms);
	if (write(q->stop_efd, &one, sizeof(one)) < 0)
		rblk_warn("queue %u: stop: %s", q->cfg.q_id, strerror(errno));
}

int ini_queue_join(struct ini_queue *q, int timeout_ms)
{
	struct timespec ts;
	int ret;

	if (!q->started)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	ret = pthread_timedjoin_np(q->thread, NULL, &ts);
	if (ret)
		return -ret;
	q->started = 0;
	return 0;
}

uint64_t ini_queue_served(const struct ini_queue *q)
{
	return atomic_load_explicit(&q->served, memory_order_relaxed);
}

uint64_t ini_queue_failed(const struct ini_queue *q)
{
	return atomic_load_explicit(&q->failed, memory_order_relaxed);
}

void ini_queue_conn_status(const struct ini_queue *q, struct ini_queue_conn *c)
{
	c->state = atomic_load(&q->conn_state);
	c->reconnects = atomic_load(&q->reconnects);
	c->active_path = atomic_load(&q->active_path);
	c->read_path = atomic_load(&q->read_path);
	c->read_state = atomic_load(&q->read_state);
	c->size = atomic_load_explicit(&q->vol_size, memory_order_relaxed);
	for (unsigned i = 0; i < RBLK_MAX_PATHS; i++) {
		c->path_state[i] = atomic_load(&q->path_state[i]);
		c->path_failures[i] = atomic_load(&q->path_failures[i]);
	}
}

void ini_queue_prefer_path(struct ini_queue *q, int idx)
{
	atomic_store(&q->want_path, idx);
}

void ini_queue_prefer_read_path(struct ini_queue *q, int idx)
{
	atomic_store(&q->want_read_path, idx);
}
