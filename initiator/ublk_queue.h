/* SPDX-License-Identifier: MIT */
/*
 * ublk data path: one thread per ublk hardware queue.  Each owns its
 * io_uring (FETCH_REQ / COMMIT_AND_FETCH_REQ, or with batch I/O the
 * commands of ublk_batch.h), its connection to the target
 * (an rblk_queue, whose fd is polled through the same ring) and the per-tag
 * I/O buffers, registered with the connection as one area so the RDMA
 * transport moves data straight in and out of them.
 */
#ifndef RBLK_INITIATOR_UBLK_QUEUE_H
#define RBLK_INITIATOR_UBLK_QUEUE_H

#include <sched.h>
#include <stdint.h>

#include "poll_mode.h"
#include "ublk_compat.h"
#include "rblk_client.h"

struct ini_queue_cfg {
	uint32_t dev_id;
	uint16_t q_id;
	uint16_t depth;			/* tags; <= the connection's granted depth */
	uint32_t buf_bytes;		/* per-tag buffer (dev_info.max_io_buf_bytes) */
	int      cdev_fd;		/* /dev/ublkcN, shared by all queues */
	int      ioctl_encode;		/* kernel takes UBLK_U_IO_* opcodes */
	int      batch;			/* UBLK_F_BATCH_IO: ublk_batch.h's commands */
	struct rblk_queue *conn;	/* handed over: the queue closes it */
	/* --read-policy spread: a second connection to the volume, on
	 * another path first, that takes every other READ; else NULL.
	 * Handed over too. */
	struct rblk_queue *read_conn;
	int      exit_efd;		/* written once when the thread ends */
	enum rblk_poll_mode poll;	/* how the loop waits (--poll) */
	unsigned poll_us;		/* adaptive: spin this long after work */
	int      pin;			/* the thread runs on cpus only */
	cpu_set_t cpus;			/* queue_cpus.h */
};

struct ini_queue;

/*
 * Maps the descriptors, allocates and registers the buffers and sets up
 * the ring; no kernel command is sent yet.  Takes cfg->conn and
 * cfg->read_conn (closed on failure too).  Returns 0 or -errno.
 */
int ini_queue_create(const struct ini_queue_cfg *cfg, struct ini_queue **qp);
/* Frees everything; the thread must have been joined (or never started). */
void ini_queue_destroy(struct ini_queue *q);

/*
 * Starts the thread and waits until it has submitted FETCH_REQ for every
 * tag, or with batch I/O until PREP_IO_CMDS took every tag (START_DEV
 * may be sent after all queues returned).  0 or -errno.
 */
int ini_queue_start(struct ini_queue *q);

/*
 * Asks the thread to wind down: it keeps serving requests for grace_ms,
 * then fails whatever the target has not answered with -EIO and answers
 * new requests with -EIO, so STOP_DEV never waits on a stuck target.
 * The thread ends once the kernel has aborted every tag (after STOP_DEV).
 */
void ini_queue_stop(struct ini_queue *q, int grace_ms);

/*
 * Asks the thread to hand the device over to the next server (rblkctl
 * restart): for up to grace_ms it answers what is at the target, sends
 * nothing new, and then ends, leaving every request it did not answer
 * uncommitted: the kernel gives those to the next server (USER_RECOVERY
 * REISSUE).  No request fails.  Nothing is stopped: the caller closes
 * the ring and /dev/ublkcN, and the device waits QUIESCED.
 */
void ini_queue_hand_over(struct ini_queue *q, int grace_ms);
/* Joins the thread, giving up after timeout_ms: 0, or -ETIMEDOUT. */
int ini_queue_join(struct ini_queue *q, int timeout_ms);

/* Requests served and failed so far (read without locking: statistics). */
uint64_t ini_queue_served(const struct ini_queue *q);
uint64_t ini_queue_failed(const struct ini_queue *q);
/* The connection as the queue thread last saw it (read without locking). */
struct ini_queue_conn {
	enum rblk_queue_state state;
	unsigned reconnects;
	int active_path;
	int read_path;			/* the reader's path, -1: no reader */
	enum rblk_queue_state read_state;
	enum rblk_path_state path_state[RBLK_MAX_PATHS];
	unsigned path_failures[RBLK_MAX_PATHS];
	/* The volume's size every live connection was told; UINT64_MAX
	 * while none is live. */
	uint64_t size;
};
void ini_queue_conn_status(const struct ini_queue *q, struct ini_queue_conn *c);
/* Asks the queue thread to move its connection to path idx (failback):
 * done at its next completion or timer (rblk_queue_prefer_path). */
void ini_queue_prefer_path(struct ini_queue *q, int idx);
/* The same for the reader (spread): back to a path of its own. */
void ini_queue_prefer_read_path(struct ini_queue *q, int idx);

#endif /* RBLK_INITIATOR_UBLK_QUEUE_H */
