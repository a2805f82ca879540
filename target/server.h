/* SPDX-License-Identifier: MIT */
/*
 * The target as a whole: the config it runs, its volumes, its reactors and
 * listeners.  Created and torn down by the main thread; reactors only read
 * it.  Volumes live in the export registry (export.h).
 */
#ifndef RBLK_TARGET_SERVER_H
#define RBLK_TARGET_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "reactor.h"
#include "transport.h"
#include "volume.h"

struct tgt_server {
	struct tgt_config cfg;

	struct tgt_reactor **reactors;
	unsigned n_reactors;
	atomic_uint rr;			/* round-robin cursor */

	struct tgt_listener *listeners[TGT_CFG_MAX_LISTEN * 2];
	const struct tgt_transport_ops *listener_ops[TGT_CFG_MAX_LISTEN * 2];
	const char *listener_addr[TGT_CFG_MAX_LISTEN * 2];	/* in cfg */
	unsigned n_listeners;

	/* SIGTERM accounting: requests answered while draining, and those
	 * failed with SHUTTING_DOWN. */
	atomic_uint_fast64_t drained, failed;
	atomic_uint conns_open;

	/* Connection limits, pre-login caps and pool shares (hosts.h),
	 * made with the reactors (before any listener); NULL = none. */
	struct tgt_hosts *hosts;
	size_t conn_cap, host_cap;	/* bytes of one reactor's pool; 0 = half */
};

/* Opens every volume of cfg (taking ownership of cfg).  0 or -errno; on
 * failure nothing stays open and err says which volume and why. */
int tgt_server_create(struct tgt_server **sp, struct tgt_config *cfg,
		      char *err, size_t errlen);
/* Fills conn_cap / host_cap from the config (start_reactors calls it). */
void tgt_server_set_caps(struct tgt_server *s);
/* Starts reactors (n from cfg; 0 = online cores).  0 or -errno. */
int tgt_server_start_reactors(struct tgt_server *s);
/* Listens on every configured address.  0 or -errno. */
int tgt_server_listen(struct tgt_server *s);
/* Closes listeners (no new connections). */
void tgt_server_unlisten(struct tgt_server *s);
/* Stops and joins reactors (drain, see reactor.h). */
void tgt_server_stop_reactors(struct tgt_server *s);
/* Joins what is left, flushes and closes the volumes (export.c logs a failed
 * final flush), frees s.  Returns 0. */
int tgt_server_destroy(struct tgt_server *s);

/* Next reactor for a new connection (any thread). */
struct tgt_reactor *tgt_server_pick_reactor(struct tgt_server *s);

/* Volume lookup, discovery and the LOGIN access check live in export.h. */

#endif /* RBLK_TARGET_SERVER_H */
