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

/*
 * Fault-handling timeouts (struct rblk_client_opts, milliseconds): 0 takes
 * the default; these two values say "never" and "at once".
 */
#define RBLK_TMO_OFF	(-1)	/* keep-alive/io_timeout off, ctrl_loss forever,
				 * fast_io_fail off */
#define RBLK_TMO_NOW	(-2)	/* ctrl_loss: no reconnect (fail at once);
				 * fast_io_fail: fail held I/O at once */

/* A user-facing timeout in seconds (-1 never, 0 at once, N seconds) as
 * an rblk_client_opts value. */
static inline int rblk_tmo_from_sec(long sec)
{
	if (sec < 0)
		return RBLK_TMO_OFF;
	if (sec == 0)
		return RBLK_TMO_NOW;
	return sec > 2000000 ? 2000000000 : (int)sec * 1000;
}

/*
 * Another way to the same volume (multipath): another target that serves
 * it (an RBD image with rbd_ha on both), or the same target over another
 * transport.  Strings are copied by rblk_queue_open.
 */
struct rblk_client_path {
	const char *transport;		/* NULL: opts.transport */
	const char *host;
	const char *port;		/* NULL: the transport's default */
};

#define RBLK_MAX_PATHS	8		/* the first path and 7 more */

/*
 * A path as users write it: [tcp:|rdma:]HOST[:PORT] (HOST as for
 * --target: name, IPv4, [IPv6]).  transport is "" without a prefix (the
 * caller's default applies), port "" without one.  0, or -EINVAL with a
 * reason in errbuf.
 */
struct rblk_path_spec {
	char transport[8];
	char host[256];
	char port[12];
};
int rblk_path_parse(const char *spec, struct rblk_path_spec *out, char *errbuf,
		    size_t errlen);

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
	/* Faults (docs/ublk.md, "Faults"); ms, 0 = default, RBLK_TMO_*. */
	int         keep_alive_tmo_ms;	/* 0 = 5000: no answer for this long = dead */
	int         io_timeout_ms;	/* 0 = 30000: per command, then reconnect */
	int         reconnect_delay_ms;	/* 0 = 2000: between reconnect attempts */
	int         ctrl_loss_tmo_ms;	/* 0 = 600000: then held and new I/O fail */
	int         fast_io_fail_tmo_ms; /* 0 = off: fail I/O early, keep trying */
	/*
	 * Optional: the caller is stopping (fio on SIGINT).  Asked at least
	 * every RBLK_STOP_POLL_MS while the library waits; once it returns
	 * nonzero, a wait that cannot end by itself at once is cut short:
	 * connecting, logging in, reconnecting, a send that waits for room
	 * end at once, and a live target that sends nothing for
	 * RBLK_STOP_GRACE_MS is given up on (one that answers is waited
	 * for).  rblk_queue_open then fails with -ECANCELED; an
	 * open queue turns FAILED (-ECANCELED) and its outstanding I/O
	 * completes with RBLK_S_IO_ERROR.  Called on the queue's thread.
	 */
	int       (*stop)(void *arg);
	void       *stop_arg;
	/*
	 * Multipath (docs/multipath.md): host/port/transport is the first
	 * (preferred) path, these are the others, in the order they are
	 * tried.  Active/standby: the queue uses one path at a time; when
	 * it is lost, held and new commands go to the next path at once,
	 * and round the list again every reconnect_delay.  It stays on a
	 * path that works (rblk_queue_prefer_path moves it back).
	 */
	const struct rblk_client_path *alt_paths;
	unsigned    n_alt_paths;
	/* The path rblk_queue_open tries first (0: host/port, i: alt_paths[i
	 * - 1]); the others follow in order, wrapping.  Path numbers in
	 * rblk_queue_paths and rblk_queue_prefer_path stay the list's. */
	unsigned    first_path;
	/* NULL: the first LOGIN's volume UUID is the volume's; else every
	 * path must report this one (a device's other queues). */
	const uint8_t *expect_uuid;	/* RBLK_UUID_LEN bytes */
};

#define RBLK_STOP_POLL_MS	100	/* how often opts.stop is asked */
#define RBLK_STOP_GRACE_MS	500	/* a live target's silence allowed then */

/* What a queue is doing; see rblk_queue_status. */
enum rblk_queue_state {
	RBLK_QUEUE_LIVE,		/* connected: commands go out */
	RBLK_QUEUE_CONNECTING,		/* lost: commands are held, reconnecting */
	RBLK_QUEUE_FAILED,		/* gave up (ctrl_loss_tmo, bad target) */
};

