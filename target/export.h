/* SPDX-License-Identifier: MIT */
/*
 * Exports and access control.  An export is a volume the target serves by
 * name, with its allowed hosts, optional secret, sessions and counters.
 * The admin thread adds and removes exports while reactors serve them.
 *
 * Run-time safety (why refcounts): a reactor's I/O path must never take a
 * lock and never see a volume vanish under an in-flight command.  So every
 * session holds a reference on its export, taken at LOGIN under the
 * registry lock; the registry holds one more.  Deleting an export unlinks
 * it from the registry (new LOGINs get NO_SUCH_VOLUME at once) and drops
 * the registry's reference; the volume is closed when the last session
 * lets go, on whichever thread that is.  A forced delete asks each
 * session's reactor, through its event loop (tgt_reactor_post_work), to
 * close the connection, so the connection is torn down by the only thread
 * that owns it.  Resize only grows, and the file grows before the new size
 * is published, so a command checked against either size stays inside the
 * file.  An RCU-like handoff would also work but needs a grace period
 * every reactor reports; a counter per session is simpler and only touched
 * at LOGIN and close.
 *
 * Locking: one registry mutex guards the export list, each export's ACL,
 * secret and session list.  Taken at LOGIN, DISCOVER, session close and by
 * admin requests; never on the I/O path.
 */
#ifndef RBLK_TARGET_EXPORT_H
#define RBLK_TARGET_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <sys/socket.h>

#include "acl_entry.h"
#include "auth.h"
#include "config.h"
#include "rblk_proto.h"
#include "reactor.h"
#include "stats.h"
#include "offload.h"
#include "volume.h"

struct tgt_session;

struct tgt_export {
	char     name[RBLK_NAME_MAX];
	struct tgt_volume *vol;		/* owned; closed with the last ref */
	uint64_t size;			/* exported size; __atomic access */
	unsigned refs;			/* __atomic: registry + sessions */
	bool     listed;		/* in the registry (lock) */
	/* ACL (registry lock) */
	char   **hosts;			/* allow_hosts as written (admin view) */
	struct tgt_acl_entry *acl;	/* the same, parsed: what LOGIN checks */
	unsigned n_hosts;
	bool     any_host;		/* allow_any_host: no list needed */
	struct rblk_secret *secret;	/* NULL = no authentication */
	uint64_t secret_gen;		/* changes with every set or clear */
	/* sessions (registry lock) */
	struct tgt_session *sessions;
	unsigned n_sessions;
	uint64_t logins, refusals;	/* lifetime, registry lock */
	/* per-reactor counters: slot r written only by reactor r */
	struct tgt_io_stats *stats;
	unsigned n_stats;
	struct tgt_export *next;
	/* The last session of a deleted export closes the volume (final
	 * fdatasync + close) on its reactor's offload thread. */
	struct tgt_offload_job close_job;
};

/* One connection logged in to an export. */
struct tgt_session {
	struct tgt_export *exp;		/* holds a ref */
	uint64_t id;
	char     host[RBLK_NAME_MAX];
	char     peer[80];		/* "addr:port" */
	uint16_t queue_id;
	unsigned reactor_id;
	struct tgt_reactor *reactor;
	uint64_t size;			/* granted at LOGIN, grown when the
					 * initiator is told (its reactor;
					 * __atomic for readers elsewhere) */
	uint64_t started;		/* CLOCK_REALTIME seconds */
	struct tgt_io_stats stats;	/* written only by the owning reactor */
	/* Forced disconnect: set by the connection code (reactor thread). */
	void   (*kick)(void *arg);
	void    *kick_arg;
	struct tgt_work kick_work;
	bool     kick_posted;		/* registry lock */
	unsigned refs;			/* __atomic: connection + posted kick */
	struct tgt_session *next;	/* export's list (registry lock) */
};

/*
 * Per-connection login state: lives in the connection, zeroed at accept.
 * After a challenge it holds the first LOGIN as decoded (raw name fields
 * included): the answering LOGIN must repeat it in everything but the
 * proof, so a challenge for one volume can never admit the connection to
 * another one.  It also names the secret the challenge was issued under
 * (the export's secret_gen): an answer after that secret was replaced or
 * cleared is refused, never checked against another secret or none.
 */
struct tgt_auth_state {
	bool    challenged;
	bool    proven;			/* the answer verified: secret known */
	uint8_t nonce[RBLK_NONCE_LEN];
	uint64_t secret_gen;		/* of the secret the challenge used */
	struct rblk_login first;	/* the challenged LOGIN */
};

/* ---- registry (main thread) -------------------------------------------- */

