// SPDX-License-Identifier: MIT
/*
 * rbd backend, the control path: a volume's image opened and closed
 * (through rbd_attach.c), its identity, creating one for rblkctl volume
 * create, growing and removing only what rblk created, and volume show.
 * Main, admin and offload threads; the I/O path is rbd.c, takeover and
 * fencing rbd_ha.c.
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

/* How long removing waits for the image's last watcher (our own handle of
 * a volume whose sessions are still closing) to go. */
#define REMOVE_WAIT_MS	10000

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

static void rv_free(struct rbd_vol *rv)
{
	tgt_rbd_cfg_free(&rv->cfg);
	free(rv->in_flight);
	free(rv->pool);
	free(rv->image_name);
	free(rv);
}

int tgt_rbd_open_store(struct tgt_volume *vol, const struct tgt_volume_cfg *cfg,
		       char *err, size_t errlen)
{
	const struct tgt_rbd_cfg *c = &cfg->rbd;
	struct rbd_vol *rv = calloc(1, sizeof(*rv));
	uint64_t size;
	bool stuck;
	int ret;

	if (!rv || !(rv->in_flight = calloc(1, sizeof(*rv->in_flight))) ||
	    !(rv->pool = strdup(c->pool)) ||
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
	ret = tgt_rbd_attach(rv, c, &size, &stuck, err, errlen);
	if (ret) {
		if (!stuck)
			rv_free(rv);
		return ret;
	}
	if (size < 512) {
		snprintf(err, errlen, "volume %s: image %s/%s is %" PRIu64 " bytes, less than one 512-byte block",
			 cfg->name, c->pool, c->image, size);
		if (!tgt_rbd_detach(rv))
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
	if (tgt_rbd_detach(rv))
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
	ret = tgt_rbd_open_image(io, name, true, &image, &stuck);
	if (stuck) {
		snprintf(err, errlen, "image %s/%s: no answer from the OSDs within %d s",
			 pool, name, TGT_RBD_OPEN_TIMEOUT_S);
		return ret;	/* io and cl stay librbd's */
	}
	if (ret == 0) {
		ret = rbd_get_size(image, &have);
		tgt_rbd_close_image(image, &stuck);
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
		__atomic_load_n(rv->in_flight, __ATOMIC_RELAXED)));
	if (rv->ha)
		tgt_rbd_ha_describe(rv, r);
	json_object_object_add(o, "rbd", r);
}