struct rblk_queue_status {
	enum rblk_queue_state state;
	int64_t  state_ms;		/* time in this state */
	unsigned reconnects;		/* successful reconnects since open */
	unsigned attempts;		/* attempts in this CONNECTING period */
	int      io_failing;		/* CONNECTING and fast_io_fail_tmo passed */
	int      last_err;		/* -errno of the last loss, 0 if none */
	const char *reason;		/* why the last connection went ("" if none) */
	/* The volume's size as the target last said: at LOGIN, then in
	 * KEEPALIVE_RSPs when it grows (volume.resize); never less. */
	uint64_t size;
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
	/* Longest DISCARD / WRITE_ZEROES the target takes (block multiples);
	 * 0 when the volume does not offer the command.  Longer ones are
	 * refused here with -EINVAL: split them. */
	uint32_t max_discard;
	uint32_t max_write_zeroes;
	uint8_t  uuid[RBLK_UUID_LEN];	/* the volume's identity */
};

/* A path's connection, as the queue last saw it. */
enum rblk_path_state {
	RBLK_PATH_UNTRIED,		/* standby, not connected to yet */
	RBLK_PATH_LIVE,			/* the queue's connection is on it */
	RBLK_PATH_CONNECTING,		/* being connected to */
	RBLK_PATH_FAILED,		/* the last connection or attempt failed */
	RBLK_PATH_OTHER_VOLUME,		/* reaches another volume: never used */
};

