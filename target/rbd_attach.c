// SPDX-License-Identifier: MIT
/*
 * rbd backend: reaching an image and letting it go.  A volume's image is
 * its cluster handle, pool and librbd handle, opened and closed within
 * bounds (a cluster that does not answer fails one volume, not the
 * target), plus the update watch that notices a resize made by someone
 * else.  rbd_image.c opens and closes volumes with it; rbd_ha.c reopens
 * a fenced one with a new handle.
 */
#include "rbd_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "log.h"

/* How long closing waits for requests still at the cluster, and for the
 * final flush; a cluster that does not answer is left behind, not waited
 * for (the target must stop within its bound). */
#define CLOSE_WAIT_MS	2000
/* Waits up to timeout_ms for c.  0 when it completed, else -ETIMEDOUT. */
static int wait_comp(rbd_completion_t c, int timeout_ms)
{
	for (int waited = 0; !rbd_aio_is_complete(c); waited += 5) {
		if (waited >= timeout_ms)
			return -ETIMEDOUT;
		usleep(5000);
	}
	return 0;
}

/*
 * Opens name in io within TGT_RBD_OPEN_TIMEOUT_S.  On -ETIMEDOUT librbd
 * still owns the open in progress: its memory is left to it, and the
 * caller must leave io (and its cluster) alone too (*stuck set).
 */
int tgt_rbd_open_image(rados_ioctx_t io, const char *name, bool read_only,
		      rbd_image_t *image, bool *stuck)
{
	struct pending {
		rbd_image_t image;
		rbd_completion_t comp;
	} *po = calloc(1, sizeof(*po));
	int ret;

	*stuck = false;
	if (!po)
		return -ENOMEM;
	ret = rbd_aio_create_completion(NULL, NULL, &po->comp);
	if (ret < 0)
		goto out_free;
	ret = read_only ? rbd_aio_open_read_only(io, name, &po->image, NULL, po->comp)
			: rbd_aio_open(io, name, &po->image, NULL, po->comp);
	if (ret < 0)
		goto out_release;
	if (wait_comp(po->comp, TGT_RBD_OPEN_TIMEOUT_S * 1000)) {
		*stuck = true;
		return -ETIMEDOUT;	/* po stays librbd's */
	}
	ret = rbd_aio_get_return_value(po->comp);
	if (ret == 0)
		*image = po->image;
out_release:
	rbd_aio_release(po->comp);
out_free:
	free(po);
	return ret;
}

static const char *open_hint(int ret)
{
	switch (ret) {
	case -ENOENT:
		return ": it does not exist (rbd create it, or rblkctl volume create NAME --rbd POOL/IMAGE --size S)";
	case -EPERM:
	case -EACCES:
		return ": permission denied (does the client's key have 'profile rbd' on the pool?)";
	case -ETIMEDOUT:
		return ": no answer from the OSDs within 20 s";
	}
	return NULL;
}

/* Closes the image within CLOSE_WAIT_MS (it flushes).  0, or -errno. */
int tgt_rbd_close_image(rbd_image_t image, bool *stuck)
{
	rbd_completion_t c;
	int ret;

	*stuck = false;
	ret = rbd_aio_create_completion(NULL, NULL, &c);
	if (ret < 0)
		return ret;
	ret = rbd_aio_close(image, c);
	if (ret < 0) {
		rbd_aio_release(c);
		return ret;
	}
	if (wait_comp(c, CLOSE_WAIT_MS)) {
		*stuck = true;
		return -ETIMEDOUT;
	}
	ret = rbd_aio_get_return_value(c);
	rbd_aio_release(c);
	return ret;
}

/*
 * An rbd_ha image is one volume served by every target of its set, and
 * they must all grant the same size: a queue that learned a larger one
 * from the target it used refuses a path that grants less, so a failover
 * after `volume resize` on one target would find no path.  A growth of
 * such an image is therefore the set's own, whoever made it (a resize
 * through another target, or rbd resize): the export takes it live and
 * its sessions hear of it at the next tick, as after volume resize here.
 * A shrink is never followed.  True when size was taken.
 */
static bool ha_take_growth(struct rbd_vol *rv, uint64_t size)
{
	uint64_t blocks = size & ~(uint64_t)511;
	uint64_t ours = __atomic_load_n(&rv->expected_size, __ATOMIC_SEQ_CST);

	if (!rv->ha)
		return false;
	do {
		if (blocks <= ours)
			return false;
	} while (!__atomic_compare_exchange_n(&rv->expected_size, &ours, blocks,
					      false, __ATOMIC_SEQ_CST,
					      __ATOMIC_SEQ_CST));
	tgt_export_grow_volume(rv->vol, blocks);
	rblk_info("volume %s: image %s/%s grew to %" PRIu64 " bytes: exporting it all (rbd_ha: the targets of the set grant one size)",
		  rv->name, rv->pool, rv->image_name, size);
	return true;
}

