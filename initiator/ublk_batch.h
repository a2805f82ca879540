/* SPDX-License-Identifier: MIT */
/*
 * ublk batch I/O (UBLK_F_BATCH_IO, Linux 7.0+) for one queue: the
 * commands that replace one FETCH / COMMIT_AND_FETCH per tag.
 *
 * - PREP_IO_CMDS, once at start (and at recovery): every tag and its
 *   buffer, in one command.
 * - FETCH_IO_CMDS, multishot: each completion brings an array of 16-bit
 *   tags, in a buffer the kernel took from this queue's provided-buffer
 *   ring; the tags' descriptors are read as before.
 * - COMMIT_IO_CMDS: every answer of a loop turn in one command, each tag
 *   re-armed for its next request.
 *
 * Why: on 7.3.4 the per-tag commands cost a completion and an SQE per
 * request each way, and ublk hands requests over in smaller groups than
 * on 6.12 (docs/benchmarks.md, "The I/O scheduler of a one-queue disk,
 * and 7.3.4's batches").
 *
 * The caller owns the ring and the SQEs (it fills user_data); this file
 * builds the commands and keeps their buffers alive until they complete.
 */
#ifndef RBLK_INITIATOR_UBLK_BATCH_H
#define RBLK_INITIATOR_UBLK_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <liburing.h>

#include "ublk_compat.h"

/* Commit commands that may be in flight at once (each is usually done
 * before its io_uring_enter returns). */
#define INI_BATCH_COMMIT_SLOTS	4
/* Provided buffers for FETCH completions, and tags per buffer (the
 * kernel puts at most 128 tags in one completion). */
#define INI_BATCH_FETCH_BUFS	8
#define INI_BATCH_FETCH_TAGS	128

struct ini_batch_commit {
	struct ini_batch_elem *elems;	/* depth of them */
	unsigned n;
	bool in_flight;
};

struct ini_batch {
	struct io_uring *ring;
	int cdev_fd;			/* /dev/ublkcN: the commands' file */
	uint16_t q_id, depth;
	char *bufs;			/* tag i's buffer: bufs + i * buf_bytes */
	uint32_t buf_bytes;
	void *fetch_area;		/* buffer ring, then the tag buffers */
	size_t fetch_area_len;
	struct io_uring_buf_ring *fetch_ring;
	uint16_t *fetch_tags;
	bool fetch_ring_registered;
	struct ini_batch_commit commit[INI_BATCH_COMMIT_SLOTS];
	int filling;			/* slot taking this turn's answers, -1 */
};

/* Sets up the fetch buffer ring on ring (group 0) and the commit
 * buffers.  0 or -errno (the kernel's io_uring lacks provided buffer
 * rings: -EINVAL). */
int ini_batch_init(struct ini_batch *b, struct io_uring *ring, int cdev_fd,
		   uint16_t q_id, uint16_t depth, char *bufs, uint32_t buf_bytes);
void ini_batch_exit(struct ini_batch *b);

/* Fills sqe with PREP_IO_CMDS for every tag; its completion's res is 0
 * or -errno.  Uses commit slot 0 (done before any commit). */
void ini_batch_prep(struct ini_batch *b, struct io_uring_sqe *sqe);
/* PREP's completion: res (0 or -errno) back, slot 0 free again. */
int ini_batch_prepped(struct ini_batch *b, int res);
/* Fills sqe with the multishot FETCH_IO_CMDS. */
void ini_batch_fetch(struct ini_batch *b, struct io_uring_sqe *sqe);

/* The tags a FETCH completion brought (res > 0, IORING_CQE_F_BUFFER):
 * *tags points at *n of them; ini_batch_fetch_done gives the buffer back
 * once they are read.  Returns the buffer id, or -1 if there is none. */
int ini_batch_fetched(struct ini_batch *b, int res, uint32_t cqe_flags,
		      const uint16_t **tags, unsigned *n);
void ini_batch_fetch_done(struct ini_batch *b, int bid);

/* Adds tag's answer to this turn's commit.  -EBUSY when every commit
 * slot is still in flight (the answer is not taken). */
int ini_batch_commit(struct ini_batch *b, unsigned tag, int result);
/* Whether answers wait for ini_batch_flush. */
bool ini_batch_pending(const struct ini_batch *b);
/* Fills sqe with COMMIT_IO_CMDS of this turn's answers; returns the
 * slot, for the completion (ini_batch_committed). */
int ini_batch_flush(struct ini_batch *b, struct io_uring_sqe *sqe);
/* A commit's completion: res is the bytes the kernel took.  Returns how
 * many answers it did not take (a short commit: a bug, logged). */
unsigned ini_batch_committed(struct ini_batch *b, int slot, int res);

#endif /* RBLK_INITIATOR_UBLK_BATCH_H */
