// SPDX-License-Identifier: MIT
/* Exports, sessions and access control: see export.h for the design. */
#include "export.h"
#include "clock.h"
#include "export_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tgt_export *reg_head;
static unsigned reg_reactors = 1;
static uint64_t next_session_id = 1;
/* Secret generations: unique over every export, so that a challenge can
 * name the secret it was issued under (reg_lock). */
static uint64_t last_secret_gen;

void tgt_exports_lock(void)
{
	pthread_mutex_lock(&reg_lock);
}

void tgt_exports_unlock(void)
{
	pthread_mutex_unlock(&reg_lock);
}

struct tgt_export *tgt_exports_first(void)
{
	return reg_head;
}

struct tgt_export **tgt_exports_headp(void)
{
	return &reg_head;
}

struct tgt_export *tgt_export_find_locked(const char *name)
{
	for (struct tgt_export *e = reg_head; e; e = e->next)
		if (!strcmp(e->name, name))
			return e;
	return NULL;
}

static void free_hosts(char **hosts, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(hosts[i]);
	free(hosts);
}

/* Copies the list and parses each entry; -EINVAL for one that does not
 * parse (a config or admin request that got past validation must not
 * slip through here either), -ENOMEM. */
static int dup_hosts(char *const *src, unsigned n, char ***out,
		     struct tgt_acl_entry **acl_out)
{
	struct tgt_acl_entry *acl;
	char **h;
	int ret;

	*out = NULL;
	*acl_out = NULL;
	if (!n)
		return 0;
	h = calloc(n, sizeof(*h));
	acl = calloc(n, sizeof(*acl));
	if (!h || !acl) {
		free(h);
		free(acl);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		ret = tgt_acl_entry_parse(src[i], &acl[i], NULL, 0);
		h[i] = ret ? NULL : strdup(src[i]);
		if (!h[i]) {
			free_hosts(h, i);
			free(acl);
			return ret ? ret : -ENOMEM;
		}
	}
	*out = h;
	*acl_out = acl;
	return 0;
}

/* Everything but e itself; may block (the volume's final fdatasync). */
static int export_release(struct tgt_export *e)
{
	int64_t t0;
	int ret;

	/* Timed: a buffered volume's final fdatasync can take seconds, and
	 * integration/48 checks that no reactor waited for it. */
	t0 = rblk_now_ms();
	ret = tgt_volume_close(e->vol);
	rblk_info("volume %s: closed in %ld ms%s", e->name,
		  (long)(rblk_now_ms() - t0), ret ? " (final flush failed)" : "");
	free_hosts(e->hosts, e->n_hosts);
	free(e->acl);
	if (e->secret) {
		rblk_auth_clear_secret(e->secret);
		free(e->secret);
	}
	free(e->stats);
	return ret;
}

static void export_free(struct tgt_export *e)
{
	export_release(e);
	free(e);
}

static int close_job_run(struct tgt_offload_job *job)
{
	return export_release((struct tgt_export *)
		((char *)job - offsetof(struct tgt_export, close_job)));
}

static void close_job_done(struct tgt_event *ev, int res, uint32_t flags)
{
	free((char *)ev - offsetof(struct tgt_export, close_job.ev));
}

void tgt_export_put(struct tgt_export *e)
{
	if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0)
		export_free(e);
}

/*
 * tgt_export_put on reactor r's thread: the last reference of a deleted
 * export closes its volume, and fdatasync of a file with much dirty data
 * (direct = no) can take seconds, which would stall every connection of
 * r.  It runs on r's offload thread instead (inline if that cannot start).
 */
static void export_put_reactor(struct tgt_export *e, struct tgt_reactor *r)
{
	if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (r) {
		e->close_job.run = close_job_run;
		e->close_job.ev.done = close_job_done;
		e->close_job.must_run = true;
		if (tgt_offload_submit(r, &e->close_job) == 0)
			return;
	}
	export_free(e);
}

int tgt_exports_init(unsigned n_reactors)
{
	uint64_t seed = 0;

	reg_reactors = n_reactors ? n_reactors : 1;
	/* Ids start at a random point so logs of two runs do not show the
	 * same id for different sessions. */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint64_t)getpid() << 32;
	next_session_id = (seed & 0x3fffffff00000000ull) | 1;	/* JSON int64 */
	return 0;
}

