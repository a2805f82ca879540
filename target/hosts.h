/* SPDX-License-Identifier: MIT */
/*
 * Per-host accounting: how many connections each peer address has (and
 * all of them together), against max_connections_per_host and
 * max_connections, and how much of each reactor's buffer pool a host's
 * connections hold (host_buffer_mb).  A host is the address the transport
 * saw (IPv4-mapped IPv6 counts as the IPv4 address), never a name a client
 * claims.  Entries are taken and dropped once per connection, under one
 * mutex; the per-reactor byte counters are touched only by their reactor.
 */
#ifndef RBLK_TARGET_HOSTS_H
#define RBLK_TARGET_HOSTS_H

#include <stddef.h>
#include <sys/socket.h>

struct tgt_hosts;
struct tgt_host;

/* A table for nreactors reactors and these limits.  0 or -ENOMEM. */
int tgt_hosts_create(struct tgt_hosts **hp, unsigned nreactors,
		     unsigned max_total, unsigned max_per_host);
/* Every host must have been put back. */
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

#endif /* RBLK_TARGET_HOSTS_H */
