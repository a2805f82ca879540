// SPDX-License-Identifier: MIT
/*
 * Pre-login connection caps (see prelogin.h): a chained hash of source
 * addresses under one mutex.  An entry exists only while it counts at
 * least one connection, so the table never holds more entries than there
 * are pre-login connections (at most max_total when that is set).
 */
#include "prelogin.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define NBUCKETS	256

struct tgt_prelogin_src {
	struct tgt_prelogin_src *next;
	uint8_t family;			/* AF_INET, AF_INET6, AF_UNSPEC */
	uint8_t addr[16];
	unsigned count;
};

struct tgt_prelogin {
	pthread_mutex_t lock;
	unsigned max_total, max_per_host;
	unsigned total;
	struct tgt_prelogin_src *bucket[NBUCKETS];
};

/* A client can make these at will: a few lines a second, the rest counted. */
static struct rblk_ratelimit refuse_rl = RBLK_RATELIMIT_INIT(1000, 5);

int tgt_prelogin_create(struct tgt_prelogin **pp, unsigned max_total,
			unsigned max_per_host)
{
	struct tgt_prelogin *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->max_total = max_total;
	p->max_per_host = max_per_host;
	*pp = p;
	return 0;
}

void tgt_prelogin_destroy(struct tgt_prelogin *p)
{
	if (!p)
		return;
	/* Connections abandoned by an aborted stop may still count. */
	for (unsigned i = 0; i < NBUCKETS; i++) {
		while (p->bucket[i]) {
			struct tgt_prelogin_src *s = p->bucket[i];

			p->bucket[i] = s->next;
			free(s);
		}
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* The key of sa: family and address bytes (IPv4-mapped IPv6 as IPv4). */
static void key_of(const struct sockaddr *sa, uint8_t *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	*family = AF_UNSPEC;
	if (sa && sa->sa_family == AF_INET) {
		*family = AF_INET;
		memcpy(addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			*family = AF_INET;
			memcpy(addr, &a->s6_addr[12], 4);
		} else {
			*family = AF_INET6;
			memcpy(addr, a, 16);
		}
	}
}

static unsigned hash_of(uint8_t family, const uint8_t addr[16])
{
	uint32_t h = 2166136261u ^ family;	/* FNV-1a */

	for (unsigned i = 0; i < 16; i++)
		h = (h ^ addr[i]) * 16777619u;
	return h % NBUCKETS;
}

static const char *addr_str(uint8_t family, const uint8_t addr[16], char *buf,
			    size_t len)
{
	if (family == AF_UNSPEC || !inet_ntop(family, addr, buf, (socklen_t)len))
		snprintf(buf, len, "an unknown address");
	return buf;
}

int tgt_prelogin_admit(struct tgt_prelogin *p, const struct sockaddr *sa,
		       const char *tp, const char *listener,
		       struct tgt_prelogin_src **srcp)
{
	struct tgt_prelogin_src *s;
	uint8_t family, addr[16];
	unsigned b, total, count = 0;
	char ip[INET6_ADDRSTRLEN];

	key_of(sa, &family, addr);
	b = hash_of(family, addr);
	pthread_mutex_lock(&p->lock);
	for (s = p->bucket[b]; s; s = s->next)
		if (s->family == family && !memcmp(s->addr, addr, 16))
			break;
	if (s)
		count = s->count;
	total = p->total;
	if ((p->max_total && total >= p->max_total) ||
	    (p->max_per_host && count >= p->max_per_host)) {
		pthread_mutex_unlock(&p->lock);
		if (p->max_per_host && count >= p->max_per_host)
			rblk_warn_rl(&refuse_rl, "%s %s: refusing a connection from %s: %u of its connections have not logged in yet (max_prelogin_per_host = %u)",
				     tp, listener, addr_str(family, addr, ip, sizeof(ip)),
				     count, p->max_per_host);
		else
			rblk_warn_rl(&refuse_rl, "%s %s: refusing a connection from %s: %u connections have not logged in yet (max_prelogin = %u)",
				     tp, listener, addr_str(family, addr, ip, sizeof(ip)),
				     total, p->max_total);
		return -EUSERS;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s) {
			pthread_mutex_unlock(&p->lock);
			return -ENOMEM;
		}
		s->family = family;
		memcpy(s->addr, addr, 16);
		s->next = p->bucket[b];
		p->bucket[b] = s;
	}
	s->count++;
	p->total++;
	pthread_mutex_unlock(&p->lock);
	*srcp = s;
	return 0;
}

void tgt_prelogin_release(struct tgt_prelogin *p, struct tgt_prelogin_src *src)
{
	struct tgt_prelogin_src **pp;

	if (!p || !src)
		return;
	pthread_mutex_lock(&p->lock);
	p->total--;
	if (--src->count == 0) {
		for (pp = &p->bucket[hash_of(src->family, src->addr)]; *pp;
		     pp = &(*pp)->next) {
			if (*pp == src) {
				*pp = src->next;
				break;
			}
		}
		free(src);
	}
	pthread_mutex_unlock(&p->lock);
}

unsigned tgt_prelogin_count(struct tgt_prelogin *p)
{
	unsigned n;

	pthread_mutex_lock(&p->lock);
	n = p->total;
	pthread_mutex_unlock(&p->lock);
	return n;
}
