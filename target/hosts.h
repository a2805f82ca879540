/* SPDX-License-Identifier: MIT */
/*
 * Per-host accounting, one entry per peer address with two counters:
 * - every open connection (logged in or not), against
 *   max_connections_per_host and max_connections, with how much of each
 *   reactor's buffer pool the host's connections hold (host_buffer_mb);
 * - connections that have not logged in yet, against
 *   max_prelogin_per_host and max_prelogin: over either cap a new
 *   connection is refused at accept (TCP: closed; RDMA: rdma_reject) and
 *   the refusal is logged, rate-limited.
 * A host is the address the transport saw (the port does not count,
 * IPv4-mapped IPv6 counts as the IPv4 address), never a name a client
 * claims.  An entry exists while either counter is above 0.  Counters
 * are taken and dropped a few times per connection, under one mutex;
 * the per-reactor byte counters are touched only by their reactor.
 */
#ifndef RBLK_TARGET_HOSTS_H
#define RBLK_TARGET_HOSTS_H

#include <stddef.h>
#include <sys/socket.h>

struct tgt_hosts;
struct tgt_host;

/* A table for nreactors reactors and these limits (max_prelogin and
 * max_prelogin_per_host: 0 = no cap).  0 or -ENOMEM. */
int tgt_hosts_create(struct tgt_hosts **hp, unsigned nreactors,
		     unsigned max_total, unsigned max_per_host,
		     unsigned max_prelogin, unsigned max_prelogin_per_host);
/* Frees every entry, even one still counted (connections abandoned by
 * an aborted stop).  NULL is fine. */
void tgt_hosts_destroy(struct tgt_hosts *t);

/*
 * Counts one more connection from sa (NULL or AF_UNSPEC: the "unknown"
 * host).  Returns 0 and *hp, -ENFILE when max_connections are open, or
 * -EMFILE when this host has max_connections_per_host (nothing counted).
 * Any thread.
 */
int tgt_host_get(struct tgt_hosts *t, const struct sockaddr *sa,
		 struct tgt_host **hp);
/* The connection is gone (any thread).  NULL is ignored. */
void tgt_host_put(struct tgt_host *h);

/* Pool bytes this host's connections hold on reactor rid (that reactor
 * only). */
size_t *tgt_host_buf_bytes(struct tgt_host *h, unsigned rid);

/* Connections open from h right now (logs). */
unsigned tgt_host_conns(const struct tgt_host *h);

/*
 * Counts a new connection from sa as not logged in yet (the transport, at
 * accept; NULL or another family: the "unknown" host).  Returns 0 and *hp,
 * to hand to tgt_host_prelogin_put exactly once (*hp is NULL when t is
 * NULL: nothing counted); -EUSERS when max_prelogin or
 * max_prelogin_per_host is reached (logged, rate-limited, with tp and
 * listener naming where it came in; nothing counted); -ENOMEM.  Any thread.
 */
int tgt_host_prelogin_get(struct tgt_hosts *t, const struct sockaddr *sa,
			  const char *tp, const char *listener,
			  struct tgt_host **hp);
/* The connection logged in or is gone.  NULL is ignored.  Any thread. */
void tgt_host_prelogin_put(struct tgt_host *h);
/* Connections not logged in yet, all hosts (tests, logs). */
unsigned tgt_hosts_prelogin(struct tgt_hosts *t);

#endif /* RBLK_TARGET_HOSTS_H */
