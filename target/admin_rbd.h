/* SPDX-License-Identifier: MIT */
/* Admin socket helpers for rbd volumes (admin_rbd.c); admin thread. */
#ifndef RBLK_TARGET_ADMIN_RBD_H
#define RBLK_TARGET_ADMIN_RBD_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "config.h"
#include "volume.h"

/* Does this volume.create request name an rbd image ("rbd" field)? */
bool tgt_admin_rbd_requested(json_object *req);

/*
 * volume.create of an rbd volume: fills vc (backend, "rbd": "POOL/IMAGE",
 * optional "ceph_conf", "ceph_client_id", "ceph_keyring") and makes the
 * image when it is missing and size is not 0 (*created set).  An image
 * that exists is exported as it is: a size that differs from it is
 * refused (rblk resizes only images it created), and so is an image that
 * a volume of cfg (the current config) exports already.  0 or -errno +
 * message.
 */
int tgt_admin_rbd_prepare(const struct tgt_config *cfg, json_object *req,
			  struct tgt_volume_cfg *vc, uint64_t size,
			  bool *created, char *err, size_t errlen);

/* A create that failed after tgt_admin_rbd_prepare made the image:
 * removes it again (failures logged). */
void tgt_admin_rbd_undo_create(const struct tgt_volume_cfg *vc);

/*
 * vc was deleted (its volume closed): removes its image if rblk created
 * it ("removed_image" in rsp), else says it was kept ("kept_image"); a
 * failed removal is a "warning" (the volume is gone either way).  Does
 * nothing for a volume that is not rbd.
 */
void tgt_admin_rbd_deleted(const struct tgt_volume_cfg *vc, json_object *rsp);

/* volume.resize of a volume whose backend owns its store.  0 or -errno. */
int tgt_admin_store_grow(struct tgt_volume *vol, uint64_t size, char *err,
			 size_t errlen);

#endif /* RBLK_TARGET_ADMIN_RBD_H */
