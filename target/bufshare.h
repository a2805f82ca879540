/* SPDX-License-Identifier: MIT */
/*
 * How the connections of one reactor share its buffer pool
 * (docs/target.md, "Resource limits").  Reactor thread only, no locks.
 *
 * - Caps: a connection holds at most conn_buffer_mb, all connections of
 *   one peer address at most host_buffer_mb (per reactor).
 * - Waiting: a command that finds its cap, its host's share or the pool
 *   short is not taken (back-pressure).  Connections short of the pool or
 *   of their host's share queue in one line per reactor, the connection
 *   whose host holds least first; freed memory is handed to them in that
 *   order (a grant) before anyone else may take it, so connections that
 *   hold much can never starve one that holds little.  A connection at
 *   its own cap waits for its own memory only.
 * - Pinned memory: chunks whose release waits on the client (a WRITE
 *   payload still arriving, answers with data it has not taken) are
 *   counted with the time they last moved.  While someone waits in line,
 *   the connection whose pinned memory has not moved for the longest,
 *   TGT_SHARE_EVICT_MS at least, is closed to make room; answers that do
 *   not move for stall_timeout are closed whether anyone waits or not.
 */
#ifndef RBLK_TARGET_BUFSHARE_H
#define RBLK_TARGET_BUFSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reactor.h"

struct tgt_conn;

/* Pinned memory that has not moved for this long may be reclaimed (its
 * connection closed) while another connection waits for memory. */
#define TGT_SHARE_EVICT_MS	1000
/* How often a waiting line is looked at for such memory. */
#define TGT_SHARE_RELIEF_MS	100

enum tgt_share_wait {
	TGT_SHARE_NONE,
	TGT_SHARE_OWN,		/* over its own cap: waits for its own frees */
	TGT_SHARE_LINE,		/* the pool or its host's share: in line */
};

enum tgt_share_pin {
	TGT_PIN_RX,		/* WRITE payloads arriving */
	TGT_PIN_TX,		/* answers with data not yet taken */
};

/* Per connection, inside struct tgt_conn. */
struct tgt_conn_share {
	size_t   bytes;			/* pool bytes (chunk sizes) it holds */
	size_t   pin[2];		/* of which pinned, by enum tgt_share_pin */
	uint64_t moved_ms[2];		/* last progress, or when pinning began */
	uint64_t paused_ms;		/* time spent waiting for memory, in all */
	uint64_t line_ms;		/* of which in line (not for its own memory) */
	uint64_t rx_line0;		/* line_ms when moved_ms[RX] was set */
	uint64_t wait_since_ms;
	uint8_t  wait;			/* enum tgt_share_wait (holds a reference) */
	uint8_t  short_of;		/* what the last failed take lacked */
	bool     ev_queued;		/* resume pending (holds a reference) */
	bool     counted;		/* this stop is in the limit counts */
	bool     evicted;		/* closed to make room, chunks not all back */
	uint32_t want, need;		/* chunk it waits for; least a grant may be */
	size_t   credit;		/* bytes it gives back once served */
	/* Closes the connection at once: it holds memory others wait for
	 * and does not move (the connection layer's close, given at init). */
	void   (*evict)(struct tgt_conn *c, const char *why);
	size_t   key;			/* its host's bytes when it joined the line */
	uint64_t seq;
	struct tgt_conn *next;		/* in line */
	void    *grant;			/* chunk taken for it, charged already */
	uint32_t grant_cap;
	struct tgt_event ev;		/* resumes it (holds a reference) */
};

/* Per reactor, inside struct tgt_reactor. */
struct tgt_share {
	struct tgt_reactor *r;
	struct tgt_conn *line;		/* waiting for the pool or a host share */
	uint64_t seq;
	unsigned evicting;		/* closed to make room, chunks still out */
	struct tgt_event serve_ev, relief_ev;
	struct __kernel_timespec relief_ts;
	bool     serve_queued, relief_armed;
};

/* tgt_conn_init: nothing held, nothing waited for; evict is how the
 * share closes c when it must take its memory back. */
void tgt_share_conn_init(struct tgt_conn *c,
			 void (*evict)(struct tgt_conn *c, const char *why));

/*
 * A chunk of at least len bytes for c within its caps, or a grant it was
 * given while it waited (if it holds need bytes at least).  credit: bytes
 * of a chunk c gives back right after (a WRITE's buffer that grows), not
 * counted twice.  Returns the chunk with *cap its size, or NULL when c has
 * to wait: then call tgt_share_wait(c), and ops->resume(c) follows.
 */
void *tgt_share_take(struct tgt_conn *c, uint32_t len, uint32_t need,
		     size_t credit, uint32_t *cap);
/* Gives a chunk back (NULL is ignored); serves waiters. */
void tgt_share_put(struct tgt_conn *c, void *buf, uint32_t cap);
/* c stops taking PDUs until memory may be there (after a failed take). */
void tgt_share_wait(struct tgt_conn *c);
/* Someone on r waits in line for memory others hold. */
bool tgt_share_someone_waits(struct tgt_reactor *r);
/* c is closing: out of the line, its grant back, its resume dropped
 * unless it drains (then it is resumed to answer SHUTTING_DOWN). */
void tgt_share_cancel(struct tgt_conn *c);
/* A grant c did not use (the PDU it waited with took no chunk). */
void tgt_share_drop_grant(struct tgt_conn *c);

/*
 * Pinned bytes of chunks c holds: delta > 0 when a chunk starts to wait
 * on the client, < 0 when it stops; moved: the client did its part (a
 * payload arrived whole, an answer went out).
 */
void tgt_share_pin(struct tgt_conn *c, enum tgt_share_pin p, long delta,
		   bool moved);
/* How long c's pinned memory has not moved (0: none pinned).  A WRITE
 * payload does not age while c waits in line (the target is not reading
 * it for want of others' memory); waiting for its own memory, it does. */
uint64_t tgt_share_stalled_ms(const struct tgt_conn *c, enum tgt_share_pin p,
			      uint64_t now);
/* Time c spent waiting for memory so far (data_timeout does not run). */
uint64_t tgt_share_paused_ms(const struct tgt_conn *c, uint64_t now);

#endif /* RBLK_TARGET_BUFSHARE_H */