void tgt_exports_fini(void)
{
	struct tgt_export *e, *next;

	pthread_mutex_lock(&reg_lock);
	e = reg_head;
	reg_head = NULL;
	pthread_mutex_unlock(&reg_lock);
	for (; e; e = next) {
		next = e->next;
		__atomic_store_n(&e->listed, false, __ATOMIC_RELEASE);
		/* Reactors are joined: a session still holding the export was
		 * abandoned by an aborted drain.  Flush and close the volume
		 * now anyway; the leaked session never touches it again. */
		if (__atomic_load_n(&e->refs, __ATOMIC_ACQUIRE) > 1) {
			rblk_warn("volume %s: %u session(s) not closed at exit; closing the volume anyway",
				  e->name, e->n_sessions);
			tgt_volume_close(e->vol);
			e->vol = NULL;
		}
		tgt_export_put(e);
	}
}

/* Frees what export_new built (an export that was never listed). */
static void export_unbuilt(struct tgt_export *e)
{
	if (e->secret)
		rblk_auth_clear_secret(e->secret);
	free(e->secret);
	free_hosts(e->hosts, e->n_hosts);
	free(e->acl);
	free(e->stats);
	free(e);
}

/* An unlisted export of vol (may be NULL: the access part only) under
 * cfg's name, ACL and secret.  Does not take vol on failure. */
static int export_new(struct tgt_volume *vol, const struct tgt_volume_cfg *cfg,
		      struct tgt_export **ep, char *err, size_t errlen)
{
	struct tgt_export *e;
	int ret;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	snprintf(e->name, sizeof(e->name), "%s", cfg->name);
	e->n_stats = reg_reactors;
	e->stats = aligned_alloc(64, e->n_stats * sizeof(*e->stats));
	if (!e->stats) {
		ret = -ENOMEM;
		goto out_free;
	}
	memset(e->stats, 0, e->n_stats * sizeof(*e->stats));
	ret = dup_hosts(cfg->allow_hosts, cfg->n_allow_hosts, &e->hosts, &e->acl);
	if (ret) {
		if (ret == -EINVAL)
			snprintf(err, errlen, "volume %s: field 'allow_hosts': an entry does not parse",
				 cfg->name);
		goto out_free;
	}
	e->n_hosts = cfg->n_allow_hosts;
	e->any_host = cfg->allow_any_host;
	if (cfg->secret_file) {
		char why[256];

		e->secret = malloc(sizeof(*e->secret));
		if (!e->secret) {
			ret = -ENOMEM;
			goto out_free;
		}
		ret = rblk_auth_load_secret(cfg->secret_file, e->secret, why,
					    sizeof(why));
		if (ret) {
			snprintf(err, errlen, "volume %s: field 'secret_file': %s",
				 cfg->name, why);
			goto out_free;
		}
	}
	e->vol = vol;
	e->size = vol ? vol->size : 0;
	e->refs = 1;
	*ep = e;
	return 0;

out_free:
	export_unbuilt(e);
	return ret;
}

void tgt_export_secret_changed_locked(struct tgt_export *e)
{
	e->secret_gen = ++last_secret_gen;
}

void tgt_export_link_locked(struct tgt_export *e)
{
	struct tgt_export **tail;
	uint64_t grown;

	tgt_export_secret_changed_locked(e);
	/* The store may have grown since export_new read its size (an rbd
	 * image's update watch, tgt_export_grow_volume). */
	if (e->vol && (grown = __atomic_load_n(&e->vol->size, __ATOMIC_ACQUIRE)) > e->size)
		__atomic_store_n(&e->size, grown, __ATOMIC_RELEASE);
	for (tail = &reg_head; *tail; tail = &(*tail)->next)
		;
	e->next = NULL;
	e->listed = true;
	*tail = e;
}

