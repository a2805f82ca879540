// SPDX-License-Identifier: MIT
/*
 * rbd_ha: one RBD image served by several targets, one at a time, with
 * the one that serves writes fencing the one before it (docs/multipath.md).
 *
 * The image's exclusive lock says which target may write.  librbd's
 * default passes the lock to whoever asks, which is what must not happen
 * here: a target cut off from its client but not from the cluster would
 * ask for it back at its next late write.  So the lock is taken with
 * rbd_lock_acquire, which also makes librbd refuse to hand it over, and a
 * target that finds it held blocklists the holder's cluster handle for a
 * year and then breaks the lock (fence_holder): from then on the OSDs
 * refuse every request of the old holder, so none of its writes can land
 * after ours.  librbd's own breaks (rbd_blocklist_on_break_lock, forced
 * on in rbd_cluster.c) blocklist too, for the monitor's default hour.
 * Each rbd_ha volume has a cluster handle of its own, so a fence stops
 * that volume only.
 *
 * The lock is taken at the first request that is not a READ, not at
 * LOGIN: a client's standby path logs in (and reads) without taking
 * anything.
 * While a takeover runs, those requests wait in rv->waiters and go back
 * to their reactors when it ends (the release rbd.c hands the gate).
 *
 * A fenced target finds out from librbd (a request fails with
 * EBLOCKLISTED, or EROFS when the lock went without a blocklist).  It then
 * refuses everything with -ESHUTDOWN (the client hears SHUTTING_DOWN and
 * goes to another path), bumps the volume's epoch so that sessions from
 * before the fence can never write again, and reopens the image with a new
 * cluster handle in the background.  Reopened, it serves new sessions as a
 * standby: the next write through it takes the lock back.
 */
#include "rbd_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "log.h"
#include "volume.h"

/* A takeover breaks the holder and tries again this often. */
#define TAKE_TRIES		5
#define TAKE_RETRY_MS		200
/* A reopen that failed is tried again after this. */
#define REOPEN_RETRY_MS		5000
/* How long a closing volume waits for its takeover or reopen. */
#define STOP_WAIT_MS		5000
/* How often a target that holds the lock asks whether it still does. */
#define OWNER_CHECK_MS		2000

const char *tgt_rbd_lock_state_str(int state)
{
	switch (state) {
	case RBD_LOCK_NONE:	return "standby";
	case RBD_LOCK_TAKING:	return "taking";
	case RBD_LOCK_OWNED:	return "owned";
	case RBD_LOCK_FENCED:	return "fenced";
	}
	return "?";
}

static int lock_state(struct rbd_vol *rv)
{
	return __atomic_load_n(&rv->lock_state, __ATOMIC_SEQ_CST);
}

