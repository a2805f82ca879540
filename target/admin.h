/* SPDX-License-Identifier: MIT */
/*
 * Admin socket: a Unix stream socket (default /run/rblk/target.sock, mode
 * 0600) served by its own thread, never a reactor.  Newline-delimited JSON:
 * each request is one JSON object on one line (at most 64 KiB), each answer
 * one JSON object on one line, in order.  docs/admin.md is the reference.
 *
 * Changes are persisted to the config file atomically (admin_persist.c)
 * before they become visible, so what rblkctl reports is what a restart
 * will load.
 */
#ifndef RBLK_TARGET_ADMIN_H
#define RBLK_TARGET_ADMIN_H

#include <stddef.h>

#include "config.h"

#define TGT_ADMIN_DEFAULT_SOCKET	"/run/rblk/target.sock"
#define TGT_ADMIN_DEFAULT_VOLUME_DIR	"/var/lib/rblk"
#define TGT_ADMIN_MAX_LINE		(64u << 10)

struct tgt_admin;

struct tgt_admin_params {
	const char *socket_path;	/* NULL: cfg->admin_socket or default */
	const char *config_path;	/* file to persist to; NULL: do not */
	const char *config_text;	/* the bytes cfg was parsed from (the
					 * file as read); NULL: none */
	const struct tgt_config *cfg;	/* copied; the exports are already loaded */
};

/*
 * Creates the admin state (a private copy of cfg).  No socket yet: the
 * request handler can be used directly (unit tests).  0 or -errno.
 */
int tgt_admin_create(struct tgt_admin **ap, const struct tgt_admin_params *p,
		     char *err, size_t errlen);
/* Stops the thread if running, removes the socket, frees everything. */
void tgt_admin_destroy(struct tgt_admin *a);

/*
 * Binds the socket (creating its directory 0755 if missing; a stale
 * socket file is replaced, a live one is refused with -EADDRINUSE) and
 * starts the thread.  0 or -errno with a message in err.
 */
int tgt_admin_start(struct tgt_admin *a, char *err, size_t errlen);

/*
 * Handles one request line; returns the malloc'd answer line (without the
 * newline), never NULL except on ENOMEM.  Admin thread (or a test).
 */
char *tgt_admin_handle(struct tgt_admin *a, const char *line, size_t len);

/*
 * Checks, changing nothing, what tgt_admin_start would refuse of
 * socket_path (too long, a file that is not a socket is in its place).  A
 * socket in use is not refused: --check-config runs next to the target.
 * 0 or -errno with a message in err.
 */
int tgt_admin_check(const char *socket_path, char *err, size_t errlen);

/*
 * Asks the admin thread to reload the config file (SIGHUP; main thread).
 * It runs between requests; the outcome is logged (docs/admin.md).
 */
void tgt_admin_request_reload(struct tgt_admin *a);

/* The socket path in use. */
const char *tgt_admin_socket_path(const struct tgt_admin *a);

/*
 * Writes cfg to path atomically: temp file in the same directory, fsync,
 * rename over path, fsync the directory.  The text is parsed back first,
 * so a config that would not load is never written.  Keeps path's mode
 * (0600 for a new file).  0 or -errno with a message in err.
 */
int tgt_admin_save_config(const char *path, const struct tgt_config *cfg,
			  char *err, size_t errlen);

#endif /* RBLK_TARGET_ADMIN_H */
