// SPDX-License-Identifier: MIT
/*
 * A change set of exports made in one step (config reload, export.h): every
 * change is checked under the registry lock, then all are made under the
 * same hold, so a LOGIN sees the registry before or after, never between;
 * exports that went are released after the lock is dropped.
 */
#include "export.h"
#include "export_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_secret(const struct rblk_secret *a, const struct rblk_secret *b)
{
	if (!a || !b)
		return a == b;
	return a->len == b->len && !memcmp(a->key, b->key, a->len);
}

bool tgt_export_same_access(const struct tgt_export *prep)
{
	const struct tgt_export *e;
	bool same = false;

	tgt_exports_lock();
	e = tgt_export_find_locked(prep->name);
	if (e && e->n_hosts == prep->n_hosts && e->any_host == prep->any_host &&
	    same_secret(e->secret, prep->secret)) {
		same = true;
		for (unsigned i = 0; i < e->n_hosts; i++)
			same = same && !strcmp(e->hosts[i], prep->hosts[i]);
	}
	tgt_exports_unlock();
	return same;
}

/* Whether change c can be made now (lock held); 0 or -errno with why. */
static int change_ok_locked(const struct tgt_export_change *c, char *err,
			    size_t errlen)
{
	const struct tgt_export *e = tgt_export_find_locked(c->name);

	if (c->op == TGT_EXPORT_ADD) {
		if (!e)
			return 0;
		snprintf(err, errlen, "volume %s: already exists", c->name);
		return -EEXIST;
	}
	if (!e) {
		snprintf(err, errlen, "volume %s: vanished meanwhile", c->name);
		return -ENOENT;
	}
	if (c->op != TGT_EXPORT_ACCESS && e->n_sessions) {
		snprintf(err, errlen, "volume %s has %u session(s) attached: %s",
			 c->name, e->n_sessions, c->op == TGT_EXPORT_REMOVE ?
			 "detach them, or delete it with rblkctl volume delete --force" :
			 "its store can change only with no session (detach them first)");
		return -EBUSY;
	}
	return 0;
}

/* Unlinks the listed export named name (lock held); returns it. */
static struct tgt_export *unlink_locked(const char *name, struct tgt_export *repl)
{
	struct tgt_export **pp, *e;

	for (pp = tgt_exports_headp(); *pp && strcmp((*pp)->name, name); pp = &(*pp)->next)
		;
	e = *pp;
	if (repl) {
		tgt_export_secret_changed_locked(repl);
		repl->next = e->next;
		repl->listed = true;
		*pp = repl;
	} else {
		*pp = e->next;
	}
	e->next = NULL;
	__atomic_store_n(&e->listed, false, __ATOMIC_RELEASE);
	return e;
}

/* Trades e's access part (ACL, secret) with prep's (lock held). */
static void swap_access_locked(struct tgt_export *e, struct tgt_export *prep)
{
	struct tgt_export t = *e;

	e->hosts = prep->hosts;
	e->acl = prep->acl;
	e->n_hosts = prep->n_hosts;
	e->any_host = prep->any_host;
	e->secret = prep->secret;
	prep->hosts = t.hosts;
	prep->acl = t.acl;
	prep->n_hosts = t.n_hosts;
	prep->any_host = t.any_host;
	prep->secret = t.secret;
	if (!same_secret(e->secret, prep->secret))
		tgt_export_secret_changed_locked(e);
}

int tgt_exports_change(struct tgt_export_change *ch, unsigned n, char *err,
		       size_t errlen)
{
	struct tgt_export **gone;
	unsigned ngone = 0;
	int ret = 0;

	gone = calloc(n ? n : 1, sizeof(*gone));
	if (!gone)
		return -ENOMEM;
	tgt_exports_lock();
	for (unsigned i = 0; i < n && !ret; i++)
		ret = change_ok_locked(&ch[i], err, errlen);
	for (unsigned i = 0; i < n && !ret; i++) {
		struct tgt_export_change *c = &ch[i];

		switch (c->op) {
		case TGT_EXPORT_ADD:
			tgt_export_link_locked(c->prep);
			c->prep = NULL;
			break;
		case TGT_EXPORT_REMOVE:
			gone[ngone++] = unlink_locked(c->name, NULL);
			break;
		case TGT_EXPORT_REPLACE:
			/* In place, in one step: a LOGIN finds the old or the
			 * new volume, never none. */
			gone[ngone++] = unlink_locked(c->name, c->prep);
			c->prep = NULL;
			break;
		case TGT_EXPORT_ACCESS:
			swap_access_locked(tgt_export_find_locked(c->name), c->prep);
			break;
		}
	}
	tgt_exports_unlock();
	/* No session holds these: the registry's reference is the last. */
	for (unsigned i = 0; i < ngone; i++)
		tgt_export_put(gone[i]);
	free(gone);
	return ret;
}
