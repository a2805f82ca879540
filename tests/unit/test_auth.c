// SPDX-License-Identifier: MIT
/* HMAC-SHA-256 LOGIN challenge/response helpers (proto/auth.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "auth.h"

static const char key32[] = "0123456789abcdef0123456789abcdef";

static void set_key(struct rblk_secret *s, const char *k)
{
	memset(s, 0, sizeof(*s));
	s->len = strlen(k);
	memcpy(s->key, k, s->len);
}

static void nonce_seq(uint8_t *n)
{
	for (int i = 0; i < RBLK_NONCE_LEN; i++)
		n[i] = (uint8_t)i;
}

/* Reference value computed independently (Python hmac over the same
 * nonce || 64-byte volume field || 64-byte host field). */
static void test_mac_known_vector(void **state)
{
	static const uint8_t want[RBLK_MAC_LEN] = {
		0x26, 0xa9, 0x50, 0xdc, 0xea, 0xab, 0x73, 0x14,
		0x16, 0x64, 0x00, 0x80, 0xe7, 0x65, 0x8d, 0x40,
		0xf7, 0xde, 0x29, 0x01, 0xd1, 0xd4, 0x8c, 0xf2,
		0xa3, 0xf0, 0x44, 0x45, 0x5b, 0xda, 0xa1, 0x5c,
	};
	struct rblk_secret s;
	uint8_t nonce[RBLK_NONCE_LEN], mac[RBLK_MAC_LEN];

	set_key(&s, key32);
	nonce_seq(nonce);
	assert_int_equal(rblk_auth_mac(&s, nonce, "vol0", "client-1", mac), 0);
	assert_memory_equal(mac, want, RBLK_MAC_LEN);
	assert_int_equal(rblk_auth_verify(&s, nonce, "vol0", "client-1", want), 0);
}

/* Every input changes the MAC: key, nonce, volume, host, one bit of the MAC. */
static void test_verify_rejects_any_change(void **state)
{
	struct rblk_secret s, other;
	uint8_t nonce[RBLK_NONCE_LEN], mac[RBLK_MAC_LEN];

	set_key(&s, key32);
	set_key(&other, "0123456789abcdef0123456789abcdeF");
	nonce_seq(nonce);
	assert_int_equal(rblk_auth_mac(&s, nonce, "vol0", "h1", mac), 0);
	assert_int_equal(rblk_auth_verify(&s, nonce, "vol0", "h1", mac), 0);
	assert_int_equal(rblk_auth_verify(&other, nonce, "vol0", "h1", mac), -EACCES);
	assert_int_equal(rblk_auth_verify(&s, nonce, "vol1", "h1", mac), -EACCES);
	assert_int_equal(rblk_auth_verify(&s, nonce, "vol0", "h2", mac), -EACCES);
	nonce[31] ^= 1;
	assert_int_equal(rblk_auth_verify(&s, nonce, "vol0", "h1", mac), -EACCES);
	nonce[31] ^= 1;
	mac[0] ^= 0x80;
	assert_int_equal(rblk_auth_verify(&s, nonce, "vol0", "h1", mac), -EACCES);
	/* An all-zero MAC (a client that did not answer) never matches. */
	memset(mac, 0, sizeof(mac));
	assert_int_equal(rblk_auth_verify(&s, nonce, "vol0", "h1", mac), -EACCES);
}

static void test_names_too_long_and_empty_secret(void **state)
{
	struct rblk_secret s;
	uint8_t nonce[RBLK_NONCE_LEN] = { 0 }, mac[RBLK_MAC_LEN];
	char longname[RBLK_NAME_MAX + 1];

	memset(longname, 'a', RBLK_NAME_MAX);
	longname[RBLK_NAME_MAX] = '\0';
	set_key(&s, key32);
	assert_int_equal(rblk_auth_mac(&s, nonce, longname, "h", mac), -EINVAL);
	assert_int_equal(rblk_auth_mac(&s, nonce, "v", longname, mac), -EINVAL);
	assert_int_equal(rblk_auth_verify(&s, nonce, longname, "h", mac), -EACCES);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rblk_auth_mac(&s, nonce, "v", "h", mac), -EINVAL);
}

static void test_nonce_is_fresh(void **state)
{
	uint8_t a[RBLK_NONCE_LEN], b[RBLK_NONCE_LEN];

	assert_int_equal(rblk_auth_nonce(a), 0);
	assert_int_equal(rblk_auth_nonce(b), 0);
	assert_memory_not_equal(a, b, RBLK_NONCE_LEN);
}

static char tmpdir[64];

static char *write_file(const char *name, const char *text, mode_t mode)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static void test_load_secret_rules(void **state)
{
	struct rblk_secret s;
	char err[256], *p, lnk[160];
	char big[RBLK_SECRET_MAX + 10];

	strcpy(tmpdir, "/tmp/rblk-auth-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));

	/* Good: 0600, trailing newline dropped. */
	p = write_file("good", "0123456789abcdef0123\n", 0600);
	assert_int_equal(rblk_auth_load_secret(p, &s, err, sizeof(err)), 0);
	assert_int_equal(s.len, 20);
	assert_memory_equal(s.key, "0123456789abcdef0123", 20);
	rblk_auth_clear_secret(&s);
	assert_int_equal(s.len, 0);

	/* 0400 is fine too. */
	p = write_file("ro", "0123456789abcdef0123", 0400);
	assert_int_equal(rblk_auth_load_secret(p, &s, err, sizeof(err)), 0);

	/* Group/other bits: refused, and the message says why. */
	p = write_file("open", "0123456789abcdef0123", 0644);
	assert_int_equal(rblk_auth_load_secret(p, &s, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "0644"));
	assert_non_null(strstr(err, "0600"));
	assert_int_equal(s.len, 0);
	p = write_file("grp", "0123456789abcdef0123", 0640);
	assert_int_equal(rblk_auth_load_secret(p, &s, err, sizeof(err)), -EPERM);

	/* Too short (after newline strip) and too long. */
	p = write_file("short", "short\n\n", 0600);
	assert_int_equal(rblk_auth_load_secret(p, &s, err, sizeof(err)), -EINVAL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	p = write_file("big", big, 0600);
	assert_int_equal(rblk_auth_load_secret(p, &s, err, sizeof(err)), -EINVAL);

	/* Missing file, a directory, a symlink. */
	snprintf(lnk, sizeof(lnk), "%s/none", tmpdir);
	assert_int_equal(rblk_auth_load_secret(lnk, &s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, lnk));
	assert_int_equal(rblk_auth_load_secret(tmpdir, &s, err, sizeof(err)), -EINVAL);
	snprintf(lnk, sizeof(lnk), "%s/link", tmpdir);
	assert_int_equal(symlink("good", lnk), 0);
	assert_int_equal(rblk_auth_load_secret(lnk, &s, err, sizeof(err)), -ELOOP);

	/* Clean up. */
	const char *names[] = { "good", "ro", "open", "grp", "short", "big", "link" };
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(lnk, sizeof(lnk), "%s/%s", tmpdir, names[i]);
		unlink(lnk);
	}
	rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mac_known_vector),
		cmocka_unit_test(test_verify_rejects_any_change),
		cmocka_unit_test(test_names_too_long_and_empty_secret),
		cmocka_unit_test(test_nonce_is_fresh),
		cmocka_unit_test(test_load_secret_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
