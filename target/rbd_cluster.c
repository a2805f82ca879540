// SPDX-License-Identifier: MIT
/* Shared librados handles (rbd_cluster.h). */
#include "rbd_cluster.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "log.h"

struct tgt_rbd_cluster {
	rados_t rados;
	char   *conf, *client, *keyring;	/* the key; keyring may be NULL */
	char    name[80];			/* "client.ID" */
	char    fsid[64];
	unsigned refs;				/* under lock */
	bool    own;				/* one volume's, not in the list */
	struct tgt_rbd_cluster *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tgt_rbd_cluster *clusters;

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * What we need of librados whatever the admin's conf says (set after it
 * is read, so these win):
 * - bounded waits for the monitors, so one dead cluster does not hold
 *   the target's start for minutes;
 * - no librbd cache: a write is complete only once the OSDs have it, so
 *   FUA needs no extra flush and nothing acknowledged sits in our memory
 *   (the initiator's page cache is the cache);
 * - zero-copy writes: librbd may then send from our pool buffers, which
 *   stay untouched until the write completes;
 * - a discard of part of an object zeroes it, so discarded blocks read
 *   back as zeroes as they do on a file volume;
 * - no librados chatter on our stderr: the target logs one line per
 *   failure; Ceph's own log goes where the conf's log_file says.
 */
static const char *const forced_conf[][2] = {
	{ "client_mount_timeout", "10" },
	{ "rados_mon_op_timeout", "10" },
	{ "rbd_cache", "false" },
	{ "rbd_disable_zero_copy_writes", "false" },
	{ "rbd_skip_partial_discard", "false" },
	/* rbd_ha: breaking a holder's lock fences it (rbd_ha.c). */
	{ "rbd_blocklist_on_break_lock", "true" },
	{ "log_to_stderr", "false" },
	{ "err_to_stderr", "false" },
};
_Static_assert(TGT_RBD_CONNECT_TIMEOUT_S == 10, "forced_conf says 10");

static const char *connect_hint(int ret)
{
	switch (ret) {
	case -EACCES:
	case -EPERM:
		return " (wrong key for this client, or the key lacks caps?)";
	case -ETIMEDOUT:
	case -ENOTCONN:
	case -EHOSTUNREACH:
	case -ECONNREFUSED:
		return " (no monitor answered within 10 s: check mon_host in the conf and the network)";
	case -ENOENT:
		return " (keyring not found?)";
	}
	return "";
}

static int cluster_connect(struct tgt_rbd_cluster *cl, char *err, size_t errlen)
{
	int ret;

	ret = rados_create2(&cl->rados, "ceph", cl->name, 0);
	if (ret < 0) {
		snprintf(err, errlen, "ceph %s: rados_create2: %s", cl->name, strerror(-ret));
		return ret;
	}
	ret = rados_conf_read_file(cl->rados, cl->conf);
	if (ret < 0) {
		snprintf(err, errlen, "ceph conf %s: cannot read it: %s", cl->conf, strerror(-ret));
		goto out_shutdown;
	}
	if (cl->keyring && (ret = rados_conf_set(cl->rados, "keyring", cl->keyring)) < 0) {
		snprintf(err, errlen, "ceph keyring %s: %s", cl->keyring, strerror(-ret));
		goto out_shutdown;
	}
	for (unsigned i = 0; i < ARRAY_SIZE(forced_conf); i++) {
		ret = rados_conf_set(cl->rados, forced_conf[i][0], forced_conf[i][1]);
		if (ret < 0) {
			snprintf(err, errlen, "ceph option %s = %s refused: %s",
				 forced_conf[i][0], forced_conf[i][1], strerror(-ret));
			goto out_shutdown;
		}
	}
	ret = rados_connect(cl->rados);
	if (ret < 0) {
		snprintf(err, errlen, "cannot connect to the cluster of %s as %s: %s%s",
			 cl->conf, cl->name, strerror(-ret), connect_hint(ret));
		goto out_shutdown;
	}
	ret = rados_cluster_fsid(cl->rados, cl->fsid, sizeof(cl->fsid));
	if (ret < 0)
		snprintf(cl->fsid, sizeof(cl->fsid), "?");
	rblk_info("ceph: connected to cluster %s as %s (conf %s)", cl->fsid,
		  cl->name, cl->conf);
	return 0;

out_shutdown:
	rados_shutdown(cl->rados);
	return ret;
}

static void cluster_free(struct tgt_rbd_cluster *cl)
{
	free(cl->conf);
	free(cl->client);
	free(cl->keyring);
	free(cl);
}

int tgt_rbd_cluster_get(const struct tgt_rbd_cfg *c,
			struct tgt_rbd_cluster **clp, char *err, size_t errlen)
{
	const char *conf = tgt_rbd_cfg_conf(c), *client = tgt_rbd_cfg_client(c);
	struct tgt_rbd_cluster *cl;
	int ret;

	pthread_mutex_lock(&lock);
	/* An rbd_ha volume has a handle of its own: a takeover blocklists
	 * the handle (its address and nonce), which must fence that volume
	 * only, and a new handle is what serves it again. */
	for (cl = c->ha ? NULL : clusters; cl; cl = cl->next) {
		if (!strcmp(cl->conf, conf) && !strcmp(cl->client, client) &&
		    same_str(cl->keyring, c->keyring)) {
			cl->refs++;
			pthread_mutex_unlock(&lock);
			*clp = cl;
			return 0;
		}
	}
	/* Connecting under the lock: a second volume of the same cluster
	 * waits for this one and shares it instead of connecting again. */
	cl = calloc(1, sizeof(*cl));
	if (!cl || !(cl->conf = strdup(conf)) || !(cl->client = strdup(client)) ||
	    (c->keyring && !(cl->keyring = strdup(c->keyring)))) {
		if (cl)
			cluster_free(cl);
		pthread_mutex_unlock(&lock);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(cl->name, sizeof(cl->name), "client.%s", client);
	ret = cluster_connect(cl, err, errlen);
	if (ret) {
		cluster_free(cl);
		pthread_mutex_unlock(&lock);
		return ret;
	}
	cl->refs = 1;
	cl->own = c->ha;
	if (!cl->own) {
		cl->next = clusters;
		clusters = cl;
	}
	pthread_mutex_unlock(&lock);
	*clp = cl;
	return 0;
}

void tgt_rbd_cluster_put(struct tgt_rbd_cluster *cl)
{
	struct tgt_rbd_cluster **pp;

	if (!cl)
		return;
	pthread_mutex_lock(&lock);
	if (--cl->refs) {
		pthread_mutex_unlock(&lock);
		return;
	}
	for (pp = &clusters; !cl->own && *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	rados_shutdown(cl->rados);
	cluster_free(cl);
	/* The handle's threads and caches are freed, but glibc keeps the
	 * pages in their arenas, and a new handle's threads take other
	 * arenas: without this, a target that fails over again and again
	 * grows by the handles it has had (docs/multipath.md, "Memory"). */
	malloc_trim(0);
}

rados_t tgt_rbd_cluster_rados(const struct tgt_rbd_cluster *cl)
{
	return cl->rados;
}

const char *tgt_rbd_addr_body(const char *addr)
{
	static const char *const types[] = { "v1:", "v2:", "any:" };

	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (!strncmp(addr, types[i], strlen(types[i])))
			return addr + strlen(types[i]);
	return addr;
}

void tgt_rbd_cluster_addr(const struct tgt_rbd_cluster *cl, char *out, size_t len)
{
	char *addrs = NULL;
	const char *a;
	size_t n;

	out[0] = 0;
	if (rados_getaddrs(cl->rados, &addrs) < 0 || !addrs)
		return;
	a = tgt_rbd_addr_body(addrs + (addrs[0] == '['));
	n = strcspn(a, ",]");
	if (n < len)
		snprintf(out, len, "%.*s", (int)n, a);
	free(addrs);
}

const char *tgt_rbd_cluster_fsid(const struct tgt_rbd_cluster *cl)
{
	return cl->fsid;
}

const char *tgt_rbd_cluster_client(const struct tgt_rbd_cluster *cl)
{
	return cl->name;
}

unsigned tgt_rbd_cluster_users(const struct tgt_rbd_cluster *cl)
{
	unsigned n;

	pthread_mutex_lock(&lock);
	n = cl->refs;
	pthread_mutex_unlock(&lock);
	return n;
}

int tgt_rbd_cluster_pool(struct tgt_rbd_cluster *cl, const char *pool,
			 rados_ioctx_t *io, char *err, size_t errlen)
{
	int ret = rados_ioctx_create(cl->rados, pool, io);

	if (ret < 0)
		snprintf(err, errlen, "pool '%s'%s on cluster %s: %s", pool,
			 ret == -ENOENT ? " does not exist" : "", cl->fsid,
			 ret == -ENOENT ? "create it, or fix rbd_pool" : strerror(-ret));
	return ret;
}
