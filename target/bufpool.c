// SPDX-License-Identifier: MIT
/*
 * Buddy allocator over one region.  Why buddy: requests range from 512 B to
 * 1 MiB, and a fixed max_io-sized slot per request would need a GiB per
 * connection at queue depth 1024; chunks sized to the request keep a
 * 64 MiB pool enough for thousands of small I/Os or 64 large ones.
 */
#include "bufpool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CHUNK	(1u << TGT_BUF_MIN_SHIFT)
#define MAX_ORDER	(TGT_BUF_ORDERS - 1)
#define NOT_FREE	0xff

struct tgt_bufpool {
	uint8_t  *base;
	size_t    size;
	uint32_t  nblk;			/* MIN_CHUNK blocks */
	int32_t   head[TGT_BUF_ORDERS];	/* free list heads, -1 = empty */
	int32_t  *next, *prev;		/* free list links per block */
	uint8_t  *free_order;		/* order if block heads a free chunk */
	uint8_t  *alloc_order;		/* order if block heads a used chunk */
	unsigned  in_use;
};

static void list_push(struct tgt_bufpool *p, uint32_t b, unsigned o)
{
	p->next[b] = p->head[o];
	p->prev[b] = -1;
	if (p->head[o] >= 0)
		p->prev[p->head[o]] = b;
	p->head[o] = b;
	p->free_order[b] = o;
}

static void list_del(struct tgt_bufpool *p, uint32_t b, unsigned o)
{
	if (p->prev[b] >= 0)
		p->next[p->prev[b]] = p->next[b];
	else
		p->head[o] = p->next[b];
	if (p->next[b] >= 0)
		p->prev[p->next[b]] = p->prev[b];
	p->free_order[b] = NOT_FREE;
}

int tgt_bufpool_create(struct tgt_bufpool **pp, size_t bytes)
{
	size_t max = (size_t)MIN_CHUNK << MAX_ORDER;
	struct tgt_bufpool *p;

	if (!bytes)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->size = (bytes + max - 1) / max * max;
	p->nblk = p->size / MIN_CHUNK;
	if (posix_memalign((void **)&p->base, max, p->size))
		goto out_free_pool;
	p->next = malloc(p->nblk * sizeof(*p->next));
	p->prev = malloc(p->nblk * sizeof(*p->prev));
	p->free_order = malloc(p->nblk);
	p->alloc_order = malloc(p->nblk);
	if (!p->next || !p->prev || !p->free_order || !p->alloc_order)
		goto out_free_arrays;
	memset(p->free_order, NOT_FREE, p->nblk);
	memset(p->alloc_order, NOT_FREE, p->nblk);
	for (unsigned o = 0; o < TGT_BUF_ORDERS; o++)
		p->head[o] = -1;
	for (uint32_t b = p->nblk; b > 0; b -= 1u << MAX_ORDER)
		list_push(p, b - (1u << MAX_ORDER), MAX_ORDER);
	*pp = p;
	return 0;

out_free_arrays:
	free(p->next);
	free(p->prev);
	free(p->free_order);
	free(p->alloc_order);
	free(p->base);
out_free_pool:
	free(p);
	return -ENOMEM;
}

void tgt_bufpool_destroy(struct tgt_bufpool *p)
{
	if (!p)
		return;
	free(p->next);
	free(p->prev);
	free(p->free_order);
	free(p->alloc_order);
	free(p->base);
	free(p);
}

static unsigned order_of(size_t len)
{
	unsigned o = 0;

	while (((size_t)MIN_CHUNK << o) < len)
		o++;
	return o;
}

size_t tgt_buf_chunk_size(size_t len)
{
	return (size_t)MIN_CHUNK << order_of(len);
}

void *tgt_buf_alloc(struct tgt_bufpool *p, size_t len)
{
	unsigned want, o;
	uint32_t b;

	if (len > ((size_t)MIN_CHUNK << MAX_ORDER))
		return NULL;
	want = order_of(len);
	for (o = want; o < TGT_BUF_ORDERS && p->head[o] < 0; o++)
		;
	if (o == TGT_BUF_ORDERS)
		return NULL;
	b = p->head[o];
	list_del(p, b, o);
	while (o > want) {
		o--;
		list_push(p, b + (1u << o), o);
	}
	p->alloc_order[b] = want;
	p->in_use++;
	return p->base + (size_t)b * MIN_CHUNK;
}

void tgt_buf_free(struct tgt_bufpool *p, void *buf)
{
	uint32_t b, buddy;
	unsigned o;

	if (!buf)
		return;
	b = ((uint8_t *)buf - p->base) / MIN_CHUNK;
	o = p->alloc_order[b];
	p->alloc_order[b] = NOT_FREE;
	p->in_use--;
	while (o < MAX_ORDER) {
		buddy = b ^ (1u << o);
		if (buddy >= p->nblk || p->free_order[buddy] != o)
			break;
		list_del(p, buddy, o);
		b &= ~(1u << o);
		o++;
	}
	list_push(p, b, o);
}

void *tgt_bufpool_base(const struct tgt_bufpool *p)
{
	return p->base;
}

size_t tgt_bufpool_size(const struct tgt_bufpool *p)
{
	return p->size;
}

unsigned tgt_bufpool_in_use(const struct tgt_bufpool *p)
{
	return p->in_use;
}
