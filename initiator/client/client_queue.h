/* SPDX-License-Identifier: MIT */
/*
 * The client queue's insides, shared by the two files that own it:
 * client.c (connect + LOGIN, tags, submit, completions, reap) and
 * reconnect.c (the LIVE -> CONNECTING -> LIVE | FAILED state machine, the
 * queue's one timer, keep-alive, I/O timeouts).  Not for library users.
 */
#ifndef RBLK_INITIATOR_CLIENT_CLIENT_QUEUE_H
#define RBLK_INITIATOR_CLIENT_CLIENT_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "client_transport.h"
#include "rblk_client.h"

/* Where a taken tag's I/O is. */
enum tag_state {
	TAG_FREE,
	TAG_SENT,		/* on the current connection, awaiting its RSP */
	TAG_HELD,		/* waiting for a connection to be sent (again) */
	TAG_DONE,		/* in the done ring, not yet reaped */
};

struct user_buf {
	void  *buf;
	size_t len;
};

struct rblk_queue {
	const struct rblk_client_transport_ops *ops;
	struct rblk_client_conn *conn;	/* NULL while not connected */
	struct rblk_client_opts opts;	/* strings point into owned copies */
	char *strs[4];			/* the copies, freed with the queue */
	char host[RBLK_NAME_MAX];	/* name sent in LOGIN */
	struct rblk_volume_info info;
	unsigned depth;			/* granted at open; never changes */
	int err;			/* -errno that made the queue FAILED */

	/* tag -> I/O, NULL when the tag is free.  A tag stays taken from
	 * submit until the I/O is reaped, so taken <= depth and the done ring
	 * can never overflow. */
	struct rblk_io **slot;
	uint8_t *tstate;		/* enum tag_state */
	uint64_t *seq;			/* submission order, for reissue */
	int64_t *deadline;		/* TAG_SENT: io_timeout expiry (ms) */
	uint64_t next_seq;
	unsigned nsent, nheld;
	uint32_t *free_tags;		/* stack of free tags */
	unsigned nfree;
	struct rblk_io **done;		/* FIFO ring of completed, unreaped I/Os */
	unsigned done_head, done_count;

	struct user_buf *ubufs;		/* registered again on each connection */
	unsigned n_ubufs;

	/* ---- paths.c: where connections go ---------------------------- */
	struct rblk_qpath {
		char *transport, *host, *port;	/* owned; port NULL = default */
		enum rblk_path_state state;
		int64_t since;
		unsigned failures;
		char why[160];
	} paths[RBLK_MAX_PATHS];
	unsigned npaths;
	unsigned cur;			/* the path connections go to */
	unsigned tried;			/* attempts in this round of the paths */
	int want_path;			/* rblk_queue_prefer_path, or -1 */
	uint8_t uuid[RBLK_UUID_LEN];	/* the volume's, once known */
	bool have_uuid;

	/* ---- reconnect.c --------------------------------------------- */
	enum rblk_queue_state state;
	/* resolved options, ms: < 0 off / forever, 0 at once */
	int ka_ms, io_ms, delay_ms, loss_ms, fail_ms;
	int epfd;			/* rblk_queue_fd(): timerfd + transport fd */
	int tfd;			/* the queue's one timer */
	int conn_fd;			/* transport fd in epfd, -1 if none */
	int64_t timer_at;		/* armed expiry, INT64_MAX when idle */
	int64_t since;			/* entered the current state */
	int64_t last_rx;		/* last PDU from the target */
	int64_t ka_sent;
	uint64_t ka_seq;
	int ka_out;			/* a KEEPALIVE awaits its answer */
	int draining;			/* target said SHUTTING_DOWN */
	int stop_seen;			/* core saw SHUTTING_DOWN; reconnect.c acts */
	int64_t fast_until;		/* fast retry schedule ends */
	int64_t next_attempt;
	unsigned attempt;		/* in this CONNECTING period */
	unsigned reconnects;
	int io_failing;			/* fast_io_fail_tmo has passed */
	int spin;			/* rblk_queue_set_spin, kept across reconnects */
	int last_err;
	char why[160];			/* last reason the connection went */
	int refused;			/* RBLK_S_* of the last LOGIN refusal, or 0 */
	int64_t stop_at;		/* when opts.stop first said stop, or 0 */
};

/* ---- client.c ---------------------------------------------------------- */

/*
 * Connects, logs in (auth included) and starts a connection for q within
 * timeout_ms, registers q->ubufs on it and makes it q->conn.  The first
 * call (q->depth == 0) also takes the geometry; later ones check that the
 * volume still fits it.  0 or -errno with a reason in errbuf; q->refused
 * is the target's refusal status when LOGIN was refused, else 0.
 */