int tgt_export_add(struct tgt_volume *vol, const struct tgt_volume_cfg *cfg,
		   char *err, size_t errlen)
{
	struct tgt_export *e;
	int ret;

	ret = export_new(vol, cfg, &e, err, errlen);
	if (ret)
		return ret;
	pthread_mutex_lock(&reg_lock);
	if (tgt_export_find_locked(cfg->name)) {
		pthread_mutex_unlock(&reg_lock);
		snprintf(err, errlen, "volume %s: already exists", cfg->name);
		export_unbuilt(e);
		return -EEXIST;
	}
	tgt_export_link_locked(e);
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

int tgt_export_prepare(struct tgt_volume *vol, const struct tgt_volume_cfg *cfg,
		       struct tgt_export **ep, char *err, size_t errlen)
{
	return export_new(vol, cfg, ep, err, errlen);
}

void tgt_export_discard(struct tgt_export *e)
{
	if (!e)
		return;
	if (e->vol)
		tgt_volume_close(e->vol);
	export_unbuilt(e);
}

int tgt_export_check(const struct tgt_volume_cfg *cfg, char *err, size_t errlen)
{
	struct rblk_secret secret;
	char why[256];
	int ret;

	if (!cfg->secret_file)
		return 0;
	ret = rblk_auth_load_secret(cfg->secret_file, &secret, why, sizeof(why));
	rblk_auth_clear_secret(&secret);
	if (ret)
		snprintf(err, errlen, "volume %s: field 'secret_file': %s",
			 cfg->name, why);
	return ret;
}

void tgt_exports_unlink_created(void)
{
	pthread_mutex_lock(&reg_lock);
	for (struct tgt_export *e = reg_head; e; e = e->next) {
		if (!e->vol->created)
			continue;
		if (unlink(e->vol->path) == 0)
			rblk_info("volume %s: removed %s, which this start created",
				  e->name, e->vol->path);
		else
			rblk_warn("volume %s: removing %s, which this start created: %s",
				  e->name, e->vol->path, strerror(errno));
		e->vol->created = false;
	}
	pthread_mutex_unlock(&reg_lock);
}

int tgt_exports_load(const struct tgt_config *cfg, char *err, size_t errlen)
{
	for (unsigned i = 0; i < cfg->n_vols; i++) {
		struct tgt_volume *v;
		int ret;

		ret = tgt_volume_open(&v, &cfg->vols[i], err, errlen);
		if (ret && tgt_volume_cfg_remote(&cfg->vols[i])) {
			/* A cluster that is down must not keep the target's
			 * other volumes from serving (the config keeps it). */
			rblk_err("%s (not served; the other volumes are)", err);
			continue;
		}
		if (!ret) {
			ret = tgt_export_add(v, &cfg->vols[i], err, errlen);
			if (ret && v->created)
				unlink(v->path);
			if (ret)
				tgt_volume_close(v);
		}
		if (ret) {
			/* Nothing of a refused start stays behind. */
			tgt_exports_unlink_created();
			tgt_exports_fini();
			return ret;
		}
		/* Closed is the safe reading of an old config without the
		 * key, but it must not be a silent surprise after upgrade. */
		if (!cfg->vols[i].allow_any_host && !cfg->vols[i].n_allow_hosts)
			rblk_warn("volume %s: no allow_hosts and no allow_any_host = yes: no host may log in (add allow_any_host = yes for open access, or allow_hosts)",
				  cfg->vols[i].name);
	}
	return 0;
}

/* ---- ACL ----------------------------------------------------------------- */

bool tgt_acl_host_allowed(const struct tgt_acl_entry *acl, unsigned n,
			  bool any_host, const char *host,
			  const struct sockaddr *peer_sa)
{
	if (any_host)
		return true;
	for (unsigned i = 0; i < n; i++)
		if (tgt_acl_entry_match(&acl[i], host, peer_sa))
			return true;
	return false;
}

static int refuse(struct tgt_export *e, const struct rblk_login *l,
		  const char *peer, int status, const char *why)
{
	if (e)
		e->refusals++;
	rblk_warn("login refused: volume '%s' host '%s' peer %s: %s (%s)",
		  l->volume, l->host, peer ? peer : "?", rblk_status_str(status),
		  why);
	return status;
}

/* The answer to a challenge repeats the challenged LOGIN but for the
 * proof; the name fields are compared raw, as the MAC covers them. */
static bool same_login(const struct rblk_login *a, const struct rblk_login *b)
{
	return a->queue_id == b->queue_id && a->queue_depth == b->queue_depth &&
	       a->flags == b->flags &&
	       !memcmp(a->volume, b->volume, sizeof(a->volume)) &&
	       !memcmp(a->host, b->host, sizeof(a->host));
}

static bool all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return !acc;
}

