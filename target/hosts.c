// SPDX-License-Identifier: MIT
/*
 * Per-host connection counts and pool shares (hosts.h).  A small chained
 * hash of the addresses that have connections now; an entry goes when its
 * last connection does, so a scan of the address space costs nothing once
 * the connections are closed.
 */
#include "hosts.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HOST_BUCKETS	256

struct tgt_host {
	struct tgt_hosts *t;
	struct tgt_host *next;		/* bucket chain */
	uint8_t key[17];		/* family byte + address */
	unsigned conns;			/* under t->lock */
	size_t buf[];			/* per reactor, that reactor only */
};

struct tgt_hosts {
	pthread_mutex_t lock;
	unsigned nreactors;
	unsigned max_total, max_per_host;
	unsigned total;
	struct tgt_host *bucket[HOST_BUCKETS];
};

int tgt_hosts_create(struct tgt_hosts **hp, unsigned nreactors,
		     unsigned max_total, unsigned max_per_host)
{
	struct tgt_hosts *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	t->nreactors = nreactors ? nreactors : 1;
	t->max_total = max_total;
	t->max_per_host = max_per_host;
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
	for (h = t->bucket[b]; h; h = h->next)
		if (!memcmp(h->key, key, sizeof(key)))
			break;
	if (t->total >= t->max_total) {
		ret = -ENFILE;
		goto out_unlock;
	}
	if (h && h->conns >= t->max_per_host) {
		ret = -EMFILE;
		goto out_unlock;
	}
	if (!h) {
		h = calloc(1, sizeof(*h) + t->nreactors * sizeof(h->buf[0]));
		if (!h) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		h->t = t;
		memcpy(h->key, key, sizeof(key));
		h->next = t->bucket[b];
		t->bucket[b] = h;
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
	struct tgt_host **pp;

	if (!h)
		return;
	t = h->t;
	pthread_mutex_lock(&t->lock);
	t->total--;
	if (--h->conns == 0) {
		for (pp = &t->bucket[hash_key(h->key)]; *pp; pp = &(*pp)->next) {
			if (*pp == h) {
				*pp = h->next;
				break;
			}
		}
		free(h);
	}
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
