// SPDX-License-Identifier: MIT
/*
 * rbd backend, the control path: opening an image for a volume (bounded
 * in time, so an unreachable cluster fails one volume, not the target),
 * creating one for rblkctl volume create, growing and removing only what
 * rblk created, noticing a resize made by someone else (librbd's update
 * watch), and closing.  Main, admin and offload threads; the I/O path is
 * rbd.c.
 */
#include "rbd_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "helpers.h"
#include "log.h"
#include "volume.h"
#include "volume_id.h"

/* How long closing waits for requests still at the cluster, and for the
 * final flush; a cluster that does not answer is left behind, not waited
 * for (the target must stop within its bound). */
#define CLOSE_WAIT_MS	2000
/* How long removing waits for the image's last watcher (our own handle of
 * a volume whose sessions are still closing) to go. */
#define REMOVE_WAIT_MS	10000

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
static int open_image(rados_ioctx_t io, const char *name, bool read_only,
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
static int close_image(rbd_image_t image, bool *stuck)
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

/* The volume's identity: the same image reached through any target (or
 * under another pool or image name) gives the same UUID. */
static void make_uuid(struct tgt_volume *vol, struct rbd_vol *rv)
{
	char key[192];

	snprintf(key, sizeof(key), "%s/%" PRId64 "/%s",
		 tgt_rbd_cluster_fsid(rv->cl), rv->pool_id, rv->image_id);
	tgt_uuid_from_key(vol->uuid, key);
	rblk_uuid_str(vol->uuid, rv->uuid);
}

/*
 * librbd's thread, when the image header changed (a resize, a snapshot, a
 * lock).  Only a size that rblk did not set is news: logged once per new
 * size and counted for volume show.  The export keeps its size (clients
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
	if (size == prev || size == ours)
		return;
	__atomic_add_fetch(&rv->resized_outside, 1, __ATOMIC_SEQ_CST);
	rblk_warn("volume %s: image %s/%s was resized outside rblk, to %" PRIu64
		  " bytes; the volume exports %" PRIu64 " until the target restarts%s",
		  rv->name, rv->pool, rv->image_name, size, ours,
		  size < ours ? " (I/O past the image's new end fails)" : "");
}

static void rv_free(struct rbd_vol *rv)
{
	tgt_rbd_cfg_free(&rv->cfg);
	free(rv->pool);
	free(rv->image_name);
	free(rv);
}

/*
 * Reaches rv's image: the cluster handle, the pool, the image opened
 * within TGT_RBD_OPEN_TIMEOUT_S, its size, features and id.  0, or -errno
 * with a message in err (then nothing is held, or, when *stuck, librbd
 * still owns an open in progress and rv must be left to it).
 */
static int attach_image(struct rbd_vol *rv, const struct tgt_rbd_cfg *c,
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
	ret = open_image(rv->io, c->image, rv->read_only, &rv->image, stuck);
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
	if (close_image(rv->image, stuck) && *stuck)
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
static int detach_image(struct rbd_vol *rv)
{
	int64_t left = 0;
	bool stuck;
	int ret;

	if (rv->watching)
		rbd_update_unwatch(rv->image, rv->watch_handle);
	rv->watching = false;
	for (int waited = 0; waited < CLOSE_WAIT_MS; waited += 10) {
		left = __atomic_load_n(&rv->in_flight, __ATOMIC_ACQUIRE);
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
	ret = close_image(rv->image, &stuck);
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

int tgt_rbd_reattach(struct rbd_vol *rv, char *err, size_t errlen)
{
	uint64_t size;
	bool stuck;
	int ret;

	ret = detach_image(rv);
	if (ret) {
		snprintf(err, errlen, "the fenced image could not be closed: %s",
			 strerror(-ret));
		return ret;
	}
	ret = attach_image(rv, &rv->cfg, &size, &stuck, err, errlen);
	if (ret && stuck)
		return ret;	/* librbd keeps the open in progress */
	return ret;
}

int tgt_rbd_open_store(struct tgt_volume *vol, const struct tgt_volume_cfg *cfg,
		       char *err, size_t errlen)
{
	const struct tgt_rbd_cfg *c = &cfg->rbd;
	struct rbd_vol *rv = calloc(1, sizeof(*rv));
	uint64_t size;
	bool stuck;
	int ret;

	if (!rv || !(rv->pool = strdup(c->pool)) ||
	    !(rv->image_name = strdup(c->image)) || tgt_rbd_cfg_copy(&rv->cfg, c)) {
		if (rv)
			rv_free(rv);
		return -ENOMEM;
	}
	snprintf(rv->name, sizeof(rv->name), "%s", cfg->name);
	rv->read_only = cfg->read_only;
	rv->created = c->created;
	rv->ha = c->ha && !cfg->read_only;
	rv->vol = vol;
	ret = attach_image(rv, c, &size, &stuck, err, errlen);
	if (ret) {
		if (!stuck)
			rv_free(rv);
		return ret;
	}
	if (size < 512) {
		snprintf(err, errlen, "volume %s: image %s/%s is %" PRIu64 " bytes, less than one 512-byte block",
			 cfg->name, c->pool, c->image, size);
		if (!detach_image(rv))
			rv_free(rv);
		return -EINVAL;
	}
	if (size % 512)
		rblk_warn("volume %s: image %s/%s is %" PRIu64 " bytes: exporting the first %" PRIu64 " (whole 512-byte blocks)",
			  cfg->name, c->pool, c->image, size, size & ~(uint64_t)511);
	make_uuid(vol, rv);
	rv->expected_size = size & ~(uint64_t)511;
	rv->image_size = size;
	if (rv->ha)
		tgt_rbd_ha_init(rv);
	vol->size = rv->expected_size;
	vol->block_size = 512;
	vol->flags |= RBLK_VOL_F_DISCARD | RBLK_VOL_F_WRITE_ZEROES;
	vol->be_priv = rv;
	rblk_info("volume %s: rbd image %s/%s (id %s, uuid %s) on cluster %s as %s, %" PRIu64 " bytes%s%s",
		  cfg->name, c->pool, c->image, rv->image_id, rv->uuid,
		  tgt_rbd_cluster_fsid(rv->cl), tgt_rbd_cluster_client(rv->cl),
		  size, rv->read_only ? ", read-only" : "",
		  rv->ha ? ", rbd_ha (takes the lock at its first write)" : "");
	return 0;
}

void tgt_rbd_close(struct tgt_volume *vol)
{
	struct rbd_vol *rv = vol->be_priv;

	if (!rv)
		return;
	if (rv->ha && !tgt_rbd_ha_stop(rv))
		return;
	if (detach_image(rv))
		return;
	rv_free(rv);
	vol->be_priv = NULL;
}

static int admin_pool(const struct tgt_volume_cfg *cfg, struct tgt_rbd_cluster **cl,
		      rados_ioctx_t *io, char *err, size_t errlen)
{
	int ret = tgt_rbd_cluster_get(&cfg->rbd, cl, err, errlen);

	if (ret)
		return ret;
	ret = tgt_rbd_cluster_pool(*cl, cfg->rbd.pool, io, err, errlen);
	if (ret)
		tgt_rbd_cluster_put(*cl);
	return ret;
}

int tgt_rbd_create_store(const struct tgt_volume_cfg *cfg, uint64_t size,
			 bool *created, char *err, size_t errlen)
{
	const char *pool = cfg->rbd.pool, *name = cfg->rbd.image;
	struct tgt_rbd_cluster *cl;
	rbd_image_options_t opts;
	rbd_image_t image;
	rados_ioctx_t io;
	uint64_t have;
	bool stuck;
	int ret;

	*created = false;
	ret = admin_pool(cfg, &cl, &io, err, errlen);
	if (ret)
		return ret;
	/* Read-only: looking must not take the image's lock or watch it. */
	ret = open_image(io, name, true, &image, &stuck);
	if (stuck) {
		snprintf(err, errlen, "image %s/%s: no answer from the OSDs within %d s",
			 pool, name, TGT_RBD_OPEN_TIMEOUT_S);
		return ret;	/* io and cl stay librbd's */
	}
	if (ret == 0) {
		ret = rbd_get_size(image, &have);
		close_image(image, &stuck);
		if (ret == 0 && size && have != size) {
			snprintf(err, errlen, "image %s/%s exists with %" PRIu64 " bytes, not %" PRIu64 ": leave out the size to export it as it is (rblk resizes only images it created)",
				 pool, name, have, size);
			ret = -EEXIST;
		}
		goto out;
	}
	if (ret != -ENOENT) {
		snprintf(err, errlen, "image %s/%s: %s", pool, name, strerror(-ret));
		goto out;
	}
	if (!size) {
		snprintf(err, errlen, "image %s/%s does not exist: give a size to create it",
			 pool, name);
		goto out;
	}
	/* Empty options: the cluster's defaults (rbd_default_features, the
	 * object size) apply, as for rbd create. */
	rbd_image_options_create(&opts);
	ret = rbd_create4(io, name, size, opts);
	rbd_image_options_destroy(opts);
	if (ret < 0)
		snprintf(err, errlen, "creating image %s/%s: %s", pool, name, strerror(-ret));
	else {
		*created = true;
		rblk_info("created rbd image %s/%s, %" PRIu64 " bytes, on cluster %s",
			  pool, name, size, tgt_rbd_cluster_fsid(cl));
	}
out:
	rados_ioctx_destroy(io);
	tgt_rbd_cluster_put(cl);
	return ret;
}

int tgt_rbd_remove_store(const struct tgt_volume_cfg *cfg, char *err,
			 size_t errlen)
{
	const char *pool = cfg->rbd.pool, *name = cfg->rbd.image;
	struct tgt_rbd_cluster *cl;
	rados_ioctx_t io;
	int ret;

	ret = admin_pool(cfg, &cl, &io, err, errlen);
	if (ret)
		return ret;
	/* Busy while a watcher is left: our own handle, until the last
	 * session of a force-deleted volume has closed it. */
	for (int waited = 0;; waited += 100) {
		ret = rbd_remove(io, name);
		if (ret != -EBUSY || waited >= REMOVE_WAIT_MS)
			break;
		usleep(100000);
	}
	if (ret == -ENOENT) {
		rblk_warn("rbd image %s/%s was already gone", pool, name);
		ret = 0;
	} else if (ret == -EBUSY) {
		snprintf(err, errlen, "image %s/%s is still open elsewhere (rbd status shows who): not removed", pool, name);
	} else if (ret == -ENOTEMPTY) {
		snprintf(err, errlen, "image %s/%s has snapshots: not removed", pool, name);
	} else if (ret < 0) {
		snprintf(err, errlen, "removing image %s/%s: %s", pool, name, strerror(-ret));
	} else {
		rblk_info("removed rbd image %s/%s, which rblk had created", pool, name);
	}
	rados_ioctx_destroy(io);
	tgt_rbd_cluster_put(cl);
	return ret;
}

int tgt_rbd_grow_store(struct tgt_volume *vol, uint64_t size, char *err,
		       size_t errlen)
{
	struct rbd_vol *rv = vol->be_priv;
	uint64_t old = __atomic_load_n(&rv->expected_size, __ATOMIC_SEQ_CST);
	int ret;

	if (!rv->created) {
		snprintf(err, errlen, "image %s/%s was not created by rblk: resize it with rbd resize (the volume shows the new size after a restart)",
			 rv->pool, rv->image_name);
		return -EPERM;
	}
	/* Set before the resize: the watch then knows the news is ours. */
	__atomic_store_n(&rv->expected_size, size, __ATOMIC_SEQ_CST);
	ret = rbd_resize(rv->image, size);
	if (ret < 0) {
		__atomic_store_n(&rv->expected_size, old, __ATOMIC_SEQ_CST);
		snprintf(err, errlen, "resizing image %s/%s: %s", rv->pool,
			 rv->image_name, strerror(-ret));
		return ret;
	}
	__atomic_store_n(&rv->image_size, size, __ATOMIC_SEQ_CST);
	return 0;
}

void tgt_rbd_describe(struct tgt_volume *vol, struct json_object *o)
{
	struct rbd_vol *rv = vol->be_priv;
	json_object *r = json_object_new_object();
	char features[64], spec[2 * TGT_RBD_NAME_MAX + 2];

	if (!rv || !r) {
		json_object_put(r);
		return;
	}
	rbd_features_to_string(rv->features, features, &(size_t){ sizeof(features) });
	snprintf(spec, sizeof(spec), "%s/%s", rv->pool, rv->image_name);
	json_object_object_add(o, "type", json_object_new_string("rbd"));
	json_object_object_add(o, "path", json_object_new_string(spec));
	json_object_object_add(r, "pool", json_object_new_string(rv->pool));
	json_object_object_add(r, "image", json_object_new_string(rv->image_name));
	json_object_object_add(r, "image_id", json_object_new_string(rv->image_id));
	json_object_object_add(r, "cluster", json_object_new_string(rv->fsid));
	json_object_object_add(r, "client", json_object_new_string(rv->client));
	json_object_object_add(r, "created_by_rblk", json_object_new_boolean(rv->created));
	json_object_object_add(r, "image_size", json_object_new_int64(
		(int64_t)__atomic_load_n(&rv->image_size, __ATOMIC_SEQ_CST)));
	json_object_object_add(r, "resized_outside", json_object_new_int64(
		(int64_t)__atomic_load_n(&rv->resized_outside, __ATOMIC_SEQ_CST)));
	json_object_object_add(r, "features", json_object_new_string(features));
	json_object_object_add(r, "in_flight", json_object_new_int64(
		__atomic_load_n(&rv->in_flight, __ATOMIC_RELAXED)));
	if (rv->ha)
		tgt_rbd_ha_describe(rv, r);
	json_object_object_add(o, "rbd", r);
}
