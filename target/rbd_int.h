/* SPDX-License-Identifier: MIT */
/*
 * The rbd backend's insides, shared by rbd.c (the I/O path on the
 * reactors) and rbd_image.c (opening, creating, growing, watching and
 * closing images on the main and admin threads).
 */
#ifndef RBLK_TARGET_RBD_INT_H
#define RBLK_TARGET_RBD_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rbd/librbd.h>

#include "backend.h"
#include "rbd_cluster.h"

/* How long opening an image may wait for the OSDs. */
#define TGT_RBD_OPEN_TIMEOUT_S	20

/* A request rbd_ha.c holds while a takeover runs (in rbd.c's request). */
struct rbd_ha_wait {
	struct rbd_ha_wait *next;
};
/* rbd.c's: gives a held request back to its reactor (any thread): it is
 * started there when res is 0, else completed with res. */
typedef void (*rbd_ha_release_fn)(struct rbd_ha_wait *w, int res);

/* Where an rbd_ha volume's exclusive lock is (rbd_ha.c). */
enum rbd_lock_state {
	RBD_LOCK_NONE,		/* not ours: reads go, writes take it first */
	RBD_LOCK_TAKING,	/* a takeover runs; writes wait for it */
	RBD_LOCK_OWNED,		/* ours: everything goes */
	RBD_LOCK_FENCED,	/* another target took it and blocklisted
				 * our handle: everything is refused until
				 * the image is reopened with a new one */
};

/* One volume's image: one librbd handle, used by every reactor that
 * serves the volume (a second handle of the same image would fight the
 * first for its exclusive lock on every write). */
struct rbd_vol {
	struct tgt_volume *vol;
	struct tgt_rbd_cfg cfg;		/* a copy: a fenced volume reopens */
	struct tgt_rbd_cluster *cl;
	rados_ioctx_t io;
	rbd_image_t image;
	char     name[RBLK_NAME_MAX];	/* the volume's, for log lines */
	char    *pool, *image_name;
	char     image_id[64];
	int64_t  pool_id;
	char     uuid[40];		/* from fsid, pool id, image id */
	/* The cluster's fsid and "client.ID", kept for volume show: a
	 * reopen (rbd_ha) replaces cl under the admin thread's feet. */
	char     fsid[64], client[80];
	bool     read_only;
	bool     created;		/* the config's rbd_created */
	uint64_t features;
	uint64_t watch_handle;
	bool     watching;
	/* __atomic: the size rblk opened or grew the image to, the size the
	 * update watch last read, and how often it found a size that rblk
	 * did not set. */
	uint64_t expected_size;
	uint64_t image_size;
	uint64_t resized_outside;
	/* __atomic: requests handed to librbd through the current image
	 * handle and not completed by it yet (reactors add, librbd's
	 * callback thread subtracts through the op's own pointer).  A
	 * fenced handle left to requests that never come back keeps its
	 * counter (tgt_rbd_reattach): a new one comes with the new handle. */
	int64_t *in_flight;
	uint64_t abandoned;		/* __atomic: fenced handles left open so */

	/* ---- rbd_ha (rbd_ha.c) ----------------------------------------- */
	bool     ha;
	int      lock_state;		/* __atomic: enum rbd_lock_state */
	pthread_mutex_t ha_mu;		/* waiters, the threads, the handle swap */
	pthread_cond_t  ha_cond;
	struct rbd_ha_wait *waiters;	/* requests held until the lock is ours */
	rbd_ha_release_fn release;	/* how they go back (rbd.c) */
	bool     taking, recovering, stopping;	/* threads running; stop asked */
	bool     checking;		/* the owner watch is at the cluster */
	bool     watch_running;		/* the owner watch thread lives */
	bool     take_checks;		/* the take thread checks a lock we held */
	/* __atomic: vol->login_gen when the lock was last known ours; a
	 * write of a later session checks it at the cluster first. */
	uint32_t checked_gen;
	char     last_owner[128];	/* the holder the last takeover fenced */
	/* __atomic counters, for volume show */
	uint64_t takeovers;		/* locks taken (from a holder or free) */
	uint64_t fenced;		/* times this target was fenced */
	uint64_t refused;		/* requests refused as fenced or stale */
};