/*
 * The challenge/response of a volume with a secret (proto/auth.h): first
 * LOGIN -> AUTH_REQUIRED with a nonce; the answer must carry the
 * initiator's nonce and MAC_I; then auth_out gets MAC_T.
 */
static int check_secret(struct tgt_auth_state *st, struct tgt_export *e,
			const struct rblk_login *l, const char *peer,
			uint8_t auth_out[RBLK_NONCE_LEN])
{
	if (!st->challenged) {
		/* Fresh nonce per connection: a recorded answer to another
		 * connection's challenge is worthless. */
		if (rblk_auth_nonce(st->nonce))
			return refuse(e, l, peer, RBLK_S_NO_RESOURCES,
				      "no random bytes for a nonce");
		st->challenged = true;
		st->secret_gen = e->secret_gen;
		st->first = *l;
		memcpy(auth_out, st->nonce, RBLK_NONCE_LEN);
		return RBLK_S_AUTH_REQUIRED;
	}
	/* The answer is checked against the secret the challenge was issued
	 * under, or not at all: cleared, an answer would pass unchecked;
	 * replaced, a client that proves the new one never got asked. */
	if (!e->secret || e->secret_gen != st->secret_gen)
		return refuse(e, l, peer, RBLK_S_AUTH_FAILED,
			      e->secret ? "the volume's secret was replaced during the challenge"
					: "the volume's secret was cleared during the challenge");
	if (!l->has_mac)
		return refuse(e, l, peer, RBLK_S_AUTH_FAILED, "challenge not answered");
	if (all_zero(l->ini_nonce, RBLK_NONCE_LEN))
		return refuse(e, l, peer, RBLK_S_AUTH_FAILED,
			      "no initiator nonce (mutual authentication is required)");
	if (rblk_auth_verify(e->secret, RBLK_AUTH_INITIATOR, st->nonce,
			     l->ini_nonce, l->volume, l->host, l->auth_mac))
		return refuse(e, l, peer, RBLK_S_AUTH_FAILED,
			      "wrong auth MAC (secret mismatch)");
	if (rblk_auth_mac(e->secret, RBLK_AUTH_TARGET, st->nonce, l->ini_nonce,
			  l->volume, l->host, auth_out))
		return refuse(e, l, peer, RBLK_S_NO_RESOURCES,
			      "cannot compute the target's proof");
	st->proven = true;
	return RBLK_S_OK;
}

int tgt_acl_login(struct tgt_auth_state *st, const struct rblk_login *l,
		  const char *peer, const struct sockaddr *peer_sa,
		  struct tgt_reactor *r, unsigned reactor_id,
		  struct tgt_session **sp, uint8_t auth_out[RBLK_NONCE_LEN])
{
	struct tgt_export *e;
	struct tgt_session *s;
	int ret;