/*
 * librbd's thread, when the image header changed (a resize, a snapshot, a
 * lock).  Only a size that rblk did not set is news.  An rbd_ha image's
 * growth is taken (ha_take_growth).  Else it is logged once per new size
 * and counted for volume show, and the export keeps its size (clients
 * were told it at LOGIN): a grown image is exported in full after a
 * restart; a shrunk one fails I/O past its new end, as a shrunk disk
 * would.
 */
static void watch_cb(void *arg)
{
	struct rbd_vol *rv = arg;
	uint64_t size, prev, ours;

	if (rbd_get_size(rv->image, &size) < 0)
		return;
	prev = __atomic_exchange_n(&rv->image_size, size, __ATOMIC_SEQ_CST);
	ours = __atomic_load_n(&rv->expected_size, __ATOMIC_SEQ_CST);
	if (size == prev || size == ours || ha_take_growth(rv, size))
		return;
	__atomic_add_fetch(&rv->resized_outside, 1, __ATOMIC_SEQ_CST);
	rblk_warn("volume %s: image %s/%s was resized outside rblk, to %" PRIu64
		  " bytes; the volume exports %" PRIu64 " until the target restarts%s",
		  rv->name, rv->pool, rv->image_name, size, ours,
		  size < ours ? " (I/O past the image's new end fails)" : "");
}

/*
 * Reaches rv's image: the cluster handle, the pool, the image opened
 * within TGT_RBD_OPEN_TIMEOUT_S, its size, features and id.  0, or -errno
 * with a message in err (then nothing is held, or, when *stuck, librbd
 * still owns an open in progress and rv must be left to it).
 */
int tgt_rbd_attach(struct rbd_vol *rv, const struct tgt_rbd_cfg *c,
			uint64_t *size, bool *stuck, char *err, size_t errlen)
{
	char why[512];
	int ret;

	*stuck = false;
	ret = tgt_rbd_cluster_get(c, &rv->cl, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "volume %s: %s", rv->name, why);
		return ret;
	}
	ret = tgt_rbd_cluster_pool(rv->cl, c->pool, &rv->io, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "volume %s: %s", rv->name, why);
		goto out_put;
	}
	rv->pool_id = rados_ioctx_get_id(rv->io);
	snprintf(rv->fsid, sizeof(rv->fsid), "%s", tgt_rbd_cluster_fsid(rv->cl));
	snprintf(rv->client, sizeof(rv->client), "%s", tgt_rbd_cluster_client(rv->cl));
	ret = tgt_rbd_open_image(rv->io, c->image, rv->read_only, &rv->image, stuck);
	if (ret) {
		const char *hint = open_hint(ret);

		snprintf(err, errlen, "volume %s: image %s/%s on cluster %s as %s%s%s",
			 rv->name, c->pool, c->image, tgt_rbd_cluster_fsid(rv->cl),
			 tgt_rbd_cluster_client(rv->cl), hint ? "" : ": ",
			 hint ? hint : strerror(-ret));
		if (*stuck)
			return ret;	/* librbd still uses io and the cluster */
		goto out_ioctx;
	}
	if ((ret = rbd_get_size(rv->image, size)) < 0 ||
	    (ret = rbd_get_features(rv->image, &rv->features)) < 0 ||
	    (ret = rbd_get_id(rv->image, rv->image_id, sizeof(rv->image_id))) < 0) {
		snprintf(err, errlen, "volume %s: image %s/%s: %s", rv->name,
			 c->pool, c->image, strerror(-ret));
		goto out_close;
	}
	if (rv->ha && !(rv->features & RBD_FEATURE_EXCLUSIVE_LOCK)) {
		snprintf(err, errlen, "volume %s: rbd_ha needs the image's exclusive-lock feature (rbd feature enable %s/%s exclusive-lock)",
			 rv->name, c->pool, c->image);
		ret = -EINVAL;
		goto out_close;
	}
	/* A read-only open has no watch on the header (a watch is a write). */
	if (!rv->read_only) {
		ret = rbd_update_watch(rv->image, &rv->watch_handle, watch_cb, rv);
		if (ret < 0)
			rblk_warn("volume %s: cannot watch image %s/%s for resizes: %s",
				  rv->name, c->pool, c->image, strerror(-ret));
		rv->watching = ret == 0;
	}
	return 0;

out_close:
	if (tgt_rbd_close_image(rv->image, stuck) && *stuck)
		return ret;
