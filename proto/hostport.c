// SPDX-License-Identifier: MIT
#include "hostport.h"

#include <errno.h>
#include <string.h>

/* Decimal 1..65535, nothing else (no sign, no space, no 0x). */
static int parse_port(const char *s, unsigned *port)
{
	unsigned v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > 65535)
			return -EINVAL;
	}
	if (!v)
		return -EINVAL;
	*port = v;
	return 0;
}

int rblk_split_hostport(const char *s, char *host, size_t hostlen,
			unsigned *port)
{
	const char *hs = s, *he, *ps = NULL;

	*port = 0;
	if (*s == '[') {
		he = strchr(s, ']');
		if (!he)
			return -EINVAL;
		hs = s + 1;
		if (he[1] == ':')
			ps = he + 2;
		else if (he[1])
			return -EINVAL;
	} else {
		he = strrchr(s, ':');
		if (he && memchr(s, ':', he - s))
			he = NULL;	/* a bare IPv6 address: no port */
		if (he)
			ps = he + 1;
		else
			he = s + strlen(s);
	}
	if (he == hs || (size_t)(he - hs) >= hostlen)
		return -EINVAL;
	if (ps && parse_port(ps, port))
		return -EINVAL;
	memcpy(host, hs, he - hs);
	host[he - hs] = '\0';
	return 0;
}