struct rblk_path_status {
	const char *transport, *host, *port;
	enum rblk_path_state state;
	int      active;		/* the path the queue uses (optimized) */
	int64_t  state_ms;		/* time in this state */
	unsigned failures;		/* connections lost or refused on it */
	const char *reason;		/* why it last failed ("" if never) */
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
/*
 * Faults.  A lost connection (reset, EOF, keep-alive timeout, an
 * io_timeout, a target that says SHUTTING_DOWN) does not fail I/O: the
 * queue turns CONNECTING, keeps what was sent, holds new submissions, and
 * reconnects (LOGIN and auth again; RDMA buffers registered again) every
 * reconnect_delay -- at once and then every 250 ms for 10 s after
 * SHUTTING_DOWN.  Back LIVE, held commands are sent again in submission
 * order.  After fast_io_fail_tmo held and new I/O fail with
 * RBLK_S_IO_ERROR (-EIO from submit) while reconnecting goes on; after
 * ctrl_loss_tmo the queue is FAILED.  A reconnect whose LOGIN the target
 * refuses with NO_SUCH_VOLUME, ACCESS_DENIED or AUTH_FAILED (the volume
 * was deleted, this host's access revoked, the secret changed) is final,
 * as a connect refused with DNR is for the kernel's NVMe host: the queue
 * is FAILED at once (-ENOENT or -EACCES, the reason in
 * rblk_queue_status) and held and new I/O fail.  The timers run inside
 * rblk_queue_reap, which rblk_queue_fd wakes when they are due.
 */

/* Fails outstanding I/O with RBLK_S_IO_ERROR (reaped or not) and frees q. */
void rblk_queue_close(struct rblk_queue *q);

/* Registers memory I/O buffers will live in (RDMA MR); no-op on TCP. */
int rblk_queue_reg_buffer(struct rblk_queue *q, void *buf, size_t len);

/*
 * Sends one command (holds it while CONNECTING).  Returns 0, -EBUSY when
 * queue_depth commands are already outstanding, -EINVAL for a malformed
 * io, -EIO while fast_io_fail_tmo has passed, -ENOTCONN once FAILED.
 */
int rblk_queue_submit(struct rblk_queue *q, struct rblk_io *io);

/*
 * rblk_queue_submit for a caller that submits several commands in a row:
 * the command may stay in the queue until rblk_queue_flush (or the next
 * rblk_queue_reap or rblk_queue_peek, which flush first), so that the
 * transport sends the whole row at once (RDMA: one doorbell, one system
 * call).  Call rblk_queue_flush before waiting on rblk_queue_fd.
 */
int rblk_queue_submit_more(struct rblk_queue *q, struct rblk_io *io);
/* Sends what rblk_queue_submit_more left in the queue (the transport's
 * flush, while LIVE); a failure is a lost connection, as for a failed
 * send. */
void rblk_queue_flush(struct rblk_queue *q);

/*
 * Collects completed I/Os into done[0..max-1], waiting until at least
 * min_wait are available (min_wait 0: never blocks) or timeout_ms passes
 * (-1: no timeout), and runs the queue's timers and reconnects.  Returns
 * the count, or -errno once the queue is FAILED.  Precisely: when the
 * queue fails (ctrl_loss_tmo, or a malformed response: a target that lies
 * is not reconnected to), every outstanding I/O completes with
 * RBLK_S_IO_ERROR and is returned by this call and the next ones as a
 * normal count; once none is left, reap returns the -errno that failed the
 * queue (-EPROTO, -ECONNRESET ...), and submit returns -ENOTCONN.
 * min_wait is capped at the number outstanding, so it never waits for I/O
 * that was not submitted.
 */
int rblk_queue_reap(struct rblk_queue *q, struct rblk_io **done,
		    unsigned min_wait, unsigned max, int timeout_ms);

/*
 * rblk_queue_reap(q, done, 0, max, 0) for a caller that waits on
 * rblk_queue_fd next: picks up what already arrived without a syscall
 * where the transport can (RDMA), and leaves timers, reconnects and
 * connection events to the reap that the fd's wakeup calls.
 */
int rblk_queue_peek(struct rblk_queue *q, struct rblk_io **done, unsigned max);

/* An fd that becomes readable when rblk_queue_reap(.., 0, ..) has work
 * (responses, or a timer due): an epoll fd, the same for the queue's life.
 * Responses already received are buffered: after a reap that returned max,
 * call reap again before waiting on the fd. */
int rblk_queue_fd(struct rblk_queue *q);
/* The transport's own fd (TCP socket, RDMA epoll); -1 while not connected.
 * For tests and tuning only: it changes on every reconnect. */
int rblk_queue_conn_fd(struct rblk_queue *q);

/*
 * spin 1: the caller reaps (timeout 0) in a loop instead of waiting on
 * rblk_queue_fd, and the transport may then skip the wakeup machinery
 * (RDMA: no completion channel syscalls).  spin 0 (the default): the fd
 * wakes again; reap once more after this call before waiting on it, since
 * what arrived while spinning may raise no wakeup.  Kept across reconnects.
 */
void rblk_queue_set_spin(struct rblk_queue *q, int spin);

/* The queue's paths (first one first), up to max; returns the count. */
unsigned rblk_queue_paths(const struct rblk_queue *q, struct rblk_path_status *out,
			  unsigned max);
const char *rblk_path_state_str(enum rblk_path_state s);
/*
 * Moves the queue to path idx (failback): once nothing is left at the
 * current target, the next connection goes to idx (the queue turns
 * CONNECTING and back, as after SHUTTING_DOWN: no command fails).  Nothing
 * happens when idx is the current path.  0 or -EINVAL.
 */
int rblk_queue_prefer_path(struct rblk_queue *q, unsigned idx);
/*
 * Connects to one path, logs in (auth included) and closes: whether the
 * path could serve the volume now.  0 with *uuid the volume's identity,
 * or -errno with a reason (as rblk_queue_open).  For path monitors: it
 * takes nothing at the target (no lock; a LOGIN is logged there).
 */
int rblk_probe(const struct rblk_client_opts *opts, uint8_t uuid[RBLK_UUID_LEN],
	       char *errbuf, size_t errlen);

/* State, time in it, reconnect count: what rblkctl list shows. */
void rblk_queue_status(const struct rblk_queue *q, struct rblk_queue_status *st);
/* "live", "connecting", "failed". */
const char *rblk_queue_state_str(enum rblk_queue_state s);
/* Number of commands submitted (sent or held) and not yet reaped. */
unsigned rblk_queue_inflight(const struct rblk_queue *q);

/*
 * Lists volumes this host may use (DISCOVER).  Volumes with a secret are
 * listed only after proving it: with opts->volume set, the connection
 * first logs in to that volume (answering its challenge with
 * opts->secret_file, checking the target's proof) and then discovers, so
 * that volume is listed too.  Returns count or -errno (login refusals as
 * for rblk_queue_open); entries is an array of max (a count above max
 * fills only max).  When the target says its list is cut (more volumes
 * than one answer holds), the count is returned and errbuf says so.
 */
int rblk_discover(const struct rblk_client_opts *opts,
		  struct rblk_discover_entry *entries, unsigned max,
		  char *errbuf, size_t errlen);

#endif /* RBLK_INITIATOR_CLIENT_RBLK_CLIENT_H */
