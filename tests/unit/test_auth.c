// SPDX-License-Identifier: MIT
/* Mutual HMAC-SHA-256 LOGIN challenge/response helpers (proto/auth.c). */
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
#include "helpers.h"

static const char key32[] = "0123456789abcdef0123456789abcdef";

static void set_key(struct rblk_secret *s, const char *k)
{
	memset(s, 0, sizeof(*s));
	s->len = strlen(k);
	memcpy(s->key, k, s->len);
}

static void nonce_seq(uint8_t *n, uint8_t first)
{
	for (int i = 0; i < RBLK_NONCE_LEN; i++)
		n[i] = (uint8_t)(first + i);
}

/* A 64-byte wire field: name, then zero padding (as the encoder sends). */
static const char *field(const char *name)
{
	static char f[4][RBLK_NAME_MAX];
	static unsigned next;
	char *p = f[next++ % 4];

	memset(p, 0, RBLK_NAME_MAX);
	memcpy(p, name, strlen(name));
	return p;
}

/* Reference values computed independently (Python hmac over
 * label || nonces || 64-byte volume field || 64-byte host field). */
static void test_mac_known_vectors(void **state)
{
	static const uint8_t want_ini[RBLK_MAC_LEN] = {
		0x66, 0xbb, 0x4f, 0xba, 0x43, 0x1a, 0x91, 0x34,
		0x46, 0x82, 0x6a, 0x25, 0x8d, 0x51, 0x92, 0x40,
		0x11, 0x0b, 0xe6, 0xee, 0x21, 0x42, 0xde, 0x5d,
		0x17, 0x61, 0xb2, 0x69, 0x35, 0xfd, 0x73, 0xe4,
	};
	static const uint8_t want_tgt[RBLK_MAC_LEN] = {
		0x29, 0xc8, 0xcc, 0x19, 0xe2, 0xb7, 0x45, 0xba,
		0x3c, 0xce, 0x68, 0xb9, 0x65, 0xb4, 0x58, 0xc6,
		0x2a, 0x6f, 0x7a, 0x41, 0x14, 0x70, 0x75, 0x49,
		0xb9, 0xc2, 0x0b, 0xc2, 0x0a, 0x77, 0xdb, 0xdd,
	};
	struct rblk_secret s;
	uint8_t nt[RBLK_NONCE_LEN], ni[RBLK_NONCE_LEN], mac[RBLK_MAC_LEN];
	const char *v = field("vol0"), *h = field("client-1");

	set_key(&s, key32);
	nonce_seq(nt, 0);
	nonce_seq(ni, 32);
	assert_int_equal(rblk_auth_mac(&s, RBLK_AUTH_INITIATOR, nt, ni, v, h, mac), 0);
	assert_memory_equal(mac, want_ini, RBLK_MAC_LEN);
	assert_int_equal(rblk_auth_verify(&s, RBLK_AUTH_INITIATOR, nt, ni, v, h, want_ini), 0);
	assert_int_equal(rblk_auth_mac(&s, RBLK_AUTH_TARGET, nt, ni, v, h, mac), 0);
	assert_memory_equal(mac, want_tgt, RBLK_MAC_LEN);
	assert_int_equal(rblk_auth_verify(&s, RBLK_AUTH_TARGET, nt, ni, v, h, want_tgt), 0);
	/* The roles never accept each other's MAC (no reflection). */
	assert_int_equal(rblk_auth_verify(&s, RBLK_AUTH_TARGET, nt, ni, v, h, want_ini), -EACCES);
	assert_int_equal(rblk_auth_verify(&s, RBLK_AUTH_INITIATOR, nt, ni, v, h, want_tgt), -EACCES);
	/* Swapping the nonces does not turn one into the other either. */
	assert_int_equal(rblk_auth_verify(&s, RBLK_AUTH_TARGET, ni, nt, v, h, want_ini), -EACCES);
}

/* Every input changes the MAC: key, nonces, volume, host, one bit of the
 * MAC, and bytes of a name field after its NUL (the raw field is hashed). */
