// SPDX-License-Identifier: MIT
/*
 * rbd_ha: one RBD image served by several targets, one at a time, with
 * the one that serves writes fencing the one before it (docs/multipath.md).
 *
 * The image's exclusive lock says which target may write.  librbd's
 * default passes the lock to whoever asks, which is what must not happen
 * here: a target cut off from its client but not from the cluster would
 * ask for it back at its next late write.  So the lock is taken with
 * rbd_lock_acquire, which also makes librbd refuse to hand it over, and a
 * target that finds it held breaks it with rbd_lock_break, which
 * blocklists the holder's cluster handle (rbd_blocklist_on_break_lock,
 * forced on in rbd_cluster.c) before the lock goes: from then on the OSDs
 * refuse every request of the old holder, so none of its writes can land
 * after ours.  Each rbd_ha volume has a cluster handle of its own, so a
 * fence stops that volume only.
 *
 * The lock is taken at the first request that is not a READ, not at
 * LOGIN: a client's standby path logs in (and reads) without taking
 * anything.
 * While a takeover runs, writes wait in rv->waiters and go to their
 * reactors again when it ends (tgt_rbd_op_release).
 *
 * A fenced target finds out from librbd (a request fails with
 * EBLOCKLISTED, or EROFS when the lock went without a blocklist).  It then
 * refuses everything with -ESHUTDOWN (the client hears SHUTTING_DOWN and
 * goes to another path), bumps the volume's epoch so that sessions from
 * before the fence can never write again, and reopens the image with a new
 * cluster handle in the background.  Reopened, it serves new sessions as a
 * standby: the next write through it takes the lock back.
 */
#include "rbd_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "log.h"
#include "volume.h"

/* A takeover breaks the holder and tries again this often. */
#define TAKE_TRIES		5
#define TAKE_RETRY_MS		200
/* A reopen that failed is tried again after this. */
#define REOPEN_RETRY_MS		5000
/* How long a closing volume waits for its takeover or reopen. */
#define STOP_WAIT_MS		5000

const char *tgt_rbd_lock_state_str(int state)
{
	switch (state) {
	case RBD_LOCK_NONE:	return "standby";
	case RBD_LOCK_TAKING:	return "taking";
	case RBD_LOCK_OWNED:	return "owned";
	case RBD_LOCK_FENCED:	return "fenced";
	}
	return "?";
}

static int lock_state(struct rbd_vol *rv)
{
	return __atomic_load_n(&rv->lock_state, __ATOMIC_SEQ_CST);
}

static void set_lock_state(struct rbd_vol *rv, int state)
{
	__atomic_store_n(&rv->lock_state, state, __ATOMIC_SEQ_CST);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

void tgt_rbd_ha_init(struct rbd_vol *rv)
{
	pthread_mutex_init(&rv->ha_mu, NULL);
	pthread_cond_init(&rv->ha_cond, NULL);
	set_lock_state(rv, RBD_LOCK_NONE);
}

/* Breaks every holder of the lock (each is blocklisted first).  Returns
 * how many were broken, or -errno. */
static int break_holders(struct rbd_vol *rv)
{
	char *owners[8];
	size_t n = sizeof(owners) / sizeof(owners[0]);
	rbd_lock_mode_t mode;
	int ret, broken = 0;

	ret = rbd_lock_get_owners(rv->image, &mode, owners, &n);
	if (ret == -ENOENT)
		return 0;	/* nobody holds it now */
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < n; i++) {
		ret = rbd_lock_break(rv->image, RBD_LOCK_MODE_EXCLUSIVE, owners[i]);
		if (ret < 0 && ret != -ENOENT) {
			rblk_err("volume %s: cannot break the image's lock held by %s: %s",
				 rv->name, owners[i], strerror(-ret));
			continue;
		}
		broken++;
		pthread_mutex_lock(&rv->ha_mu);
		snprintf(rv->last_owner, sizeof(rv->last_owner), "%s", owners[i]);
		pthread_mutex_unlock(&rv->ha_mu);
		rblk_warn("volume %s: took over image %s/%s: fenced its holder %s (blocklisted; its writes are refused from now on)",
			  rv->name, rv->pool, rv->image_name, owners[i]);
	}
	rbd_lock_get_owners_cleanup(owners, n);
	return broken;
}

/*
 * Takes the image's lock for good.  Whoever holds it is fenced first,
 * alive or not: a holder that is cut off from its client still answers
 * the cluster (librbd would wait for it to hand the lock over, forever),
 * and a dead one keeps its watch until the OSDs time it out (30 s).  0 or
 * -errno.
 */
