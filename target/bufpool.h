/* SPDX-License-Identifier: MIT */
/*
 * Per-reactor I/O buffer pool: one aligned region carved by a buddy
 * allocator into power-of-two chunks of 4 KiB .. 1 MiB.  The region is one
 * io_uring fixed buffer (index 0) so the disk can DMA straight into it;
 * the RDMA transport will register the same region with ibv_reg_mr (local
 * access only).  Single-threaded: only its reactor touches it.
 */
#ifndef RBLK_TARGET_BUFPOOL_H
#define RBLK_TARGET_BUFPOOL_H

#include <stddef.h>
#include <stdint.h>

#define TGT_BUF_MIN_SHIFT	12
#define TGT_BUF_MAX_SHIFT	20	/* RBLK_MAX_IO_SIZE */
#define TGT_BUF_ORDERS		(TGT_BUF_MAX_SHIFT - TGT_BUF_MIN_SHIFT + 1)

struct tgt_bufpool;

/* Allocates a pool of `bytes` (rounded up to 1 MiB).  0 or -errno. */
int tgt_bufpool_create(struct tgt_bufpool **pp, size_t bytes);
void tgt_bufpool_destroy(struct tgt_bufpool *p);

/* Returns a 4 KiB aligned chunk of at least len bytes (len <= 1 MiB), or
 * NULL when the pool has no chunk that large right now. */
void *tgt_buf_alloc(struct tgt_bufpool *p, size_t len);
/* Size of the chunk tgt_buf_alloc hands out for len bytes (a power of
 * two, 4 KiB .. 1 MiB): what a request really takes from the pool. */
size_t tgt_buf_chunk_size(size_t len);
/* Returns a chunk from tgt_buf_alloc (NULL is ignored). */
void tgt_buf_free(struct tgt_bufpool *p, void *buf);

/* The whole region, for registration with io_uring / ibv_reg_mr. */
void *tgt_bufpool_base(const struct tgt_bufpool *p);
size_t tgt_bufpool_size(const struct tgt_bufpool *p);
/* Chunks currently handed out (tests, stats). */
unsigned tgt_bufpool_in_use(const struct tgt_bufpool *p);

#endif /* RBLK_TARGET_BUFPOOL_H */