static void test_verify_rejects_any_change(void **state)
{
	struct rblk_secret s, other;
	uint8_t nt[RBLK_NONCE_LEN], ni[RBLK_NONCE_LEN], mac[RBLK_MAC_LEN];
	const enum rblk_auth_role R = RBLK_AUTH_INITIATOR;
	const char *v0 = field("vol0"), *h1 = field("h1");
	char padded[RBLK_NAME_MAX];

	set_key(&s, key32);
	set_key(&other, "0123456789abcdef0123456789abcdeF");
	nonce_seq(nt, 0);
	nonce_seq(ni, 100);
	assert_int_equal(rblk_auth_mac(&s, R, nt, ni, v0, h1, mac), 0);
	assert_int_equal(rblk_auth_verify(&s, R, nt, ni, v0, h1, mac), 0);
	assert_int_equal(rblk_auth_verify(&other, R, nt, ni, v0, h1, mac), -EACCES);
	assert_int_equal(rblk_auth_verify(&s, R, nt, ni, field("vol1"), h1, mac), -EACCES);
	assert_int_equal(rblk_auth_verify(&s, R, nt, ni, v0, field("h2"), mac), -EACCES);
	memcpy(padded, v0, sizeof(padded));
	padded[RBLK_NAME_MAX - 1] = 'x';	/* same string, other field */
	assert_int_equal(rblk_auth_verify(&s, R, nt, ni, padded, h1, mac), -EACCES);
	nt[31] ^= 1;
	assert_int_equal(rblk_auth_verify(&s, R, nt, ni, v0, h1, mac), -EACCES);
	nt[31] ^= 1;
	ni[0] ^= 1;
	assert_int_equal(rblk_auth_verify(&s, R, nt, ni, v0, h1, mac), -EACCES);
	ni[0] ^= 1;
	mac[0] ^= 0x80;
	assert_int_equal(rblk_auth_verify(&s, R, nt, ni, v0, h1, mac), -EACCES);
	/* An all-zero MAC (a client that did not answer) never matches. */
	memset(mac, 0, sizeof(mac));
	assert_int_equal(rblk_auth_verify(&s, R, nt, ni, v0, h1, mac), -EACCES);
}

/* A secret outside 16..1024 bytes is never used, even if one got built. */
static void test_short_secret_unusable(void **state)
{
	struct rblk_secret s;
	uint8_t n[RBLK_NONCE_LEN] = { 0 }, mac[RBLK_MAC_LEN];

	set_key(&s, "0123456789abcde");		/* 15 bytes */
	assert_int_equal(rblk_auth_mac(&s, RBLK_AUTH_INITIATOR, n, n, field("v"),
				       field("h"), mac), -EINVAL);
	assert_int_equal(rblk_auth_verify(&s, RBLK_AUTH_TARGET, n, n, field("v"),
					  field("h"), mac), -EACCES);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rblk_auth_mac(&s, RBLK_AUTH_INITIATOR, n, n, field("v"),
				       field("h"), mac), -EINVAL);
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

	/* Too short (after newline strip: 15 bytes) and too long. */
	p = write_file("short", "0123456789abcde\n\n", 0600);
	assert_int_equal(rblk_auth_load_secret(p, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "16..1024 bytes"));
	assert_int_equal(s.len, 0);
	p = write_file("short16", "0123456789abcdef\n", 0600);
	assert_int_equal(rblk_auth_load_secret(p, &s, err, sizeof(err)), 0);
	assert_int_equal(s.len, 16);
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
	const char *names[] = { "good", "ro", "open", "grp", "short", "short16", "big", "link" };
	for (unsigned i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(lnk, sizeof(lnk), "%s/%s", tmpdir, names[i]);
		unlink(lnk);
	}
	rmdir(tmpdir);
}

static void test_generate_secret(void **state)
{
	char dir[] = "/tmp/rblk-gen-XXXXXX", a[64], b[64], err[256];
	uint8_t before[RBLK_SECRET_GEN_LEN];
	struct rblk_secret sa, sb;
	struct stat st;
	mode_t old;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.key", dir);
	snprintf(b, sizeof(b), "%s/b.key", dir);
	old = umask(0777);	/* even a hostile umask gives exactly 0600 */
	assert_int_equal(rblk_auth_generate_secret(a, err, sizeof(err)), 0);
	umask(old);
	assert_int_equal(stat(a, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, RBLK_SECRET_GEN_LEN);
	/* Loadable as is: all 32 bytes count (no trailing newline). */
	assert_int_equal(rblk_auth_load_secret(a, &sa, err, sizeof(err)), 0);
	assert_int_equal(sa.len, RBLK_SECRET_GEN_LEN);
	/* Never over an existing file; the old secret stays as it was. */
	f = fopen(a, "r");
	assert_non_null(f);
	assert_int_equal(fread(before, 1, sizeof(before), f), sizeof(before));
	fclose(f);
	assert_int_equal(rblk_auth_generate_secret(a, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "never overwritten"));
	assert_memory_equal(before, sa.key, sizeof(before));
	/* Two secrets differ. */
	assert_int_equal(rblk_auth_generate_secret(b, err, sizeof(err)), 0);
	assert_int_equal(rblk_auth_load_secret(b, &sb, err, sizeof(err)), 0);
	assert_memory_not_equal(sa.key, sb.key, RBLK_SECRET_GEN_LEN);
	/* A directory that does not exist: error names the file. */
	snprintf(b, sizeof(b), "%s/no/c.key", dir);
	assert_int_equal(rblk_auth_generate_secret(b, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, b));
	snprintf(b, sizeof(b), "%s/b.key", dir);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mac_known_vectors),
		cmocka_unit_test(test_verify_rejects_any_change),
		cmocka_unit_test(test_short_secret_unusable),
		cmocka_unit_test(test_nonce_is_fresh),
		cmocka_unit_test(test_load_secret_rules),
		cmocka_unit_test(test_generate_secret),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
