// SPDX-License-Identifier: MIT
/*
 * The admin socket's part for volumes whose backend reaches its own store
 * (backend rbd): naming the image in volume.create, making it when it is
 * missing, and removing only an image rblk made.  Through the backend's
 * ops, so this builds without librbd (the backend is then unknown and
 * these say why).
 */
#include "admin_rbd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "helpers.h"
#include "log.h"

static int opt_str(json_object *req, const char *key, const char **out,
		   char *err, size_t errlen)
{
	json_object *j;

	*out = NULL;
	if (!json_object_object_get_ex(req, key, &j) || json_object_is_type(j, json_type_null))
		return 0;
	if (!json_object_is_type(j, json_type_string) ||
	    strlen(json_object_get_string(j)) != (size_t)json_object_get_string_len(j)) {
		snprintf(err, errlen, "field \"%s\" must be a string", key);
		return -EINVAL;
	}
	*out = json_object_get_string(j);
	return 0;
}

bool tgt_admin_rbd_requested(json_object *req)
{
	return json_object_object_get_ex(req, "rbd", NULL);
}

/* The volume of cfg whose store is the image c names, or NULL.  Two
 * volumes on one image would fight over its lock and each other's data.
 * (Two confs naming one cluster are not seen: Ceph's fsid is only known
 * once connected, and the lock still keeps one writer at a time.) */
static const struct tgt_volume_cfg *image_user(const struct tgt_config *cfg,
					       const struct tgt_rbd_cfg *c)
{
	for (unsigned i = 0; i < cfg->n_vols; i++) {
		const struct tgt_rbd_cfg *o = &cfg->vols[i].rbd;

		if (o->pool && !strcmp(o->pool, c->pool) && !strcmp(o->image, c->image) &&
		    !strcmp(tgt_rbd_cfg_conf(o), tgt_rbd_cfg_conf(c)))
			return &cfg->vols[i];
	}
	return NULL;
}

int tgt_admin_rbd_prepare(const struct tgt_config *cfg, json_object *req,
			  struct tgt_volume_cfg *vc, uint64_t size,
			  bool *created, char *err, size_t errlen)
{
	const struct tgt_volume_cfg *user;
	static const char *const keys[] = { "ceph_conf", "ceph_client_id", "ceph_keyring" };
	const struct tgt_backend_ops *be = tgt_backend_find("rbd");
	const char *spec, *val, *backend;
	char why[384];
	int ret;

	*created = false;
	if ((ret = opt_str(req, "rbd", &spec, err, errlen)) ||
	    (ret = opt_str(req, "backend", &backend, err, errlen)))
		return ret;
	if (!be) {
		snprintf(err, errlen, "%s", tgt_backend_not_built("rbd"));
		return -EOPNOTSUPP;
	}
	if (!spec) {
		snprintf(err, errlen, "field \"rbd\" must be \"POOL/IMAGE\"");
		return -EINVAL;
	}
	if (backend && strcmp(backend, "rbd")) {
		snprintf(err, errlen, "an rbd volume has backend rbd, not '%.32s'", backend);
		return -EINVAL;
	}
	if (json_object_object_get_ex(req, "path", NULL) ||
	    json_object_object_get_ex(req, "device", NULL)) {
		snprintf(err, errlen, "give either an rbd image or a path or device, not both");
		return -EINVAL;
	}
	snprintf(vc->backend, sizeof(vc->backend), "rbd");
	ret = tgt_rbd_cfg_set_spec(&vc->rbd, spec, why, sizeof(why));
	for (unsigned i = 0; !ret && i < ARRAY_SIZE(keys); i++) {
		if ((ret = opt_str(req, keys[i], &val, err, errlen)))
			return ret;
		if (val)
			ret = tgt_rbd_cfg_set(&vc->rbd, keys[i], val, why, sizeof(why));
	}
	if (ret) {
		snprintf(err, errlen, "%s", ret == -ENOMEM ? "out of memory" : why);
		return ret;
	}
	user = image_user(cfg, &vc->rbd);
	if (user) {
		snprintf(err, errlen, "image %s/%s is already the store of volume '%s'",
			 vc->rbd.pool, vc->rbd.image, user->name);
		return -EEXIST;
	}
	if (vc->read_only && size) {
		snprintf(err, errlen, "a read-only volume exports an existing image: leave out the size");
		return -EINVAL;
	}
	ret = be->create_store(vc, size, created, err, errlen);
	if (ret)
		return ret;
	/* The image's size is the volume's: the config keeps no size. */
	vc->size = 0;
	vc->rbd.created = *created;
	return 0;
}

void tgt_admin_rbd_undo_create(const struct tgt_volume_cfg *vc)
{
	const struct tgt_backend_ops *be = tgt_backend_find(vc->backend);
	char err[384];

	if (be && be->remove_store && be->remove_store(vc, err, sizeof(err)))
		rblk_err("admin: volume %s: removing the image this create made: %s",
			 vc->name, err);
}

void tgt_admin_rbd_deleted(const struct tgt_volume_cfg *vc, json_object *rsp)
{
	const struct tgt_backend_ops *be;
	char err[384], spec[2 * TGT_RBD_NAME_MAX + 2];

	if (!vc || !vc->rbd.pool)
		return;
	snprintf(spec, sizeof(spec), "%s/%s", vc->rbd.pool, vc->rbd.image);
	if (!vc->rbd.created) {
		json_object_object_add(rsp, "kept_image", json_object_new_string(spec));
		return;
	}
	be = tgt_backend_find(vc->backend);
	if (!be || !be->remove_store) {
		json_object_object_add(rsp, "warning", json_object_new_string(
			"the rbd backend is not built in: the image rblk created was not removed"));
		return;
	}
	if (be->remove_store(vc, err, sizeof(err))) {
		rblk_warn("admin: volume %s deleted, but its image was not removed: %s",
			  vc->name, err);
		json_object_object_add(rsp, "warning", json_object_new_string(err));
		return;
	}
	json_object_object_add(rsp, "removed_image", json_object_new_string(spec));
}

int tgt_admin_store_grow(struct tgt_volume *vol, uint64_t size, char *err,
			 size_t errlen)
{
	if (!vol->be->grow_store) {
		snprintf(err, errlen, "backend %s cannot grow its store", vol->be->name);
		return -EOPNOTSUPP;
	}
	return vol->be->grow_store(vol, size, err, errlen);
}
