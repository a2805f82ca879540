// SPDX-License-Identifier: MIT
/*
 * Volume identities (volume_id.h).
 */
#include "volume_id.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

void tgt_uuid_from_key(uint8_t uuid[RBLK_UUID_LEN], const char *key)
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256((const unsigned char *)key, strlen(key), md);
	md[6] = (md[6] & 0x0f) | 0x80;
	md[8] = (md[8] & 0x3f) | 0x80;
	memcpy(uuid, md, RBLK_UUID_LEN);
}

/* /etc/machine-id, or "unknown" on a machine without one (a container):
 * the UUID is then only as unique as the path. */
static void machine_id(char *out, size_t len)
{
	FILE *f = fopen("/etc/machine-id", "re");

	snprintf(out, len, "unknown");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	if (!*out)
		snprintf(out, len, "unknown");
	fclose(f);
}

void tgt_uuid_local(uint8_t uuid[RBLK_UUID_LEN], const char *what)
{
	char mid[64], abs[PATH_MAX], key[PATH_MAX + 96];

	machine_id(mid, sizeof(mid));
	if (what[0] == '/' && realpath(what, abs))
		what = abs;
	snprintf(key, sizeof(key), "local/%s/%s", mid, what);
	tgt_uuid_from_key(uuid, key);
}
