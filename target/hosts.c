// SPDX-License-Identifier: MIT
/*
 * Per-host connection counts, pre-login counts and pool shares (hosts.h).
 * A small chained hash of the addresses that have connections now; an
 * entry goes when its last connection does (neither counter above 0), so
 * a scan of the address space costs nothing once the connections are
 * closed, and the table never holds more entries than there are
 * connections.
 */
#include "hosts.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limit_counts.h"
#include "log.h"

#define HOST_BUCKETS	256

struct tgt_host {
	struct tgt_hosts *t;
	struct tgt_host *next;		/* bucket chain */
	uint8_t key[17];		/* family byte + address */
	unsigned conns;			/* open connections, under t->lock */
	unsigned prelogin;		/* of those not logged in yet, under t->lock */
	size_t buf[];			/* per reactor, that reactor only */
};

struct tgt_hosts {
	pthread_mutex_t lock;
	unsigned nreactors;
	unsigned max_total, max_per_host;
	unsigned max_prelogin, max_prelogin_per_host;	/* 0 = no cap */
	unsigned total, prelogin_total;
	struct tgt_host *bucket[HOST_BUCKETS];
};

/* A client can make these at will: a few lines a second, the rest counted. */
static struct rblk_ratelimit refuse_rl = RBLK_RATELIMIT_INIT(1000, 5);

int tgt_hosts_create(struct tgt_hosts **hp, unsigned nreactors,
		     unsigned max_total, unsigned max_per_host,
		     unsigned max_prelogin, unsigned max_prelogin_per_host)
{
	struct tgt_hosts *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	t->nreactors = nreactors ? nreactors : 1;
	t->max_total = max_total;
	t->max_per_host = max_per_host;
	t->max_prelogin = max_prelogin;
	t->max_prelogin_per_host = max_prelogin_per_host;
	*hp = t;
	return 0;
}

void tgt_hosts_destroy(struct tgt_hosts *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < HOST_BUCKETS; i++) {
		while (t->bucket[i]) {
			struct tgt_host *h = t->bucket[i];

			t->bucket[i] = h->next;
			free(h);
		}
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* family byte + address bytes; v4-mapped v6 is the v4 address. */
static void make_key(const struct sockaddr *sa, uint8_t key[17])
{
	memset(key, 0, 17);
	if (sa && sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			key[0] = 4;
			memcpy(key + 1, a->s6_addr + 12, 4);
		} else {
			key[0] = 6;
			memcpy(key + 1, a->s6_addr, 16);
		}
	}
}

static unsigned hash_key(const uint8_t key[17])
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (unsigned i = 0; i < 17; i++)
		h = (h ^ key[i]) * 16777619u;
	return h % HOST_BUCKETS;
}

static const char *key_str(const uint8_t key[17], char *buf, size_t len)
{
	int af = key[0] == 4 ? AF_INET : key[0] == 6 ? AF_INET6 : AF_UNSPEC;

	if (af == AF_UNSPEC || !inet_ntop(af, key + 1, buf, (socklen_t)len))
		snprintf(buf, len, "an unknown address");
	return buf;
}

/* Under t->lock: the entry of key (bucket b), NULL if none. */
static struct tgt_host *find_locked(struct tgt_hosts *t, const uint8_t key[17],
				    unsigned b)
{
	struct tgt_host *h;

	for (h = t->bucket[b]; h; h = h->next)
		if (!memcmp(h->key, key, sizeof(h->key)))
			break;
	return h;
}

/* Under t->lock: a new entry for key in bucket b; NULL if out of memory. */
static struct tgt_host *add_locked(struct tgt_hosts *t, const uint8_t key[17],
				   unsigned b)
{
	struct tgt_host *h = calloc(1, sizeof(*h) + t->nreactors * sizeof(h->buf[0]));

	if (!h)
		return NULL;
	h->t = t;
	memcpy(h->key, key, sizeof(h->key));
	h->next = t->bucket[b];
	t->bucket[b] = h;
	return h;
}

