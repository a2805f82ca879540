/* SPDX-License-Identifier: MIT */
/*
 * rblk client library: one struct rblk_queue = one connection (TCP socket or
 * RDMA queue pair) to a target, logged in to one volume.  A queue is used by
 * exactly one thread (no locks inside); open several queues for parallelism.
 * Users: the fio engine (tools/fio) and the ublk initiator (initiator/).
 *
 * Every function that can fail returns 0 (or a count) or -errno.
 */
#ifndef RBLK_INITIATOR_CLIENT_RBLK_CLIENT_H
#define RBLK_INITIATOR_CLIENT_RBLK_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "rblk_proto.h"

struct rblk_queue;

struct rblk_client_opts {
	const char *host;		/* target address or name */
	const char *port;		/* NULL: default port of the transport */
	const char *volume;
	const char *hostname;		/* NULL: this machine's hostname */
	const char *transport;		/* "tcp" (default) or "rdma" */
	const char *secret_file;	/* NULL: no authentication */
	const char *source_addr;	/* numeric local address to connect from
					 * (TCP only); NULL: the kernel's choice */
	unsigned    queue_id;
	unsigned    queue_depth;	/* wanted; 0 = 128 */
	int         timeout_ms;		/* connect + login; 0 = 10000 */
};

/* What LOGIN_RSP told us; filled by rblk_queue_open. */
struct rblk_volume_info {
	uint64_t size;
	uint32_t block_size;
	uint32_t max_io;
	uint32_t inline_size;
	uint32_t vol_flags;		/* RBLK_VOL_F_* */
	uint16_t queue_depth;		/* granted */
	uint16_t max_sge;
	uint64_t session_id;
};

/*
 * One I/O.  The caller owns it until it comes back from rblk_queue_reap.
 * buf must lie inside a buffer registered with rblk_queue_reg_buffer when
 * the transport needs it (RDMA); TCP accepts any memory.
 */
struct rblk_io {
	uint8_t   opcode;		/* RBLK_OP_* */
	uint8_t   flags;		/* RBLK_CMD_F_* */
	uint64_t  offset;
	uint32_t  length;
	void     *buf;			/* READ/WRITE data, else NULL */
	void     *priv;			/* caller's cookie */
	/* filled on completion */
	int       status;		/* RBLK_S_* (or RBLK_S_IO_ERROR on transport loss) */
	int       error;		/* 0 or -errno equivalent of status */
	/* library private */
	uint32_t  tag;
};

/*
 * Connects and logs in (including the HMAC challenge when the volume has a
 * secret).  On success *qp is the queue and *info what the target granted.
 * On a refusal the returned error is -ENOENT (no such volume), -EACCES
 * (access denied / auth failed), -EPROTO (version), -ECONNREFUSED, ...; a
 * one-line reason is stored in errbuf (may be NULL).
 */
int rblk_queue_open(const struct rblk_client_opts *opts,
		    struct rblk_queue **qp, struct rblk_volume_info *info,
		    char *errbuf, size_t errlen);
/* Fails outstanding I/O with RBLK_S_IO_ERROR (reaped or not) and frees q. */
void rblk_queue_close(struct rblk_queue *q);

/* Registers memory I/O buffers will live in (RDMA MR); no-op on TCP. */
int rblk_queue_reg_buffer(struct rblk_queue *q, void *buf, size_t len);

/*
 * Sends one command.  Returns 0, -EBUSY when queue_depth commands are
 * already outstanding, -EINVAL for a malformed io, -ENOTCONN when the
 * connection is gone.
 */
int rblk_queue_submit(struct rblk_queue *q, struct rblk_io *io);

/*
 * Collects completed I/Os into done[0..max-1], waiting until at least
 * min_wait are available (min_wait 0: never blocks) or timeout_ms passes
 * (-1: no timeout).  Returns the count, or -errno when the connection failed
 * (outstanding I/Os are then returned completed with RBLK_S_IO_ERROR).
 * Precisely: when the connection fails, every outstanding I/O completes with
 * RBLK_S_IO_ERROR and is returned by this call and the next ones as a normal
 * count; once none is left, reap returns the -errno that killed the queue
 * (-EPROTO for a malformed response, -ECONNRESET ...), and submit returns
 * -ENOTCONN.  min_wait is capped at the number outstanding, so it never
 * waits for I/O that was not submitted.
 */
int rblk_queue_reap(struct rblk_queue *q, struct rblk_io **done,
		    unsigned min_wait, unsigned max, int timeout_ms);

/* An fd that becomes readable when rblk_queue_reap(.., 0, ..) has work.
 * Responses already received are buffered: after a reap that returned max,
 * call reap again before waiting on the fd. */
int rblk_queue_fd(struct rblk_queue *q);
/* Number of commands sent and not yet reaped. */
unsigned rblk_queue_inflight(const struct rblk_queue *q);

/*
 * Lists volumes this host may use (DISCOVER).  Volumes with a secret are
 * listed only after proving it: with opts->volume set, the connection
 * first logs in to that volume (answering its challenge with
 * opts->secret_file, checking the target's proof) and then discovers, so
 * that volume is listed too.  Returns count or -errno (login refusals as
 * for rblk_queue_open); entries is an array of max (a count above max
 * fills only max).
 */
int rblk_discover(const struct rblk_client_opts *opts,
		  struct rblk_discover_entry *entries, unsigned max,
		  char *errbuf, size_t errlen);

#endif /* RBLK_INITIATOR_CLIENT_RBLK_CLIENT_H */
