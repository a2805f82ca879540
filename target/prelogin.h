/* SPDX-License-Identifier: MIT */
/*
 * Connections that have not logged in yet, counted per source address and
 * in total, so that openings which never LOGIN (or DISCOVER) cannot pile
 * up: over either cap a new connection is refused at accept (TCP: closed;
 * RDMA: rdma_reject) and the refusal is logged, rate-limited.  A
 * connection is admitted on the main thread and released on its reactor
 * when it logs in or goes, so the table has a lock; it is touched twice
 * per connection, never on the I/O path.
 */
#ifndef RBLK_TARGET_PRELOGIN_H
#define RBLK_TARGET_PRELOGIN_H

#include <sys/socket.h>

struct tgt_prelogin;
struct tgt_prelogin_src;	/* one source address's count */

/* max_total, max_per_host: 0 = no cap.  0 or -ENOMEM. */
int  tgt_prelogin_create(struct tgt_prelogin **pp, unsigned max_total,
			 unsigned max_per_host);
/* After every connection released its count.  NULL is fine. */
void tgt_prelogin_destroy(struct tgt_prelogin *p);

/*
 * Counts a new connection from sa (its address; the port is ignored,
 * IPv4-mapped IPv6 counts as IPv4; NULL or another family shares one
 * "unknown" entry).  Returns 0 and *srcp, to hand to
 * tgt_prelogin_release exactly once; -EUSERS when a cap is reached
 * (logged, rate-limited, with tp and listener naming where it came in);
 * -ENOMEM.  Any thread.
 */
int  tgt_prelogin_admit(struct tgt_prelogin *p, const struct sockaddr *sa,
			const char *tp, const char *listener,
			struct tgt_prelogin_src **srcp);
/* The connection logged in or is gone.  NULL src is fine.  Any thread. */
void tgt_prelogin_release(struct tgt_prelogin *p, struct tgt_prelogin_src *src);
/* Connections counted now (tests, logs). */
unsigned tgt_prelogin_count(struct tgt_prelogin *p);

#endif /* RBLK_TARGET_PRELOGIN_H */