int rblk_client_connect(struct rblk_queue *q, int timeout_ms, char *errbuf,
			size_t errlen);
/* Sends a taken tag on q->conn (TAG_SENT).  0; -EINVAL when nothing was
 * sent (the tag is HELD again); another -errno when the stream is lost
 * (the tag stays SENT).  Never calls up: the caller handles the loss. */
int rblk_client_send(struct rblk_queue *q, uint32_t tag);
/* Pushes batched commands out (ops->flush): 0 or the -errno that lost
 * the stream. */
int rblk_client_flush(struct rblk_queue *q);
/* A new queue from opts: checked, hostname picked, options copied; not
 * connected.  0 or -errno with the reason in errbuf. */
int rblk_client_queue_new(const struct rblk_client_opts *opts,
			  struct rblk_queue **qp, char *errbuf, size_t errlen);
/* How long the first connect may take (opts.timeout_ms or the default). */
int rblk_client_open_timeout_ms(const struct rblk_queue *q);
void rblk_client_free_queue(struct rblk_queue *q);
/* Whether io fits the volume and a registered buffer (RDMA). */
int rblk_client_io_valid(const struct rblk_queue *q, const struct rblk_io *io);
/* Completed I/Os to the caller (up to max), or q->err once FAILED and
 * nothing is left. */
int rblk_client_hand_back(struct rblk_queue *q, struct rblk_io **done, unsigned max);
/* Completes one sent or held tag with status (to the done ring). */
void rblk_client_finish(struct rblk_queue *q, uint32_t tag, int status);
/* Completes every tag in state `which` (TAG_SENT or TAG_HELD) with status. */
void rblk_client_fail_tags(struct rblk_queue *q, enum tag_state which, int status);

/* ---- paths.c ----------------------------------------------------------- */

/* Copies opts' paths (the first from host/port/transport) into q.  0 or
 * -errno with a reason. */
int rblk_paths_init(struct rblk_queue *q, const struct rblk_client_opts *opts,
		    char *errbuf, size_t errlen);
void rblk_paths_free(struct rblk_queue *q);
/* The path's state changed (its why: the reason, for FAILED). */
void rblk_path_set(struct rblk_queue *q, unsigned idx, enum rblk_path_state s,
		   const char *why);
/* Moves q->cur on to the next path that may reach the volume (skipping
 * OTHER_VOLUME ones); false when there is none but the current one. */
bool rblk_paths_next(struct rblk_queue *q);
/* The paths not known to reach another volume (0: every one does). */
unsigned rblk_paths_usable(const struct rblk_queue *q);

/* ---- reconnect.c ------------------------------------------------------- */

/* Options -> q's timers; creates the timer and the epoll fd.  0 / -errno. */
int rblk_rc_init(struct rblk_queue *q);
void rblk_rc_destroy(struct rblk_queue *q);
/* q->conn just came up (open or reconnect): LIVE, watch its fd. */
void rblk_rc_live(struct rblk_queue *q);
/* Closes q->conn (if any) and removes it from the epoll fd. */
void rblk_rc_close_conn(struct rblk_queue *q);
/* The connection is gone (err, why): LIVE -> CONNECTING, sent commands are
 * held; or FAILED when reconnecting is off. */
void rblk_rc_lost(struct rblk_queue *q, int err, const char *why);
/* Gives up: FAILED, every held and sent command fails. */
void rblk_rc_fail(struct rblk_queue *q, int err, const char *why);
/* Whether a new command may go out now (LIVE, target not stopping). */
bool rblk_rc_can_send(struct rblk_queue *q);
/* Sends a taken tag with its deadline; a lost stream starts the
 * reconnect.  0, or -EINVAL when nothing was sent. */
int rblk_rc_send(struct rblk_queue *q, uint32_t tag);
/* rblk_client_flush; a lost stream starts the reconnect. */
void rblk_rc_flush(struct rblk_queue *q);
/*
 * One step of progress: waits up to wait_ms (0: not at all, -1: until
 * something happens) for responses or the queue's timer, then runs what
 * is due (keep-alive, I/O timeouts, reconnect attempts, fail timeouts).
 */
void rblk_rc_step(struct rblk_queue *q, int wait_ms);
/* What a LIVE connection's poll (or peek) returned (a count or -errno):
 * a lost connection starts reconnecting, a lying target fails the queue. */
void rblk_rc_polled(struct rblk_queue *q, int ret);

#endif /* RBLK_INITIATOR_CLIENT_CLIENT_QUEUE_H */