struct json_object;

/* ---- rbd_ha.c: takeover and fencing ----------------------------------- */

/*
 * Whether the request io (its wait node w) may go to librbd now: 0 yes;
 * 1 held (a takeover runs first; release gives it back); -ESHUTDOWN
 * refused (fenced, or its session logged in before the last fence).
 * Reactor thread; the request is counted in *rv->in_flight.
 */
int  tgt_rbd_ha_gate(struct rbd_vol *rv, struct rbd_ha_wait *w, struct tgt_io *io,
		     rbd_ha_release_fn release);
/* A request came back with ret: a fenced handle (-ESHUTDOWN, librbd's
 * EBLOCKLISTED, or -EROFS: the lock was broken) fences the volume and
 * reopens it.  Returns the result to report. */
int  tgt_rbd_ha_result(struct rbd_vol *rv, int ret);
void tgt_rbd_ha_init(struct rbd_vol *rv);
/* Stops the takeover and reopen threads (volume closing): true when
 * none runs any more (false: one is stuck at the cluster; rv must stay). */
bool tgt_rbd_ha_stop(struct rbd_vol *rv);
void tgt_rbd_ha_describe(struct rbd_vol *rv, struct json_object *r);

/* ---- rbd.c ----------------------------------------------------------- */

/* A handle was abandoned (its in_flight counter replaced): every reactor
 * answers its requests still at that handle SHUTTING_DOWN, but READs
 * (rbd.c, answer_abandoned).  Any thread. */
void tgt_rbd_answer_abandoned(void);
const char *tgt_rbd_lock_state_str(int state);

/* ---- rbd_image.c: the control path (main, admin, offload threads) ---- */

/* The backend ops of the same names (backend.h). */
int  tgt_rbd_open_store(struct tgt_volume *vol, const struct tgt_volume_cfg *cfg,
			char *err, size_t errlen);
void tgt_rbd_close(struct tgt_volume *vol);
int  tgt_rbd_create_store(const struct tgt_volume_cfg *cfg, uint64_t size,
			  bool *created, char *err, size_t errlen);
int  tgt_rbd_remove_store(const struct tgt_volume_cfg *cfg, char *err,
			  size_t errlen);
int  tgt_rbd_grow_store(struct tgt_volume *vol, uint64_t size, char *err,
			size_t errlen);
void tgt_rbd_describe(struct tgt_volume *vol, struct json_object *o);

/* ---- rbd_attach.c: reaching an image, letting it go -------------------- */

/*
 * Opens name in io within TGT_RBD_OPEN_TIMEOUT_S.  On -ETIMEDOUT librbd
 * still owns the open in progress: its memory is left to it, and the
 * caller must leave io (and its cluster) alone too (*stuck set).
 */
int  tgt_rbd_open_image(rados_ioctx_t io, const char *name, bool read_only,
			rbd_image_t *image, bool *stuck);
/* Closes an image within a bound (it flushes).  0 or -errno; *stuck
 * when librbd still has the close. */
int  tgt_rbd_close_image(rbd_image_t image, bool *stuck);
/*
 * rv's cluster handle, pool and image, with its size, features and id,
 * and the update watch.  0, or -errno with a message in err (then nothing
 * is held, or, when *stuck, librbd still owns an open in progress and rv
 * must be left to it).
 */
int  tgt_rbd_attach(struct rbd_vol *rv, const struct tgt_rbd_cfg *c,
		    uint64_t *size, bool *stuck, char *err, size_t errlen);
/* Lets go of all that once librbd has none of our requests left (waits a
 * bounded time for them).  0, or -errno when something was left open. */
int  tgt_rbd_detach(struct rbd_vol *rv);
/* tgt_rbd_detach, then tgt_rbd_attach with a new cluster handle (the
 * reopen of a fenced rbd_ha volume).  0 or -errno with a message. */
int  tgt_rbd_reattach(struct rbd_vol *rv, char *err, size_t errlen);

#endif /* RBLK_TARGET_RBD_INT_H */