out_ioctx:
	rados_ioctx_destroy(rv->io);
out_put:
	tgt_rbd_cluster_put(rv->cl);
	rv->cl = NULL;
	return ret;
}

/*
 * Lets go of rv's image, its pool and cluster handle, once librbd has
 * none of our requests left (waits up to CLOSE_WAIT_MS for them).  0, or
 * -errno when something had to be left open (logged).
 */
int tgt_rbd_detach(struct rbd_vol *rv)
{
	int64_t left = 0;
	bool stuck;
	int ret;

	if (rv->watching)
		rbd_update_unwatch(rv->image, rv->watch_handle);
	rv->watching = false;
	for (int waited = 0; waited < CLOSE_WAIT_MS; waited += 10) {
		left = __atomic_load_n(rv->in_flight, __ATOMIC_ACQUIRE);
		if (!left)
			break;
		usleep(10000);
	}
	if (left) {
		/* librbd would wait for them in rbd_close; the target may not. */
		rblk_err("volume %s: %" PRId64 " request(s) still at the cluster after %d s: image %s/%s left open",
			 rv->name, left, CLOSE_WAIT_MS / 1000, rv->pool, rv->image_name);
		return -EBUSY;
	}
	ret = tgt_rbd_close_image(rv->image, &stuck);
	/* A fenced handle cannot release its lock or flush: expected. */
	if (ret && !(rv->ha && (ret == -ESHUTDOWN || ret == -EROFS)))
		rblk_err("volume %s: closing image %s/%s (its final flush): %s%s",
			 rv->name, rv->pool, rv->image_name, strerror(-ret),
			 stuck ? ": left open" : "");
	if (stuck)
		return -ETIMEDOUT;
	rados_ioctx_destroy(rv->io);
	tgt_rbd_cluster_put(rv->cl);
	rv->cl = NULL;
	return 0;
}

/*
 * A fenced handle with requests librbd never gives back (a write sent
 * just as the lock was broken waited in librbd for a lock it can no
 * longer get: seen in the VM, a partitioned target with a writer of its
 * own) cannot be closed, and waiting for it kept the target fenced for
 * good.  So the handle is left to those requests, with their counter:
 * their completion, if it ever comes, needs only the request and that
 * counter.  The cluster handle stays open with it; a fence is rare and
 * costs one handle at most.  What keeps those requests from ever landing
 * is the fence's blocklist entry, which rblk makes for a year (rbd_ha.c,
 * FENCE_BLOCKLIST_S): they die with the process, so a restart within
 * that year ends the danger.  Their clients are answered at once
 * (rbd.c, answer_abandoned), so that they go to another path instead of
 * waiting for their io_timeout.  0 or -ENOMEM.
 */
static int abandon_handle(struct rbd_vol *rv)
{
	int64_t *fresh = calloc(1, sizeof(*fresh));
	char addr[128];
	int64_t left;

	if (!fresh)
		return -ENOMEM;
	tgt_rbd_cluster_addr(rv->cl, addr, sizeof(addr));
	left = __atomic_load_n(rv->in_flight, __ATOMIC_ACQUIRE);
	__atomic_store_n(&rv->in_flight, fresh, __ATOMIC_RELEASE);
	rv->image = NULL;
	rv->io = NULL;
	rv->cl = NULL;
	__atomic_add_fetch(&rv->abandoned, 1, __ATOMIC_RELAXED);
	rblk_warn("volume %s: left the fenced handle %s of image %s/%s open to its %" PRId64
		  " request(s) that librbd does not give back (the fence's blocklist entry keeps them from landing); reopening with a new one",
		  rv->name, addr[0] ? addr : "(address unknown)", rv->pool, rv->image_name, left);
	tgt_rbd_answer_abandoned();
	return 0;
}

int tgt_rbd_reattach(struct rbd_vol *rv, char *err, size_t errlen)
{
	uint64_t size;
	bool stuck;
	int ret;

	ret = tgt_rbd_detach(rv);
	if (ret == -EBUSY)
		ret = abandon_handle(rv);
	if (ret) {
		snprintf(err, errlen, "the fenced image could not be closed: %s",
			 strerror(-ret));
		return ret;
	}
	ret = tgt_rbd_attach(rv, &rv->cfg, &size, &stuck, err, errlen);
	if (ret)
		return ret;	/* when stuck, librbd keeps the open in progress */
	/* The image may have grown while this handle was fenced: its watch
	 * had gone with the blocklist. */
	__atomic_store_n(&rv->image_size, size, __ATOMIC_SEQ_CST);
	ha_take_growth(rv, size);
	return 0;
}