static void set_lock_state(struct rbd_vol *rv, int state)
{
	__atomic_store_n(&rv->lock_state, state, __ATOMIC_SEQ_CST);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *watch_main(void *arg);

void tgt_rbd_ha_init(struct rbd_vol *rv)
{
	pthread_t thr;

	pthread_mutex_init(&rv->ha_mu, NULL);
	pthread_cond_init(&rv->ha_cond, NULL);
	set_lock_state(rv, RBD_LOCK_NONE);
	if (pthread_create(&thr, NULL, watch_main, rv)) {
		rblk_warn("volume %s: no owner watch (cannot start a thread): a fence is seen at the next write only",
			  rv->name);
		return;
	}
	pthread_detach(thr);
	rv->watch_running = true;
}

/*
 * How long a fenced handle stays blocklisted.  librbd's break would make
 * the entry last the monitor's default, an hour; but a fenced target may
 * have to leave its handle open to a write librbd never gives back
 * (rbd_attach.c, abandon_handle), which could land once the entry
 * lapses.  The entry cannot be made longer afterwards: Ceph 16.2.11's
 * monitor answers a second "osd blocklist add" of the address with the
 * new time but keeps the old entry (seen in the four-node soak, and by
 * hand).  So the fencer sets it long at once.  A handle's address has a
 * nonce and is never reused, so the entry fences nothing else; the cost
 * is one OSD map entry per takeover for a year.
 */
#define FENCE_BLOCKLIST_S	(365 * 86400)

/*
 * Breaks the image's lock held by the client at addr: the cls_lock
 * "rbd_lock" on the image's header object, which is librbd's exclusive
 * lock.  rbd_lock_break would do the same after a blocklist of its own;
 * after rblk's, that second "osd blocklist add" changes nothing but is a
 * second monitor proposal, which the monitor holds until
 * paxos_propose_interval (1 s) after the first: 0.9 s more per takeover
 * in the four-node soak.  The caller has blocklisted addr.
 * 0, -ENOENT when addr holds no lock, or -errno.
 */
static int break_lock(struct rbd_vol *rv, const char *addr)
{
	char oid[96], tag[128], clients[512], cookies[512], addrs[512];
	size_t tag_len = sizeof(tag), clients_len = sizeof(clients);
	size_t cookies_len = sizeof(cookies), addrs_len = sizeof(addrs);
	const char *c = clients, *k = cookies, *a = addrs;
	int exclusive, ret = -ENOENT;
	ssize_t n;

	snprintf(oid, sizeof(oid), "rbd_header.%s", rv->image_id);
	n = rados_list_lockers(rv->io, oid, "rbd_lock", &exclusive, tag, &tag_len,
			       clients, &clients_len, cookies, &cookies_len,
			       addrs, &addrs_len);
	if (n < 0)
		return (int)n;
	for (ssize_t i = 0; i < n; i++) {
		if (!strcmp(tgt_rbd_addr_body(a), tgt_rbd_addr_body(addr))) {
			ret = rados_break_lock(rv->io, oid, "rbd_lock", c, k);
			if (ret < 0 && ret != -ENOENT)
				return ret;
		}
		c += strlen(c) + 1;
		k += strlen(k) + 1;
		a += strlen(a) + 1;
	}
	return ret;
}

/*
 * Fences the lock's holder at addr: a year-long blocklist entry, our
 * handle at the OSD map that has it (the break and every write after it
 * carry that epoch, so no OSD takes the old holder's request after
 * ours), then its lock broken.  When the blocklist fails, librbd's
 * rbd_lock_break fences it for the monitor's default hour instead: never
 * a break without a blocklist.  0, -ENOENT when the lock had gone, or
 * -errno.
 */
static int fence_holder(struct rbd_vol *rv, const char *addr)
{
	rados_t rados = tgt_rbd_cluster_rados(rv->cl);
	char arg[128];	/* rados_blocklist_add takes a char * */
	int ret;

	snprintf(arg, sizeof(arg), "%s", addr);
	ret = rados_blocklist_add(rados, arg, FENCE_BLOCKLIST_S);
	if (!ret)
		ret = rados_wait_for_latest_osdmap(rados);
	if (ret < 0) {
		rblk_warn("volume %s: blocklisting the lock holder %s for %d days: %s (librbd's lock break blocklists it for the cluster's default only)",
			  rv->name, addr, FENCE_BLOCKLIST_S / 86400, strerror(-ret));
		return rbd_lock_break(rv->image, RBD_LOCK_MODE_EXCLUSIVE, addr);
	}
	ret = break_lock(rv, addr);
	if (ret < 0 && ret != -ENOENT) {
		rblk_warn("volume %s: breaking the lock of %s on the header object: %s; through librbd",
			  rv->name, addr, strerror(-ret));
		ret = rbd_lock_break(rv->image, RBD_LOCK_MODE_EXCLUSIVE, addr);
	}
	return ret;
}

/* Who holds the image's lock, as the cluster says. */
enum holder { HELD_BY_NOBODY, HELD_BY_US, HELD_BY_OTHER };

/*
 * Asks the cluster who holds the lock; with break_others, fences every
 * holder that is not us (each is blocklisted before its lock goes).
 * Returns an enum holder (with break_others, OTHER only for a holder that
 * could not be broken), -ESHUTDOWN when the cluster refuses us (we are
 * fenced), or -errno.
 */
static int lock_holder(struct rbd_vol *rv, bool break_others)
{
	char *owners[8], self[128];
	size_t n = sizeof(owners) / sizeof(owners[0]);
	rbd_lock_mode_t mode;
	bool us = false, other = false;
	int ret;

	ret = rbd_lock_get_owners(rv->image, &mode, owners, &n);
	if (ret == -ENOENT)
		return HELD_BY_NOBODY;
	if (ret < 0)
		return ret;
	/* The holder's address is our handle's (the nonce makes it one
	 * handle's), or it is somebody else. */
	tgt_rbd_cluster_addr(rv->cl, self, sizeof(self));
	for (size_t i = 0; i < n; i++) {
		if (self[0] && !strcmp(self, owners[i])) {
			us = true;
			continue;
		}
		if (!break_others) {
			other = true;
			continue;
		}
		ret = fence_holder(rv, owners[i]);
		if (ret < 0 && ret != -ENOENT) {
			rblk_err("volume %s: cannot break the image's lock held by %s: %s",
				 rv->name, owners[i], strerror(-ret));
			other = true;
			continue;
		}
		pthread_mutex_lock(&rv->ha_mu);
		snprintf(rv->last_owner, sizeof(rv->last_owner), "%s", owners[i]);
		pthread_mutex_unlock(&rv->ha_mu);
		rblk_warn("volume %s: took over image %s/%s: fenced its holder %s (blocklisted for %d days; its writes are refused from now on)",
			  rv->name, rv->pool, rv->image_name, owners[i], FENCE_BLOCKLIST_S / 86400);
	}
	rbd_lock_get_owners_cleanup(owners, n);
	return us ? HELD_BY_US : other ? HELD_BY_OTHER : HELD_BY_NOBODY;
}

/*
 * Takes the image's lock for good.  Whoever holds it is fenced first,
 * alive or not: a holder that is cut off from its client still answers
 * the cluster (librbd would wait for it to hand the lock over, forever),
 * and a dead one keeps its watch until the OSDs time it out (30 s).
 *
 * librbd's word that the lock is ours is not enough: a lock that went
 * without a blocklist (not rblk's way, but an admin's rbd lock rm can)
 * stays in librbd's record, rbd_lock_acquire returns 0 at once on it,
 * and every write then waits on the real holder.  That was seen once
 * in a soak: a target said it held the lock while the cluster named
 * the other.  So the cluster is asked before and after, and a record
 * the cluster does not back is let go (rbd_lock_release) first.
 * 0 or -errno.
 */
static int take_lock(struct rbd_vol *rv)
{
	int ret = -EBUSY, held;

	for (int i = 0; i < TAKE_TRIES; i++) {
		if (i) {
			if (__atomic_load_n(&rv->stopping, __ATOMIC_ACQUIRE))
				break;
			sleep_ms(TAKE_RETRY_MS);
		}
		held = lock_holder(rv, true);
		if (held == -ESHUTDOWN)
			return held;
		if (held < 0)
			rblk_warn("volume %s: listing the image's lock holders: %s",
				  rv->name, strerror(-held));
		/* rbd_lock_acquire trusts librbd's own record (unlike
		 * rbd_is_exclusive_lock_owner, which asks the OSD): a lock
		 * the cluster does not give us must go from that record
		 * first.  Refused (-EINVAL) when librbd holds nothing. */
		if ((held == HELD_BY_NOBODY || held == HELD_BY_OTHER) &&
		    rbd_lock_release(rv->image) == 0)
			rblk_warn("volume %s: librbd believed it held the lock of image %s/%s, the cluster did not: let go, taking it again",
				  rv->name, rv->pool, rv->image_name);
		ret = rbd_lock_acquire(rv->image, RBD_LOCK_MODE_EXCLUSIVE);
		if (ret)
			continue;
		held = lock_holder(rv, false);
		if (held == HELD_BY_US)
			return 0;
		if (held == -ESHUTDOWN)
			return held;
		ret = held < 0 ? held : -EBUSY;
		rblk_warn("volume %s: librbd took the lock of image %s/%s but the cluster %s: trying again",
			  rv->name, rv->pool, rv->image_name,
			  held == HELD_BY_OTHER ? "names another holder" :
			  held == HELD_BY_NOBODY ? "names no holder" : "did not answer");
	}
	return ret;
}

static void fence(struct rbd_vol *rv, int ret);

/* Gives held requests back, oldest first (the list is newest first). */
static void release_all(struct rbd_ha_wait *list, rbd_ha_release_fn release, int res)
{
	struct rbd_ha_wait *fifo = NULL, *w;

	while (list) {
		w = list;
		list = w->next;
		w->next = fifo;
		fifo = w;
	}
	while ((w = fifo)) {
		fifo = w->next;
		release(w, res);
	}
}

/*
 * For a target that held the lock: is it still ours?  A takeover
 * blocklists us first, so the cluster refuses to answer a fenced target.
 * A lock that went another way (a holder that is not us although we were
 * never blocklisted) or went altogether is taken again.  0 ours;
 * -ESHUTDOWN fenced; 1 not ours (take it again).
 */
static int still_ours(struct rbd_vol *rv)
{
	int held = lock_holder(rv, false);

	if (held == HELD_BY_US || held == -ESHUTDOWN)
		return held == HELD_BY_US ? 0 : held;
	if (held == HELD_BY_OTHER)
		rblk_warn("volume %s: the cluster names another holder of image %s/%s, without having fenced this target",
			  rv->name, rv->pool, rv->image_name);
	return 1;
}

/* The takeover thread: takes the lock (or, for a target that held it,
 * checks that it still does), then lets the held requests go. */
static void *take_main(void *arg)
{
	struct rbd_vol *rv = arg;
	struct rbd_ha_wait *list;
	rbd_ha_release_fn release;
	uint32_t gen = __atomic_load_n(&rv->vol->login_gen, __ATOMIC_ACQUIRE);
	int ret = rv->take_checks ? still_ours(rv) : 1;

	if (ret == 1)
		ret = take_lock(rv);
	if (ret == -ESHUTDOWN) {
		/* Fenced while we thought we held it: refuse what waits, and
		 * reopen as a standby. */
		fence(rv, ret);
		pthread_mutex_lock(&rv->ha_mu);
		list = rv->waiters;
		rv->waiters = NULL;
		release = rv->release;
		rv->taking = false;
		pthread_cond_broadcast(&rv->ha_cond);
		pthread_mutex_unlock(&rv->ha_mu);
		__atomic_add_fetch(&rv->refused, 1, __ATOMIC_RELAXED);
		release_all(list, release, -ESHUTDOWN);
		return NULL;
	}

	pthread_mutex_lock(&rv->ha_mu);
	list = rv->waiters;
	rv->waiters = NULL;
	release = rv->release;
	if (!ret) {
		set_lock_state(rv, RBD_LOCK_OWNED);
		__atomic_store_n(&rv->checked_gen, gen, __ATOMIC_RELEASE);
		if (!rv->take_checks)
			__atomic_add_fetch(&rv->takeovers, 1, __ATOMIC_RELAXED);
	} else if (lock_state(rv) == RBD_LOCK_TAKING) {
		/* A later write tries again. */
		set_lock_state(rv, RBD_LOCK_NONE);
	}
	rv->taking = false;
	pthread_cond_broadcast(&rv->ha_cond);
	pthread_mutex_unlock(&rv->ha_mu);
	if (ret)
		rblk_err("volume %s: cannot take the lock of image %s/%s: %s; writes here are refused until it can",
			 rv->name, rv->pool, rv->image_name, strerror(-ret));
	else if (!rv->take_checks)
		rblk_info("volume %s: this target holds the lock of image %s/%s",
			  rv->name, rv->pool, rv->image_name);
	release_all(list, release, ret ? -ESHUTDOWN : 0);
	return NULL;
}

/*
 * Whether the lock is known ours for io's session.  A target that owned
 * it cannot tell from librbd that another target broke it (its handle is
 * blocklisted: no notice reaches it), and a client that fails over here
 * may be running from exactly that.  So the first write of every session
 * that logged in since the last check asks the cluster first.
 */
static bool checked(struct rbd_vol *rv, const struct tgt_io *io)
{
	return (int32_t)(io->login_gen -
			 __atomic_load_n(&rv->checked_gen, __ATOMIC_ACQUIRE)) <= 0;
}

/* What makes this target the writer.  FLUSH too: librbd would otherwise
 * ask the holder for the lock itself (and wait for a dead one). */
static bool takes_lock(const struct tgt_io *io)
{
	return io->op != TGT_IO_READ;
}

static int refuse(struct rbd_vol *rv)
{
	__atomic_add_fetch(&rv->refused, 1, __ATOMIC_RELAXED);
	return -ESHUTDOWN;
}

int tgt_rbd_ha_gate(struct rbd_vol *rv, struct rbd_ha_wait *w, struct tgt_io *io,
		    rbd_ha_release_fn release)
{
	pthread_t thr;
	int st;

	/* A session from before the last fence belongs to the old owner. */
	if (io->epoch != __atomic_load_n(&rv->vol->epoch, __ATOMIC_SEQ_CST))
		return refuse(rv);
	st = lock_state(rv);
	if (st == RBD_LOCK_FENCED)
		return refuse(rv);
	if (!takes_lock(io) || (st == RBD_LOCK_OWNED && checked(rv, io)))
		return 0;
	pthread_mutex_lock(&rv->ha_mu);
	st = lock_state(rv);
	if (st == RBD_LOCK_OWNED && checked(rv, io)) {
		pthread_mutex_unlock(&rv->ha_mu);
		return 0;
	}
	if (st == RBD_LOCK_FENCED || rv->stopping) {
		pthread_mutex_unlock(&rv->ha_mu);
		return refuse(rv);
	}
	if (st != RBD_LOCK_TAKING) {
		if (pthread_create(&thr, NULL, take_main, rv)) {
			pthread_mutex_unlock(&rv->ha_mu);
			return -ENOMEM;
		}
		pthread_detach(thr);
		rv->taking = true;
		rv->take_checks = st == RBD_LOCK_OWNED;
		set_lock_state(rv, RBD_LOCK_TAKING);
		if (!rv->take_checks)
			rblk_info("volume %s: first write here: taking the lock of image %s/%s",
				  rv->name, rv->pool, rv->image_name);
	}
	w->next = rv->waiters;
	rv->waiters = w;
	rv->release = release;
	pthread_mutex_unlock(&rv->ha_mu);
	return 1;
}

/*
 * The owner watch.  A target that holds the lock hears nothing when
 * another target breaks it (its handle is blocklisted: no notice reaches
 * it), so until a write of its own failed it would go on saying "owned"
 * and, when a client fails back to it, first find out and reopen then.
 * So while it holds the lock it asks the cluster every OWNER_CHECK_MS:
 * fenced, it reopens as a standby at once; not fenced but not the holder
 * either, it becomes a standby.
 */
static void *watch_main(void *arg)
{
	struct rbd_vol *rv = arg;
	struct timespec until;
	int held;

	pthread_mutex_lock(&rv->ha_mu);
	while (!rv->stopping) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)OWNER_CHECK_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&rv->ha_cond, &rv->ha_mu, &until);
		if (rv->stopping || rv->taking || rv->recovering ||
		    lock_state(rv) != RBD_LOCK_OWNED)
			continue;
		rv->checking = true;
		pthread_mutex_unlock(&rv->ha_mu);
		held = lock_holder(rv, false);
		if (held == -ESHUTDOWN)
			fence(rv, held);
		pthread_mutex_lock(&rv->ha_mu);
		/* Not ours but not fenced either: the next write takes it
		 * again (take_lock) instead of waiting on the holder. */
		if ((held == HELD_BY_NOBODY || held == HELD_BY_OTHER) &&
		    !rv->taking && lock_state(rv) == RBD_LOCK_OWNED) {
			set_lock_state(rv, RBD_LOCK_NONE);
			rblk_warn("volume %s: no longer holds the lock of image %s/%s: a standby until the next write",
				  rv->name, rv->pool, rv->image_name);
		}
		rv->checking = false;
		pthread_cond_broadcast(&rv->ha_cond);
	}
	rv->watch_running = false;
	pthread_cond_broadcast(&rv->ha_cond);
	pthread_mutex_unlock(&rv->ha_mu);
	return NULL;
}

