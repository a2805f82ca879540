// SPDX-License-Identifier: MIT
/*
 * ublk batch I/O commands for one queue (see ublk_batch.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "ublk_batch.h"

#define FETCH_BUF_BYTES	(INI_BATCH_FETCH_TAGS * sizeof(uint16_t))
/* The ring's entries come first, page-aligned as the kernel wants. */
#define FETCH_RING_BYTES	4096

int ini_batch_init(struct ini_batch *b, struct io_uring *ring, int cdev_fd,
		   uint16_t q_id, uint16_t depth, char *bufs, uint32_t buf_bytes)
{
	struct io_uring_buf_reg reg;
	int ret;

	_Static_assert(INI_BATCH_FETCH_BUFS * sizeof(struct io_uring_buf) <= FETCH_RING_BYTES,
		       "the fetch ring fits its page");
	_Static_assert(sizeof(struct ini_batch_elem) == 16, "the kernel's element size");
	memset(b, 0, sizeof(*b));
	b->ring = ring;
	b->cdev_fd = cdev_fd;
	b->q_id = q_id;
	b->depth = depth;
	b->bufs = bufs;
	b->buf_bytes = buf_bytes;
	b->filling = -1;
	for (unsigned i = 0; i < INI_BATCH_COMMIT_SLOTS; i++) {
		b->commit[i].elems = calloc(depth, sizeof(struct ini_batch_elem));
		if (!b->commit[i].elems) {
			ini_batch_exit(b);
			return -ENOMEM;
		}
	}
	b->fetch_area_len = FETCH_RING_BYTES + INI_BATCH_FETCH_BUFS * FETCH_BUF_BYTES;
	b->fetch_area = mmap(NULL, b->fetch_area_len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->fetch_area == MAP_FAILED) {
		b->fetch_area = NULL;
		ret = -errno;
		ini_batch_exit(b);
		return ret;
	}
	b->fetch_ring = b->fetch_area;
	b->fetch_tags = (uint16_t *)((char *)b->fetch_area + FETCH_RING_BYTES);
	io_uring_buf_ring_init(b->fetch_ring);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)b->fetch_ring;
	reg.ring_entries = INI_BATCH_FETCH_BUFS;
	reg.bgid = 0;
	ret = io_uring_register_buf_ring(ring, &reg, 0);
	if (ret) {
		ini_batch_exit(b);
		return ret;
	}
	b->fetch_ring_registered = true;
	for (unsigned i = 0; i < INI_BATCH_FETCH_BUFS; i++)
		io_uring_buf_ring_add(b->fetch_ring,
				      b->fetch_tags + i * INI_BATCH_FETCH_TAGS,
				      FETCH_BUF_BYTES, (unsigned short)i,
				      io_uring_buf_ring_mask(INI_BATCH_FETCH_BUFS), (int)i);
	io_uring_buf_ring_advance(b->fetch_ring, INI_BATCH_FETCH_BUFS);
	return 0;
}

void ini_batch_exit(struct ini_batch *b)
{
	if (b->fetch_ring_registered)
		io_uring_unregister_buf_ring(b->ring, 0);
	b->fetch_ring_registered = false;
	if (b->fetch_area)
		munmap(b->fetch_area, b->fetch_area_len);
	b->fetch_area = NULL;
	for (unsigned i = 0; i < INI_BATCH_COMMIT_SLOTS; i++) {
		free(b->commit[i].elems);
		b->commit[i].elems = NULL;
	}
}

/* A PREP or COMMIT of slot's elements. */
static void prep_elems_cmd(struct ini_batch *b, struct io_uring_sqe *sqe,
			   uint32_t op, int slot)
{
	struct ini_batch_commit *c = &b->commit[slot];
	struct ublk_batch_io cmd = {
		.q_id = b->q_id,
		.flags = UBLK_BATCH_F_HAS_BUF_ADDR,
		.nr_elem = (uint16_t)c->n,
		.elem_bytes = sizeof(struct ini_batch_elem),
	};

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, b->cdev_fd, c->elems,
			 c->n * sizeof(struct ini_batch_elem), 0);
	sqe->cmd_op = op;
	memcpy(ini_sqe_cmd(sqe), &cmd, sizeof(cmd));
	c->in_flight = true;
}