/* Under t->lock: frees h once nothing counts it any more. */
static void maybe_free_locked(struct tgt_hosts *t, struct tgt_host *h)
{
	struct tgt_host **pp;

	if (h->conns || h->prelogin)
		return;
	for (pp = &t->bucket[hash_key(h->key)]; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	free(h);
}

int tgt_host_get(struct tgt_hosts *t, const struct sockaddr *sa,
		 struct tgt_host **hp)
{
	uint8_t key[17];
	unsigned b;
	struct tgt_host *h;
	int ret = 0;

	make_key(sa, key);
	b = hash_key(key);
	pthread_mutex_lock(&t->lock);
	h = find_locked(t, key, b);
	if (t->total >= t->max_total) {
		ret = -ENFILE;
		goto out_unlock;
	}
	if (h && h->conns >= t->max_per_host) {
		ret = -EMFILE;
		goto out_unlock;
	}
	if (!h && !(h = add_locked(t, key, b))) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	h->conns++;
	t->total++;
	*hp = h;
out_unlock:
	pthread_mutex_unlock(&t->lock);
	return ret;
}

void tgt_host_put(struct tgt_host *h)
{
	struct tgt_hosts *t;

	if (!h)
		return;
	t = h->t;
	pthread_mutex_lock(&t->lock);
	t->total--;
	h->conns--;
	maybe_free_locked(t, h);
	pthread_mutex_unlock(&t->lock);
}

size_t *tgt_host_buf_bytes(struct tgt_host *h, unsigned rid)
{
	return &h->buf[rid < h->t->nreactors ? rid : 0];
}

unsigned tgt_host_conns(const struct tgt_host *h)
{
	return h->conns;
}

int tgt_host_prelogin_get(struct tgt_hosts *t, const struct sockaddr *sa,
			  const char *tp, const char *listener,
			  struct tgt_host **hp)
{
	struct tgt_host *h;
	uint8_t key[17];
	unsigned b, total, count = 0;
	char ip[INET6_ADDRSTRLEN];

	*hp = NULL;
	if (!t)
		return 0;
	make_key(sa, key);
	b = hash_key(key);
	pthread_mutex_lock(&t->lock);
	h = find_locked(t, key, b);
	if (h)
		count = h->prelogin;
	total = t->prelogin_total;
	if ((t->max_prelogin && total >= t->max_prelogin) ||
	    (t->max_prelogin_per_host && count >= t->max_prelogin_per_host)) {
		pthread_mutex_unlock(&t->lock);
		tgt_limit_count(t->max_prelogin_per_host && count >= t->max_prelogin_per_host ?
				TGT_LIM_REFUSED_PRELOGIN_HOST : TGT_LIM_REFUSED_PRELOGIN);
		if (t->max_prelogin_per_host && count >= t->max_prelogin_per_host)
			rblk_warn_rl(&refuse_rl, "%s %s: refusing a connection from %s: %u of its connections have not logged in yet (max_prelogin_per_host = %u)",
				     tp, listener, key_str(key, ip, sizeof(ip)),
				     count, t->max_prelogin_per_host);
		else
			rblk_warn_rl(&refuse_rl, "%s %s: refusing a connection from %s: %u connections have not logged in yet (max_prelogin = %u)",
				     tp, listener, key_str(key, ip, sizeof(ip)),
				     total, t->max_prelogin);
		return -EUSERS;
	}
	if (!h && !(h = add_locked(t, key, b))) {
		pthread_mutex_unlock(&t->lock);
		return -ENOMEM;
	}
	h->prelogin++;
	t->prelogin_total++;
	pthread_mutex_unlock(&t->lock);
	*hp = h;
	return 0;
}

void tgt_host_prelogin_put(struct tgt_host *h)
{
	struct tgt_hosts *t;

	if (!h)
		return;
	t = h->t;
	pthread_mutex_lock(&t->lock);
	t->prelogin_total--;
	h->prelogin--;
	maybe_free_locked(t, h);
	pthread_mutex_unlock(&t->lock);
}

unsigned tgt_hosts_prelogin(struct tgt_hosts *t)
{
	unsigned n;

	pthread_mutex_lock(&t->lock);
	n = t->prelogin_total;
	pthread_mutex_unlock(&t->lock);
	return n;
}