/* The reopen thread: a new cluster handle and image, then standby. */
static void *recover_main(void *arg)
{
	struct rbd_vol *rv = arg;
	char err[512];
	int ret;

	/* The handle goes away under whoever still asks the cluster through
	 * it: a take thread that found the fence, or the owner watch. */
	pthread_mutex_lock(&rv->ha_mu);
	while (rv->taking || rv->checking)
		pthread_cond_wait(&rv->ha_cond, &rv->ha_mu);
	pthread_mutex_unlock(&rv->ha_mu);
	for (;;) {
		if (__atomic_load_n(&rv->stopping, __ATOMIC_ACQUIRE))
			break;
		ret = tgt_rbd_reattach(rv, err, sizeof(err));
		if (!ret) {
			set_lock_state(rv, RBD_LOCK_NONE);
			rblk_info("volume %s: reopened image %s/%s with a new cluster handle: serving as a standby (a write here takes the lock back)",
				  rv->name, rv->pool, rv->image_name);
			break;
		}
		rblk_err("volume %s: reopening the fenced image: %s; trying again in %d s",
			 rv->name, err, REOPEN_RETRY_MS / 1000);
		if (ret == -ETIMEDOUT) {
			/* librbd still owns a close or open: nothing more. */
			rblk_err("volume %s: stays fenced until the target restarts", rv->name);
			break;
		}
		sleep_ms(REOPEN_RETRY_MS);
	}
	pthread_mutex_lock(&rv->ha_mu);
	rv->recovering = false;
	pthread_cond_broadcast(&rv->ha_cond);
	pthread_mutex_unlock(&rv->ha_mu);
	return NULL;
}