	*sp = NULL;
	memset(auth_out, 0, RBLK_NONCE_LEN);
	pthread_mutex_lock(&reg_lock);
	/* Before the lookup: naming an open volume in the answer must not
	 * skip the proof the challenge asked for. */
	if (st->challenged && !same_login(&st->first, l)) {
		ret = refuse(tgt_export_find_locked(st->first.volume), l, peer,
			     RBLK_S_AUTH_FAILED,
			     "second LOGIN differs from the challenged one (volume, host, queue or flags)");
		goto out_unlock;
	}
	e = tgt_export_find_locked(l->volume);
	if (!e) {
		ret = refuse(NULL, l, peer, RBLK_S_NO_SUCH_VOLUME, "no such volume");
		goto out_unlock;
	}
	if (!tgt_acl_host_allowed(e->acl, e->n_hosts, e->any_host, l->host,
				  peer_sa)) {
		ret = refuse(e, l, peer, RBLK_S_ACCESS_DENIED,
			     e->n_hosts ? "neither host name nor peer address in allow_hosts"
					: "allow_hosts is empty and allow_any_host is off");
		goto out_unlock;
	}
	/* An answer to a challenge is checked even if the secret is gone. */
	if (e->secret || st->challenged) {
		ret = check_secret(st, e, l, peer, auth_out);
		if (ret != RBLK_S_OK)
			goto out_unlock;
	}
	s = aligned_alloc(64, sizeof(*s));
	if (!s) {
		ret = refuse(e, l, peer, RBLK_S_NO_RESOURCES, "out of memory");
		goto out_unlock;
	}
	memset(s, 0, sizeof(*s));
	s->exp = e;
	__atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
	s->id = next_session_id++;
	memcpy(s->host, l->host, sizeof(s->host));
	snprintf(s->peer, sizeof(s->peer), "%s", peer ? peer : "?");
	s->queue_id = l->queue_id;
	s->reactor = r;
	s->reactor_id = reactor_id;
	s->size = __atomic_load_n(&e->size, __ATOMIC_ACQUIRE);
	s->started = (uint64_t)time(NULL);
	s->refs = 1;
	s->next = e->sessions;
	e->sessions = s;
	e->n_sessions++;
	e->logins++;
	*sp = s;
	ret = RBLK_S_OK;
out_unlock:
	/* A refusal carries no nonce and no proof. */
	if (ret != RBLK_S_OK && ret != RBLK_S_AUTH_REQUIRED)
		memset(auth_out, 0, RBLK_NONCE_LEN);
	pthread_mutex_unlock(&reg_lock);
	return ret;
}

int tgt_acl_discover(const char *host, const struct sockaddr *peer_sa,
		     const char *proven_volume,
		     struct rblk_discover_entry *entries, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&reg_lock);
	for (struct tgt_export *e = reg_head; e && n < max; e = e->next) {
		if (!tgt_acl_host_allowed(e->acl, e->n_hosts, e->any_host, host,
					  peer_sa))
			continue;
		if (e->secret && (!proven_volume || strcmp(e->name, proven_volume)))
			continue;
		memset(&entries[n], 0, sizeof(entries[n]));
		snprintf(entries[n].volume, sizeof(entries[n].volume), "%s", e->name);
		entries[n].size = __atomic_load_n(&e->size, __ATOMIC_ACQUIRE);
		entries[n].vol_flags = e->vol->flags;
		entries[n].block_size = e->vol->block_size;
		n++;
	}
	pthread_mutex_unlock(&reg_lock);
	return (int)n;
}

/* ---- sessions ------------------------------------------------------------ */

/* Reactor thread of s (s->reactor, or none in tests). */
static void session_put(struct tgt_session *s)
{
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		struct tgt_export *e = s->exp;
		struct tgt_reactor *r = s->reactor;

		free(s);
		export_put_reactor(e, r);
	}
}

void tgt_session_set_kick(struct tgt_session *s, void (*kick)(void *arg),
			  void *arg)
{
	pthread_mutex_lock(&reg_lock);
	s->kick = kick;
	s->kick_arg = arg;
	pthread_mutex_unlock(&reg_lock);
}

/* Reactor thread: the admin asked this session's connection to go. */
static void kick_work(struct tgt_reactor *r, struct tgt_work *w)
{
	struct tgt_session *s = (struct tgt_session *)
		((char *)w - offsetof(struct tgt_session, kick_work));
	void (*kick)(void *) = NULL;
	void *arg = NULL;

	(void)r;
	pthread_mutex_lock(&reg_lock);
	/* Cleared by tgt_session_close when the connection already went. */
	if (s->kick) {
		kick = s->kick;
		arg = s->kick_arg;
	}
	pthread_mutex_unlock(&reg_lock);
	if (kick) {
		rblk_info("volume %s: disconnecting session %llu (host %s, peer %s): volume deleted",
			  s->exp->name, (unsigned long long)s->id, s->host, s->peer);
		kick(arg);
	}
	session_put(s);
}

void tgt_session_close(struct tgt_session *s)
{
	struct tgt_export *e = s->exp;

	pthread_mutex_lock(&reg_lock);
	for (struct tgt_session **pp = &e->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			e->n_sessions--;
			break;
		}
	}
	s->kick = NULL;
	s->kick_arg = NULL;
	pthread_mutex_unlock(&reg_lock);
	session_put(s);
}

