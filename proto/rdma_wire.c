// SPDX-License-Identifier: MIT
/*
 * The RDMA CM private data exchanged at connection setup.  Kept apart from
 * proto.c because only the RDMA transport uses it, but it is wire format
 * all the same: little-endian, every field checked on receipt.
 */
#include "rblk_proto.h"

#include <endian.h>
#include <string.h>

size_t rblk_encode_rdma_cm(void *buf, const struct rblk_rdma_cm *p)
{
	struct rblk_wire_rdma_cm w;

	memset(&w, 0, sizeof(w));
	w.magic = htole32(RBLK_MAGIC);
	w.version = RBLK_PROTO_VERSION;
	w.queue_id = htole16(p->queue_id);
	w.queue_depth = htole16(p->queue_depth);
	w.status = htole16(p->status);
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

int rblk_decode_rdma_cm(const void *buf, size_t len, struct rblk_rdma_cm *p)
{
	struct rblk_wire_rdma_cm w;

	if (!buf || len < sizeof(w))
		return RBLK_S_INVALID_FIELD;
	memcpy(&w, buf, sizeof(w));
	if (le32toh(w.magic) != RBLK_MAGIC)
		return RBLK_S_INVALID_FIELD;
	if (w.version != RBLK_PROTO_VERSION)
		return RBLK_S_BAD_VERSION;
	if (w.rsvd0 || w.rsvd[0] || w.rsvd[1])
		return RBLK_S_INVALID_FIELD;
	p->queue_id = le16toh(w.queue_id);
	p->queue_depth = le16toh(w.queue_depth);
	p->status = le16toh(w.status);
	if (p->status >= RBLK_S__MAX)
		return RBLK_S_INVALID_FIELD;
	if (p->status == RBLK_S_OK &&
	    (p->queue_depth == 0 || p->queue_depth > RBLK_MAX_QUEUE_DEPTH))
		return RBLK_S_INVALID_FIELD;
	return RBLK_S_OK;
}