/*
 * This target was fenced (ret: what the cluster said): from here every
 * request is refused, no session of before may ever write again
 * (tgt_rbd_ha_gate), and the image is reopened as a standby.  Any
 * thread; the first caller does it.
 */
static void fence(struct rbd_vol *rv, int ret)
{
	pthread_t thr;

	pthread_mutex_lock(&rv->ha_mu);
	if (lock_state(rv) == RBD_LOCK_FENCED || rv->stopping) {
		pthread_mutex_unlock(&rv->ha_mu);
		return;
	}
	set_lock_state(rv, RBD_LOCK_FENCED);
	__atomic_add_fetch(&rv->vol->epoch, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&rv->fenced, 1, __ATOMIC_RELAXED);
	rblk_warn("volume %s: fenced: another target took over image %s/%s (the cluster refused a request: %s); refusing I/O here, reopening as a standby",
		  rv->name, rv->pool, rv->image_name, strerror(-ret));
	if (!rv->recovering && !pthread_create(&thr, NULL, recover_main, rv)) {
		pthread_detach(thr);
		rv->recovering = true;
	}
	pthread_mutex_unlock(&rv->ha_mu);
}

int tgt_rbd_ha_result(struct rbd_vol *rv, int ret)
{
	/* EBLOCKLISTED always means fenced; EROFS only once the lock was
	 * ours (it went without a blocklist). */
	if (ret != -ESHUTDOWN && (ret != -EROFS || lock_state(rv) != RBD_LOCK_OWNED))
		return ret;
	__atomic_add_fetch(&rv->refused, 1, __ATOMIC_RELAXED);
	fence(rv, ret);
	return -ESHUTDOWN;
}

