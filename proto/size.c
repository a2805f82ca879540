// SPDX-License-Identifier: MIT
/* Size strings: see size.h. */
#include "size.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char units[] = "KMGTP";

int rblk_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const char *p = s, *u;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	/* Own digit loop: strtoull accepts leading space, signs and "0x". */
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*p) {
		char c = *p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p;

		u = strchr(units, c);
		if (!u || !c)
			return -EINVAL;
		shift = 10 * (unsigned)(u - units + 1);
		p++;
		if (!strcmp(p, "B") || !strcmp(p, "b"))
			return -EDOM;
		if (!strcmp(p, "iB"))
			p += 2;
		if (*p)
			return -EINVAL;
		if (v > (UINT64_MAX >> shift))
			return -ERANGE;
	}
	*out = v << shift;
	return 0;
}

const char *rblk_size_error(int err)
{
	switch (err) {
	case -EDOM:
		return "KB, MB, GB, TB and PB are not taken (decimal or binary? a size is "
		       "never a guess): write K, M, G, T (or KiB, MiB, GiB, TiB), 1024-based";
	case -ERANGE:
		return "too large";
	default:
		return "want a number with an optional K, M, G, T or P suffix "
		       "(1024-based, also KiB..PiB), like 10G";
	}
}

char *rblk_format_size(uint64_t v, char *buf, size_t len)
{
	int u = -1;

	while (u < 4 && v && !(v & 1023)) {
		v >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, units[u]);
	return buf;
}

char *rblk_human_size(uint64_t v, char *buf, size_t len)
{
	int u = -1;
	uint64_t div = 1;

	while (u < 4 && v / div >= 1024) {
		div <<= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64 "B", v);
	else
		snprintf(buf, len, "%.1f%c", (double)v / (double)div, units[u]);
	return buf;
}
