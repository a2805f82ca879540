/* SPDX-License-Identifier: MIT */
/*
 * librados cluster handles for the rbd backend, one per (ceph.conf, client
 * id, keyring): every volume of the same cluster and client shares it, and
 * with it librados's threads and connections.  Reference counted; the
 * last put shuts it down.  Main, admin and offload threads (a mutex
 * guards the list; never the I/O path).
 */
#ifndef RBLK_TARGET_RBD_CLUSTER_H
#define RBLK_TARGET_RBD_CLUSTER_H

#include <stddef.h>

#include <rados/librados.h>

#include "rbd_cfg.h"

/* How long connecting to the monitors may take (client_mount_timeout),
 * and each monitor command (rados_mon_op_timeout): a volume on a cluster
 * that cannot be reached fails its start within this, not after the
 * five minutes of Ceph's default. */
#define TGT_RBD_CONNECT_TIMEOUT_S	10

struct tgt_rbd_cluster;

/*
 * The connected handle for c's cluster and client, made (and connected)
 * on first use (an rbd_ha volume always gets a handle of its own).  0 or -errno with a one-line message in err that names
 * the conf and the client.
 */
int tgt_rbd_cluster_get(const struct tgt_rbd_cfg *c,
			struct tgt_rbd_cluster **clp, char *err, size_t errlen);
/* Drops a reference; the last one shuts the handle down. */
void tgt_rbd_cluster_put(struct tgt_rbd_cluster *cl);

rados_t tgt_rbd_cluster_rados(const struct tgt_rbd_cluster *cl);
/*
 * The handle's own address as the cluster names it in a lock's holders
 * and a blocklist ("IP:PORT/NONCE"): librados gives an address vector,
 * "[v2:...,v1:...]" or a bare address; this is the first, without its
 * type.  Empty when librados says nothing (or it does not fit in len).
 */
void tgt_rbd_cluster_addr(const struct tgt_rbd_cluster *cl, char *out, size_t len);
/* addr without its messenger type ("v1:", "v2:", "any:"): the form
 * librbd names a lock owner in and the blocklist takes, so that
 * "v1:10.0.0.1:0/7" (as cls_lock lists a locker) and "10.0.0.1:0/7" are
 * one client. */
const char *tgt_rbd_addr_body(const char *addr);
/* The cluster's fsid (text), and "client.ID" for messages. */
const char *tgt_rbd_cluster_fsid(const struct tgt_rbd_cluster *cl);
const char *tgt_rbd_cluster_client(const struct tgt_rbd_cluster *cl);
/* Volumes using the handle now (tests, volume show). */
unsigned tgt_rbd_cluster_users(const struct tgt_rbd_cluster *cl);

/*
 * Opens pool on cl into *io.  0 or -errno with a message ("pool 'x' does
 * not exist on cluster FSID").
 */
int tgt_rbd_cluster_pool(struct tgt_rbd_cluster *cl, const char *pool,
			 rados_ioctx_t *io, char *err, size_t errlen);

#endif /* RBLK_TARGET_RBD_CLUSTER_H */