bool tgt_rbd_ha_stop(struct rbd_vol *rv)
{
	struct timespec until;
	bool stopped;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STOP_WAIT_MS / 1000;
	pthread_mutex_lock(&rv->ha_mu);
	__atomic_store_n(&rv->stopping, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&rv->ha_cond);	/* the owner watch ends */
	while ((rv->taking || rv->recovering || rv->watch_running) &&
	       !pthread_cond_timedwait(&rv->ha_cond, &rv->ha_mu, &until))
		;
	stopped = !rv->taking && !rv->recovering && !rv->watch_running;
	pthread_mutex_unlock(&rv->ha_mu);
	if (!stopped)
		rblk_warn("volume %s: a takeover or reopen is still at the cluster at close: image left open",
			  rv->name);
	return stopped;
}

void tgt_rbd_ha_describe(struct rbd_vol *rv, struct json_object *r)
{
	json_object *h = json_object_new_object();

	if (!h)
		return;
	pthread_mutex_lock(&rv->ha_mu);
	json_object_object_add(h, "lock", json_object_new_string(
		tgt_rbd_lock_state_str(lock_state(rv))));
	json_object_object_add(h, "takeovers", json_object_new_int64(
		(int64_t)__atomic_load_n(&rv->takeovers, __ATOMIC_RELAXED)));
	json_object_object_add(h, "fenced", json_object_new_int64(
		(int64_t)__atomic_load_n(&rv->fenced, __ATOMIC_RELAXED)));
	json_object_object_add(h, "refused", json_object_new_int64(
		(int64_t)__atomic_load_n(&rv->refused, __ATOMIC_RELAXED)));
	json_object_object_add(h, "abandoned_handles", json_object_new_int64(
		(int64_t)__atomic_load_n(&rv->abandoned, __ATOMIC_RELAXED)));
	json_object_object_add(h, "last_fenced_holder",
			       json_object_new_string(rv->last_owner));
	pthread_mutex_unlock(&rv->ha_mu);
	json_object_object_add(r, "ha", h);
}