static int take_lock(struct rbd_vol *rv)
{
	int ret = 0, owner = 0;

	for (int i = 0; i < TAKE_TRIES; i++) {
		if (rbd_is_exclusive_lock_owner(rv->image, &owner) == 0 && owner)
			return rbd_lock_acquire(rv->image, RBD_LOCK_MODE_EXCLUSIVE);
		ret = break_holders(rv);
		if (ret < 0)
			rblk_warn("volume %s: listing the image's lock holders: %s",
				  rv->name, strerror(-ret));
		ret = rbd_lock_acquire(rv->image, RBD_LOCK_MODE_EXCLUSIVE);
		if (!ret)
			return 0;
		if (__atomic_load_n(&rv->stopping, __ATOMIC_ACQUIRE))
			return ret;
		sleep_ms(TAKE_RETRY_MS);
	}
	return ret;
}

/* The takeover thread: takes the lock, then lets the held writes go. */
static void *take_main(void *arg)
{
	struct rbd_vol *rv = arg;
	struct rbd_op *list, *fifo = NULL, *op;
	int ret = take_lock(rv);

	pthread_mutex_lock(&rv->ha_mu);
	list = rv->waiters;
	rv->waiters = NULL;
	if (!ret) {
		set_lock_state(rv, RBD_LOCK_OWNED);
		__atomic_add_fetch(&rv->takeovers, 1, __ATOMIC_RELAXED);
	} else if (lock_state(rv) == RBD_LOCK_TAKING) {
		/* A later write tries again. */
		set_lock_state(rv, RBD_LOCK_NONE);
	}
	rv->taking = false;
	pthread_cond_broadcast(&rv->ha_cond);
	pthread_mutex_unlock(&rv->ha_mu);
	if (ret)
		rblk_err("volume %s: cannot take the lock of image %s/%s: %s; writes here are refused until it can",
			 rv->name, rv->pool, rv->image_name, strerror(-ret));
	else
		rblk_info("volume %s: this target holds the lock of image %s/%s",
			  rv->name, rv->pool, rv->image_name);
	while (list) {			/* held newest first: oldest goes first */
		op = list;
		list = *tgt_rbd_op_next(op);
		*tgt_rbd_op_next(op) = fifo;
		fifo = op;
	}
	while ((op = fifo)) {
		fifo = *tgt_rbd_op_next(op);
		tgt_rbd_op_release(op, ret ? -ESHUTDOWN : 0);
	}
	return NULL;
}

/* What makes this target the writer.  FLUSH too: librbd would otherwise
 * ask the holder for the lock itself (and wait for a dead one). */
static bool takes_lock(const struct tgt_io *io)
{
	return io->op != TGT_IO_READ;
}

static int refuse(struct rbd_vol *rv)
{
	__atomic_add_fetch(&rv->refused, 1, __ATOMIC_RELAXED);
	return -ESHUTDOWN;
}

int tgt_rbd_ha_gate(struct rbd_vol *rv, struct rbd_op *op, struct tgt_io *io)
{
	pthread_t thr;
	int st;

	/* A session from before the last fence belongs to the old owner. */
	if (io->epoch != __atomic_load_n(&rv->vol->epoch, __ATOMIC_SEQ_CST))
		return refuse(rv);
	st = lock_state(rv);
	if (st == RBD_LOCK_FENCED)
		return refuse(rv);
	if (st == RBD_LOCK_OWNED || !takes_lock(io))
		return 0;
	pthread_mutex_lock(&rv->ha_mu);
	st = lock_state(rv);
	if (st == RBD_LOCK_OWNED) {
		pthread_mutex_unlock(&rv->ha_mu);
		return 0;
	}
	if (st == RBD_LOCK_FENCED || rv->stopping) {
		pthread_mutex_unlock(&rv->ha_mu);
		return refuse(rv);
	}
	if (st == RBD_LOCK_NONE) {
		if (pthread_create(&thr, NULL, take_main, rv)) {
			pthread_mutex_unlock(&rv->ha_mu);
			return -ENOMEM;
		}
		pthread_detach(thr);
		rv->taking = true;
		set_lock_state(rv, RBD_LOCK_TAKING);
		rblk_info("volume %s: first write here: taking the lock of image %s/%s",
			  rv->name, rv->pool, rv->image_name);
	}
	*tgt_rbd_op_next(op) = rv->waiters;
	rv->waiters = op;
	pthread_mutex_unlock(&rv->ha_mu);
	return 1;
}

