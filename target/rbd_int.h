/* SPDX-License-Identifier: MIT */
/*
 * The rbd backend's insides, shared by rbd.c (the I/O path on the
 * reactors) and rbd_image.c (opening, creating, growing, watching and
 * closing images on the main and admin threads).
 */
#ifndef RBLK_TARGET_RBD_INT_H
#define RBLK_TARGET_RBD_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <rbd/librbd.h>

#include "backend.h"
#include "rbd_cluster.h"

/* How long opening an image may wait for the OSDs. */
#define TGT_RBD_OPEN_TIMEOUT_S	20

/* One volume's image: one librbd handle, used by every reactor that
 * serves the volume (a second handle of the same image would fight the
 * first for its exclusive lock on every write). */
struct rbd_vol {
	struct tgt_rbd_cluster *cl;
	rados_ioctx_t io;
	rbd_image_t image;
	char     name[RBLK_NAME_MAX];	/* the volume's, for log lines */
	char    *pool, *image_name;
	char     image_id[64];
	int64_t  pool_id;
	char     uuid[40];		/* from fsid, pool id, image id */
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
};

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

#endif /* RBLK_TARGET_RBD_INT_H */
