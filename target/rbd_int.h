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
	/* __atomic: requests handed to librbd and not completed by it yet
	 * (reactors add, librbd's callback thread subtracts). */
	int64_t  in_flight;

	/* ---- rbd_ha (rbd_ha.c) ----------------------------------------- */
	bool     ha;
	int      lock_state;		/* __atomic: enum rbd_lock_state */
	pthread_mutex_t ha_mu;		/* waiters, the threads, the handle swap */
	pthread_cond_t  ha_cond;
	struct rbd_op  *waiters;	/* writes held until the lock is ours */
	bool     taking, recovering, stopping;	/* threads running; stop asked */
	pthread_t take_thr, recover_thr;
	char     last_owner[128];	/* the holder the last takeover fenced */
	/* __atomic counters, for volume show */
	uint64_t takeovers;		/* locks taken (from a holder or free) */
	uint64_t fenced;		/* times this target was fenced */
	uint64_t refused;		/* requests refused as fenced or stale */
};

/* ---- rbd.c: the I/O path -------------------------------------------- */

struct rbd_op;
struct json_object;

/* A request held by rbd_ha.c goes back to its reactor (any thread):
 * started there when res is 0, else completed with res. */
void tgt_rbd_op_release(struct rbd_op *op, int res);
/* The request after op in a held list (rbd_ha.c links them). */
struct rbd_op **tgt_rbd_op_next(struct rbd_op *op);

/* ---- rbd_ha.c: takeover and fencing ----------------------------------- */

/*
 * Whether op may go to librbd now: 0 yes; 1 held (a takeover runs first;
 * tgt_rbd_op_release gives it back); -ESHUTDOWN refused (fenced, or its
 * session logged in before the last fence).  Reactor thread; op->io is
 * set and op counted in rv->in_flight.
 */
int  tgt_rbd_ha_gate(struct rbd_vol *rv, struct rbd_op *op, struct tgt_io *io);
/* A request came back with ret: a fenced handle (-ESHUTDOWN, librbd's
 * EBLOCKLISTED, or -EROFS: the lock was broken) fences the volume and
 * reopens it.  Returns the result to report. */
int  tgt_rbd_ha_result(struct rbd_vol *rv, int ret);
void tgt_rbd_ha_init(struct rbd_vol *rv);
/* Stops the takeover and reopen threads (volume closing): true when
 * none runs any more (false: one is stuck at the cluster; rv must stay). */
bool tgt_rbd_ha_stop(struct rbd_vol *rv);
void tgt_rbd_ha_describe(struct rbd_vol *rv, struct json_object *r);
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
/* Closes rv's fenced image and handle and opens them again with a new
 * handle (rbd_ha.c's reopen thread).  0 or -errno with a message. */
int  tgt_rbd_reattach(struct rbd_vol *rv, char *err, size_t errlen);

#endif /* RBLK_TARGET_RBD_INT_H */