/* The reopen thread: a new cluster handle and image, then standby. */
static void *recover_main(void *arg)
{
	struct rbd_vol *rv = arg;
	char err[512];
	int ret;

	for (;;) {
		if (__atomic_load_n(&rv->stopping, __ATOMIC_ACQUIRE))
			break;
		ret = tgt_rbd_reattach(rv, err, sizeof(err));
		if (!ret) {
			set_lock_state(rv, RBD_LOCK_NONE);
			rblk_info("volume %s: reopened image %s/%s with a new cluster handle: serving as a standby (a write here takes the lock back)",
				  rv->name, rv->pool, rv->image_name);
			break;
		}
		rblk_err("volume %s: reopening the fenced image: %s; trying again in %d s",
			 rv->name, err, REOPEN_RETRY_MS / 1000);
		if (ret == -ETIMEDOUT) {
			/* librbd still owns a close or open: nothing more. */
			rblk_err("volume %s: stays fenced until the target restarts", rv->name);
			break;
		}
		sleep_ms(REOPEN_RETRY_MS);
	}
	pthread_mutex_lock(&rv->ha_mu);
	rv->recovering = false;
	pthread_cond_broadcast(&rv->ha_cond);
	pthread_mutex_unlock(&rv->ha_mu);
	return NULL;
}

int tgt_rbd_ha_result(struct rbd_vol *rv, int ret)
{
	pthread_t thr;

	/* EBLOCKLISTED always means fenced; EROFS only once the lock was
	 * ours (it went without a blocklist). */
	if (ret != -ESHUTDOWN && (ret != -EROFS || lock_state(rv) != RBD_LOCK_OWNED))
		return ret;
	__atomic_add_fetch(&rv->refused, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&rv->ha_mu);
	if (lock_state(rv) == RBD_LOCK_FENCED || rv->stopping) {
		pthread_mutex_unlock(&rv->ha_mu);
		return -ESHUTDOWN;
	}
	/* From here every request is refused, and no session of before may
	 * ever write again (tgt_rbd_ha_gate). */
	set_lock_state(rv, RBD_LOCK_FENCED);
	__atomic_add_fetch(&rv->vol->epoch, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&rv->fenced, 1, __ATOMIC_RELAXED);
	rblk_warn("volume %s: fenced: another target took over image %s/%s (the cluster refused a request: %s); refusing I/O here, reopening as a standby",
		  rv->name, rv->pool, rv->image_name, strerror(-ret));
	if (!rv->recovering && !pthread_create(&thr, NULL, recover_main, rv)) {
		pthread_detach(thr);
		rv->recovering = true;
	}
	pthread_mutex_unlock(&rv->ha_mu);
	return -ESHUTDOWN;
}

bool tgt_rbd_ha_stop(struct rbd_vol *rv)
{
	struct timespec until;
	bool stopped;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STOP_WAIT_MS / 1000;
	pthread_mutex_lock(&rv->ha_mu);
	__atomic_store_n(&rv->stopping, true, __ATOMIC_RELEASE);
	while ((rv->taking || rv->recovering) &&
	       !pthread_cond_timedwait(&rv->ha_cond, &rv->ha_mu, &until))
		;
	stopped = !rv->taking && !rv->recovering;
	pthread_mutex_unlock(&rv->ha_mu);
	if (!stopped)
		rblk_warn("volume %s: a takeover or reopen is still at the cluster at close: image left open",
			  rv->name);
	return stopped;
}

void tgt_rbd_ha_describe(struct rbd_vol *rv, struct json_object *r)
{
	json_object *h = json_object_new_object();

	if (!h)
		return;
	pthread_mutex_lock(&rv->ha_mu);
	json_object_object_add(h, "lock", json_object_new_string(
		tgt_rbd_lock_state_str(lock_state(rv))));
	json_object_object_add(h, "takeovers", json_object_new_int64(
		(int64_t)__atomic_load_n(&rv->takeovers, __ATOMIC_RELAXED)));
	json_object_object_add(h, "fenced", json_object_new_int64(
		(int64_t)__atomic_load_n(&rv->fenced, __ATOMIC_RELAXED)));
	json_object_object_add(h, "refused", json_object_new_int64(
		(int64_t)__atomic_load_n(&rv->refused, __ATOMIC_RELAXED)));
	json_object_object_add(h, "last_fenced_holder",
			       json_object_new_string(rv->last_owner));
	pthread_mutex_unlock(&rv->ha_mu);
	json_object_object_add(r, "ha", h);
}
