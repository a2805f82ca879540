// SPDX-License-Identifier: MIT
/* allow_hosts entries: names vs addresses, see acl_entry.h. */
#include "acl_entry.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only plain decimal digits: strtoul would take "+8", " 8" or "0x8". */
static int parse_prefix(const char *s, unsigned max, unsigned *out)
{
	unsigned v = 0;

	if (!*s || strlen(s) > 3)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static void mask_host_bits(uint8_t *addr, unsigned len, unsigned prefix)
{
	for (unsigned i = 0; i < len; i++) {
		unsigned bits = prefix > i * 8 ? prefix - i * 8 : 0;

		if (bits < 8)
			addr[i] &= (uint8_t)(0xff << (8 - bits));
	}
}

static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

int tgt_acl_entry_parse(const char *s, struct tgt_acl_entry *e,
			char *err, size_t errlen)
{
	char ip[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t iplen = slash ? (size_t)(slash - s) : strlen(s);
	int ret;

	memset(e, 0, sizeof(*e));
	if (iplen < sizeof(ip)) {
		memcpy(ip, s, iplen);
		ip[iplen] = '\0';
		if (inet_pton(AF_INET, ip, e->addr) == 1) {
			e->family = AF_INET;
			e->prefix = 32;
		} else if (inet_pton(AF_INET6, ip, e->addr) == 1) {
			e->family = AF_INET6;
			e->prefix = 128;
		}
	}
	if (e->family) {
		e->kind = TGT_ACL_ADDR;
		if (slash) {
			ret = parse_prefix(slash + 1, e->prefix, &e->prefix);
			if (ret) {
				if (err)
					snprintf(err, errlen, "'%s': prefix length must be 0..%u",
						 s, e->family == AF_INET ? 32 : 128);
				return ret;
			}
		}
		/* ::ffff:a.b.c.d/n is the IPv4 range a.b.c.d/(n-96): store it
		 * as IPv4 so it matches however the peer shows up. */
		if (e->family == AF_INET6 && e->prefix >= 96 &&
		    !memcmp(e->addr, v4mapped, sizeof(v4mapped))) {
			memmove(e->addr, e->addr + 12, 4);
			memset(e->addr + 4, 0, 12);
			e->family = AF_INET;
			e->prefix -= 96;
		}
		mask_host_bits(e->addr, e->family == AF_INET ? 4 : 16, e->prefix);
		return 0;
	}
	/* "10.0.0.010" or "fe80:1" would otherwise become names anyone can
	 * claim, while the admin meant an address: refuse what looks like
	 * one but is not. */
	if (slash || rblk_name_valid(s) || strchr(s, ':') ||
	    strspn(s, "0123456789.") == strlen(s)) {
		if (err)
			snprintf(err, errlen,
				 "'%s' is not a valid host name, address or CIDR range", s);
		return -EINVAL;
	}
	e->kind = TGT_ACL_NAME;
	snprintf(e->name, sizeof(e->name), "%s", s);
	return 0;
}

/* The peer as (family, address bytes), IPv4-mapped IPv6 folded to IPv4. */
static int peer_bytes(const struct sockaddr *sa, const uint8_t **addr)
{
	if (sa->sa_family == AF_INET) {
		*addr = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const uint8_t *a6 = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		if (!memcmp(a6, v4mapped, sizeof(v4mapped))) {
			*addr = a6 + 12;
			return AF_INET;
		}
		*addr = a6;
		return AF_INET6;
	}
	return 0;
}

bool tgt_acl_entry_match(const struct tgt_acl_entry *e, const char *host,
			 const struct sockaddr *peer)
{
	uint8_t a[16];
	const uint8_t *pa = NULL;
	unsigned len;

	if (e->kind == TGT_ACL_NAME)
		return host && !strcmp(e->name, host);
	if (!peer || peer_bytes(peer, &pa) != e->family)
		return false;
	len = e->family == AF_INET ? 4 : 16;
	memcpy(a, pa, len);
	mask_host_bits(a, len, e->prefix);
	return !memcmp(a, e->addr, len);
}