/* ---- admin operations ---------------------------------------------------- */

int tgt_export_remove(const char *name, bool force)
{
	struct tgt_export *e, **pp;

	pthread_mutex_lock(&reg_lock);
	for (pp = &reg_head; *pp && strcmp((*pp)->name, name); pp = &(*pp)->next)
		;
	e = *pp;
	if (!e) {
		pthread_mutex_unlock(&reg_lock);
		return -ENOENT;
	}
	if (e->n_sessions && !force) {
		pthread_mutex_unlock(&reg_lock);
		return -EBUSY;
	}
	*pp = e->next;
	e->next = NULL;
	__atomic_store_n(&e->listed, false, __ATOMIC_RELEASE);
	for (struct tgt_session *s = e->sessions; s; s = s->next) {
		if (s->kick_posted || !s->reactor)
			continue;
		s->kick_posted = true;
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_ACQ_REL);
		s->kick_work.fn = kick_work;
		tgt_reactor_post_work(s->reactor, &s->kick_work);
	}
	pthread_mutex_unlock(&reg_lock);
	tgt_export_put(e);
	return 0;
}

int tgt_export_set_hosts(const char *name, char *const *hosts, unsigned n,
			 bool any_host)
{
	struct tgt_acl_entry *acl, *old_acl;
	struct tgt_export *e;
	char **copy, **old;
	unsigned old_n;
	int ret;

	ret = dup_hosts(hosts, n, &copy, &acl);
	if (ret)
		return ret;
	pthread_mutex_lock(&reg_lock);
	e = tgt_export_find_locked(name);
	if (!e) {
		pthread_mutex_unlock(&reg_lock);
		free_hosts(copy, n);
		free(acl);
		return -ENOENT;
	}
	old = e->hosts;
	old_acl = e->acl;
	old_n = e->n_hosts;
	e->hosts = copy;
	e->acl = acl;
	e->n_hosts = n;
	e->any_host = any_host;
	pthread_mutex_unlock(&reg_lock);
	free_hosts(old, old_n);
	free(old_acl);
	return 0;
}

int tgt_export_set_secret(const char *name, const struct rblk_secret *secret)
{
	struct rblk_secret *copy = NULL, *old;
	struct tgt_export *e;

	if (secret) {
		copy = malloc(sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		*copy = *secret;
	}
	pthread_mutex_lock(&reg_lock);
	e = tgt_export_find_locked(name);
	if (!e) {
		pthread_mutex_unlock(&reg_lock);
		if (copy) {
			rblk_auth_clear_secret(copy);
			free(copy);
		}
		return -ENOENT;
	}
	old = e->secret;
	e->secret = copy;
	/* A challenge issued under the old secret cannot succeed now. */
	tgt_export_secret_changed_locked(e);
	pthread_mutex_unlock(&reg_lock);
	if (old) {
		rblk_auth_clear_secret(old);
		free(old);
	}
	return 0;
}

int tgt_export_set_size(const char *name, uint64_t size)
{
	struct tgt_export *e;

	pthread_mutex_lock(&reg_lock);
	e = tgt_export_find_locked(name);
	if (!e) {
		pthread_mutex_unlock(&reg_lock);
		return -ENOENT;
	}
	__atomic_store_n(&e->vol->size, size, __ATOMIC_RELEASE);
	__atomic_store_n(&e->size, size, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

void tgt_export_grow_volume(struct tgt_volume *vol, uint64_t size)
{
	/* Before the lock: an export linked after this sees the new size
	 * (tgt_export_link_locked), one linked before is found below. */
	if (size <= __atomic_load_n(&vol->size, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&vol->size, size, __ATOMIC_RELEASE);
	pthread_mutex_lock(&reg_lock);
	for (struct tgt_export *e = reg_head; e; e = e->next)
		if (e->vol == vol && size > e->size)
			__atomic_store_n(&e->size, size, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&reg_lock);
}

void tgt_export_stats(const struct tgt_export *e, struct tgt_io_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < e->n_stats; i++)
		tgt_stats_sum(out, &e->stats[i]);
}