/* Sets up the registry for n_reactors reactor slots.  0 or -errno. */
int tgt_exports_init(unsigned n_reactors);
/* Drops every export (after the reactors are joined). */
void tgt_exports_fini(void);

/*
 * Opens every volume of cfg, loads secrets (mode 0600 checked) and
 * registers them.  On failure nothing stays registered, no file it
 * created stays either, and err names the volume and the reason.  0 or
 * -errno.
 */
int tgt_exports_load(const struct tgt_config *cfg, char *err, size_t errlen);

/*
 * Checks, changing nothing, what tgt_export_add would refuse of cfg: a
 * secret file that cannot be used (mode, length).  0 or -errno with a
 * message in err.  For --check-config and before a start creates files.
 */
int tgt_export_check(const struct tgt_volume_cfg *cfg, char *err, size_t errlen);

/*
 * A failed start: removes the files the volumes' opens created (struct
 * tgt_volume.created), so that the start leaves nothing of its own.
 */
void tgt_exports_unlink_created(void);

/*
 * Registers an opened volume under cfg's name with cfg's ACL (takes
 * ownership of vol on success).  -EEXIST for a name in use, -EPERM /
 * -EINVAL for a secret file that cannot be used; message in err.
 */
int tgt_export_add(struct tgt_volume *vol, const struct tgt_volume_cfg *cfg,
		   char *err, size_t errlen);

/* ---- LOGIN / DISCOVER / completion path (reactor thread) ---------------- */

/*
 * Decides a LOGIN.  Returns RBLK_S_OK with *sp set (the caller owns it;
 * geometry from (*sp)->exp->vol and (*sp)->size), RBLK_S_AUTH_REQUIRED
 * with auth_out set to the challenge nonce (send it in LOGIN_RSP and wait
 * for the second LOGIN on the same connection), or the refusal status
 * (ACCESS_DENIED, AUTH_FAILED, NO_SUCH_VOLUME, NO_RESOURCES), already
 * logged with volume, host, peer and reason.  On RBLK_S_OK after a
 * challenge, auth_out is the target's proof (MAC_T, proto/auth.h) for the
 * LOGIN_RSP; else it is zeroed.  peer is "addr:port" text for logs; peer_sa the
 * connection's real peer address, which address entries of allow_hosts
 * are matched against (NULL: no address entry matches).
 */
int tgt_acl_login(struct tgt_auth_state *st, const struct rblk_login *l,
		  const char *peer, const struct sockaddr *peer_sa,
		  struct tgt_reactor *r, unsigned reactor_id,
		  struct tgt_session **sp, uint8_t auth_out[RBLK_NONCE_LEN]);

/*
 * Fills entries[0..max-1] with the exports host (connecting from peer_sa)
 * may log in to.  A volume with a secret is listed only as proven_volume,
 * the volume this connection authenticated to (NULL: none): until a
 * client proves it knows a secret, the volume does not exist for it.
 * Returns the count.
 */
int tgt_acl_discover(const char *host, const struct sockaddr *peer_sa,
		     const char *proven_volume,
		     struct rblk_discover_entry *entries, unsigned max);

/*
 * Registers the connection's forced-disconnect callback, run on the
 * session's reactor thread (it must close the connection, which later
 * calls tgt_session_close).
 */
void tgt_session_set_kick(struct tgt_session *s, void (*kick)(void *arg),
			  void *arg);

/* Counts one finished command: session and export counters (reactor
 * thread of the session, no lock). */
static inline void tgt_session_account(struct tgt_session *s, int opcode,
				       uint32_t bytes, uint64_t lat_ns,
				       bool error)
{
	tgt_stats_account(&s->stats, opcode, bytes, lat_ns, error);
	if (s->reactor_id < s->exp->n_stats)
		tgt_stats_account(&s->exp->stats[s->reactor_id], opcode,
				  bytes, lat_ns, error);
}

/* Counts a finished FLUSH/FUA command's durability work (same rules). */
static inline void tgt_session_account_dur(struct tgt_session *s, bool flush,
					   bool fua, unsigned syncs,
					   unsigned dsync_writes)
{
	tgt_stats_account_dur(&s->stats, flush, fua, syncs, dsync_writes);
	if (s->reactor_id < s->exp->n_stats)
		tgt_stats_account_dur(&s->exp->stats[s->reactor_id], flush,
				      fua, syncs, dsync_writes);
}

/* Counts zero-copy send work (same rules). */
static inline void tgt_session_account_zc(struct tgt_session *s,
					  enum tgt_zc_counter i, uint64_t n)
{
	tgt_stats_account_zc(&s->stats, i, n);
	if (s->reactor_id < s->exp->n_stats)
		tgt_stats_account_zc(&s->exp->stats[s->reactor_id], i, n);
}

