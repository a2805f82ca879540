/* SPDX-License-Identifier: MIT */
/*
 * The Ceph RBD part of a volume's config: which image, on which cluster,
 * as which client, and whether rblk created the image.  Pure text <-> struct
 * (no librbd here), so configs parse and print the same whether or not the
 * rbd backend was built.
 *
 *   rbd_pool = rbd             pool of the image (required for backend rbd)
 *   rbd_image = vol1           image name (required)
 *   ceph_conf = /etc/ceph/ceph.conf      the cluster's conf (Ceph's default)
 *   ceph_client_id = admin     cephx user without "client." (Ceph's default)
 *   ceph_keyring = /etc/ceph/ceph.client.rblk.keyring   (default: the conf's
 *                              keyring setting, else Ceph's search path)
 *   rbd_created = yes          written by rblkctl volume create when it made
 *                              the image: only then may resize and delete
 *                              touch it
 *   rbd_ha = yes               the image is served by several targets, one
 *                              at a time: this target takes its exclusive
 *                              lock at its first write, fencing the holder
 *                              (docs/multipath.md)
 */
#ifndef RBLK_TARGET_RBD_CFG_H
#define RBLK_TARGET_RBD_CFG_H

#include <stdbool.h>
#include <stddef.h>

#define TGT_RBD_DEFAULT_CONF	"/etc/ceph/ceph.conf"
#define TGT_RBD_DEFAULT_CLIENT	"admin"
/* librbd's RBD_MAX_IMAGE_NAME_SIZE (96) less its NUL; pools alike. */
#define TGT_RBD_NAME_MAX	95

struct tgt_rbd_cfg {
	char *pool;			/* malloc'd; NULL: not an rbd volume */
	char *image;			/* malloc'd */
	char *conf;			/* malloc'd; NULL = TGT_RBD_DEFAULT_CONF */
	char *client_id;		/* malloc'd; NULL = TGT_RBD_DEFAULT_CLIENT */
	char *keyring;			/* malloc'd; NULL = librados decides */
	bool  created;			/* rblk created the image */
	bool  ha;			/* rbd_ha: fence the lock holder, take over */
	unsigned seen;			/* parser: keys given so far */
};

/* Is key one of ours ("rbd_pool", "ceph_conf", ...)? */
bool tgt_rbd_cfg_is_key(const char *key);

/*
 * Takes "key = value" into c.  0, -EINVAL with a reason in why (without
 * the volume or line, which the caller adds), or -ENOMEM.
 */
int tgt_rbd_cfg_set(struct tgt_rbd_cfg *c, const char *key, const char *value,
		    char *why, size_t whylen);

/*
 * At the end of a [volume] section: an rbd volume (is_rbd) must name a
 * pool and an image; any other volume must have no rbd or ceph key.
 * 0 or -EINVAL with a reason in why.
 */
int tgt_rbd_cfg_check(const struct tgt_rbd_cfg *c, bool is_rbd, char *why,
		      size_t whylen);

/* Config lines for c ("rbd_pool = ...\n"...) into buf; returns the length
 * it needs (like snprintf).  Nothing for a non-rbd c. */
size_t tgt_rbd_cfg_format(const struct tgt_rbd_cfg *c, char *buf, size_t len);

/* dst = a deep copy of src (dst's old contents are not freed).  0 or
 * -ENOMEM (dst then holds nothing). */
int tgt_rbd_cfg_copy(struct tgt_rbd_cfg *dst, const struct tgt_rbd_cfg *src);

/* What a start can tell of an rbd volume without the cluster: its
 * ceph.conf and keyring can be read.  0 or -errno with a reason. */
int tgt_rbd_cfg_check_files(const struct tgt_rbd_cfg *c, char *why, size_t whylen);

/* Whether a and b open the same image the same way (cluster, client,
 * keyring, pool, image); whether rblk created it does not count. */
bool tgt_rbd_cfg_same_image(const struct tgt_rbd_cfg *a, const struct tgt_rbd_cfg *b);

/* Frees what c owns and zeroes it. */
void tgt_rbd_cfg_free(struct tgt_rbd_cfg *c);

/*
 * Splits "POOL/IMAGE" into c->pool and c->image (replacing them), with the
 * name rules of the config keys.  0, -EINVAL with a reason, or -ENOMEM.
 */
int tgt_rbd_cfg_set_spec(struct tgt_rbd_cfg *c, const char *spec, char *why,
			 size_t whylen);

/* The effective values (defaults filled in). */
static inline const char *tgt_rbd_cfg_conf(const struct tgt_rbd_cfg *c)
{
	return c->conf ? c->conf : TGT_RBD_DEFAULT_CONF;
}

static inline const char *tgt_rbd_cfg_client(const struct tgt_rbd_cfg *c)
{
	return c->client_id ? c->client_id : TGT_RBD_DEFAULT_CLIENT;
}

#endif /* RBLK_TARGET_RBD_CFG_H */