static uint64_t buf_addr(const struct ini_batch *b, unsigned tag)
{
	return (uintptr_t)(b->bufs + (size_t)tag * b->buf_bytes);
}

void ini_batch_prep(struct ini_batch *b, struct io_uring_sqe *sqe)
{
	struct ini_batch_commit *c = &b->commit[0];

	for (unsigned tag = 0; tag < b->depth; tag++)
		c->elems[tag] = (struct ini_batch_elem){
			.tag = (uint16_t)tag, .buf_addr = buf_addr(b, tag),
		};
	c->n = b->depth;
	prep_elems_cmd(b, sqe, UBLK_U_IO_PREP_IO_CMDS, 0);
}

int ini_batch_prepped(struct ini_batch *b, int res)
{
	b->commit[0].in_flight = false;
	return res;
}

void ini_batch_fetch(struct ini_batch *b, struct io_uring_sqe *sqe)
{
	struct ublk_batch_io cmd = {
		.q_id = b->q_id,
		.nr_elem = b->depth,
		.elem_bytes = sizeof(uint16_t),
	};

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, b->cdev_fd, NULL, 0, 0);
	sqe->cmd_op = UBLK_U_IO_FETCH_IO_CMDS;
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 0;
	sqe->uring_cmd_flags = IORING_URING_CMD_MULTISHOT;
	memcpy(ini_sqe_cmd(sqe), &cmd, sizeof(cmd));
}

int ini_batch_fetched(struct ini_batch *b, int res, uint32_t cqe_flags,
		      const uint16_t **tags, unsigned *n)
{
	int bid;

	if (!(cqe_flags & IORING_CQE_F_BUFFER))
		return -1;
	bid = (int)(cqe_flags >> IORING_CQE_BUFFER_SHIFT);
	if (bid >= INI_BATCH_FETCH_BUFS)
		return -1;
	*tags = b->fetch_tags + (size_t)bid * INI_BATCH_FETCH_TAGS;
	*n = res > 0 ? (unsigned)res / sizeof(uint16_t) : 0;
	if (*n > INI_BATCH_FETCH_TAGS)
		*n = INI_BATCH_FETCH_TAGS;
	return bid;
}

void ini_batch_fetch_done(struct ini_batch *b, int bid)
{
	io_uring_buf_ring_add(b->fetch_ring,
			      b->fetch_tags + (size_t)bid * INI_BATCH_FETCH_TAGS,
			      FETCH_BUF_BYTES, (unsigned short)bid,
			      io_uring_buf_ring_mask(INI_BATCH_FETCH_BUFS), 0);
	io_uring_buf_ring_advance(b->fetch_ring, 1);
}

int ini_batch_commit(struct ini_batch *b, unsigned tag, int result)
{
	struct ini_batch_commit *c;

	if (b->filling < 0) {
		for (int i = 0; i < INI_BATCH_COMMIT_SLOTS; i++) {
			if (!b->commit[i].in_flight) {
				b->filling = i;
				b->commit[i].n = 0;
				break;
			}
		}
		if (b->filling < 0)
			return -EBUSY;
	}
	c = &b->commit[b->filling];
	/* A tag is answered once per request and its next request comes
	 * only after this commit is sent: depth elements are enough. */
	c->elems[c->n++] = (struct ini_batch_elem){
		.tag = (uint16_t)tag, .result = result, .buf_addr = buf_addr(b, tag),
	};
	return 0;
}

bool ini_batch_pending(const struct ini_batch *b)
{
	return b->filling >= 0;
}

int ini_batch_flush(struct ini_batch *b, struct io_uring_sqe *sqe)
{
	int slot = b->filling;

	prep_elems_cmd(b, sqe, UBLK_U_IO_COMMIT_IO_CMDS, slot);
	b->filling = -1;
	return slot;
}

unsigned ini_batch_committed(struct ini_batch *b, int slot, int res)
{
	struct ini_batch_commit *c = &b->commit[slot];
	unsigned taken = res > 0 ? (unsigned)res / sizeof(struct ini_batch_elem) : 0;
	unsigned left = taken < c->n ? c->n - taken : 0;

	if (left)
		rblk_err("queue %u: the kernel took %u of %u answers (%s); tag %u first refused",
			 b->q_id, taken, c->n, res < 0 ? strerror(-res) : "short commit",
			 c->elems[taken].tag);
	c->in_flight = false;
	return left;
}