/* True when the export was deleted (the connection may close early). */
static inline bool tgt_session_orphaned(const struct tgt_session *s)
{
	return !__atomic_load_n(&s->exp->listed, __ATOMIC_RELAXED);
}

/*
 * The connection is gone and has no command in flight: unlinks the
 * session and drops the connection's reference (the export's volume may
 * be closed here when it was deleted).  Reactor thread of the session.
 */
void tgt_session_close(struct tgt_session *s);

/* ---- admin thread -------------------------------------------------------- */

/* Registry lock, for the admin handlers that walk exports and sessions. */
void tgt_exports_lock(void);
void tgt_exports_unlock(void);
/* First export (lock held); iterate with ->next. */
struct tgt_export *tgt_exports_first(void);
/* Finds a listed export by name (lock held); NULL if none. */
struct tgt_export *tgt_export_find_locked(const char *name);

/*
 * Unlinks the export (lock NOT held).  With sessions attached: -EBUSY
 * unless force, which asks each session's reactor to close its
 * connection.  The volume closes when the last session is gone.
 */
int tgt_export_remove(const char *name, bool force);

/*
 * Replaces the allowed host list and the allow_any_host setting (lock NOT
 * held).  0, -EINVAL for an entry that does not parse (nothing changed),
 * -ENOMEM or -ENOENT.
 */
int tgt_export_set_hosts(const char *name, char *const *hosts, unsigned n,
			 bool any_host);
/* Sets (secret != NULL, copied) or clears the secret.  0 or -ENOENT. */
int tgt_export_set_secret(const char *name, const struct rblk_secret *secret);
/* Publishes a larger size (the store was grown first).  0 or -ENOENT. */
int tgt_export_set_size(const char *name, uint64_t size);
/*
 * vol's store grew by itself (an rbd image resized elsewhere): vol and
 * the export that serves it take size if it is larger, and its sessions
 * hear of it at the next tick.  Never shrinks.  Any thread, lock NOT
 * held.
 */
void tgt_export_grow_volume(struct tgt_volume *vol, uint64_t size);

/*
 * A change set, made in one step under the registry lock (config reload):
 * every change is checked first, then all are made or none.  Exports for
 * it are built off the registry with tgt_export_prepare (vol NULL: only
 * the access part, for TGT_EXPORT_ACCESS) and freed with
 * tgt_export_discard unless a change consumed them.
 */
enum tgt_export_op {
	TGT_EXPORT_ADD,		/* list prep under its name (new name) */
	TGT_EXPORT_REMOVE,	/* unlist name (no session attached) */
	TGT_EXPORT_REPLACE,	/* prep takes name's place (no session) */
	TGT_EXPORT_ACCESS,	/* name takes prep's ACL and secret */
};

struct tgt_export_change {
	enum tgt_export_op op;
	const char *name;
	struct tgt_export *prep;	/* NULL once the registry took it */
};

/* An unlisted export of vol (taken on success; may be NULL) with cfg's
 * name, ACL and secret (loaded now).  0 or -errno with a message. */
int tgt_export_prepare(struct tgt_volume *vol, const struct tgt_volume_cfg *cfg,
		       struct tgt_export **ep, char *err, size_t errlen);
/* Frees a prepared export that was not listed (closing its volume). */
void tgt_export_discard(struct tgt_export *e);
/* Whether the listed export of prep's name has prep's ACL and secret. */
bool tgt_export_same_access(const struct tgt_export *prep);
/*
 * Makes the n changes, all or none: -EEXIST (ADD of a listed name),
 * -ENOENT, -EBUSY (a session on a REMOVE or REPLACE) with a message in err
 * and nothing changed.  On success ADD and REPLACE preps belong to the
 * registry (their prep is NULL); ACCESS preps now hold the old ACL and
 * secret, for tgt_export_discard.  Removed and replaced volumes are
 * closed (their files are kept).
 */
int tgt_exports_change(struct tgt_export_change *ch, unsigned n, char *err,
		       size_t errlen);

/* Sums an export's per-reactor counters into *out (lock held or not). */
void tgt_export_stats(const struct tgt_export *e, struct tgt_io_stats *out);

/*
 * May this connection use a volume with this list?  any_host admits
 * everyone; otherwise an entry must match (acl_entry.h: names match the
 * claimed host, addresses the real peer).  An empty list admits no one.
 */
bool tgt_acl_host_allowed(const struct tgt_acl_entry *acl, unsigned n,
			  bool any_host, const char *host,
			  const struct sockaddr *peer_sa);

#endif /* RBLK_TARGET_EXPORT_H */
