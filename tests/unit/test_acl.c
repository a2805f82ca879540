// SPDX-License-Identifier: MIT
/*
 * Control-plane units without a network: the config keys of the control
 * plane (parse, refusals naming the line, round trip), the export
 * registry's LOGIN decisions (allow_hosts, HMAC challenge), DISCOVER
 * filtering, session refcounts across delete, and the atomic config save.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "export.h"
#include "acl_entry.h"
#include "admin.h"
#include "auth.h"
#include "config.h"
#include "helpers.h"

static const char good_cfg[] =
	"[target]\n"
	"listen_tcp = 127.0.0.1:4420\n"
	"admin_socket = /run/x/t.sock\n"
	"volume_dir = /srv/rblk\n"
	"\n"
	"[volume a]\n"
	"backend = null\n"
	"size = 1M\n"
	"allow_hosts = h1, 10.0.0.7 ,h2\n"
	"secret_file = /etc/rblk/a.key\n"
	"[volume b]\n"
	"backend = null\n"
	"size = 2M\n"
	"allow_hosts =\n"
	"secret_file =\n";

static void test_config_keys(void **state)
{
	struct tgt_config cfg, again;
	char err[256];
	char *text;

	assert_int_equal(tgt_config_parse(good_cfg, "t.conf", &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.admin_socket, "/run/x/t.sock");
	assert_string_equal(cfg.volume_dir, "/srv/rblk");
	assert_int_equal(cfg.vols[0].n_allow_hosts, 3);
	assert_string_equal(cfg.vols[0].allow_hosts[1], "10.0.0.7");
	assert_string_equal(cfg.vols[0].secret_file, "/etc/rblk/a.key");
	assert_int_equal(cfg.vols[1].n_allow_hosts, 0);
	assert_null(cfg.vols[1].secret_file);
	/* Round trip: what the admin socket writes parses to the same. */
	text = tgt_config_format(&cfg);
	assert_non_null(text);
	assert_int_equal(tgt_config_parse(text, "re", &again, err, sizeof(err)), 0);
	assert_string_equal(again.admin_socket, cfg.admin_socket);
	assert_string_equal(again.volume_dir, cfg.volume_dir);
	assert_int_equal(again.vols[0].n_allow_hosts, 3);
	assert_string_equal(again.vols[0].allow_hosts[2], "h2");
	assert_string_equal(again.vols[0].secret_file, "/etc/rblk/a.key");
	assert_null(again.vols[1].secret_file);
	free(text);
	tgt_config_free(&again);
	tgt_config_free(&cfg);
}

static void test_config_key_refusals(void **state)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "[target]\nadmin_socket = rel.sock\n", "t.conf:2: field 'admin_socket'" },
		{ "[target]\nvolume_dir = x\n", "t.conf:2: field 'volume_dir'" },
		{ "[target]\n\n\nvolume_dir = /a\nvolume_dir = /b\n", "t.conf:5: field 'volume_dir' given twice" },
		{ "[volume v]\nbackend = null\nsize = 1M\nallow_hosts = a, b/c\n",
		  "t.conf:4: volume 'v': field 'allow_hosts': 'b/c'" },
		{ "[volume v]\nbackend = null\nsize = 1M\nallow_hosts = ..\n",
		  "t.conf:4: volume 'v': field 'allow_hosts': '..'" },
		{ "[volume v]\nbackend = null\nsize = 1M\nallow_hosts = x, x\n", "listed twice" },
		{ "[volume v]\nbackend = null\nsize = 1M\nsecret_file = k\n", "t.conf:4: field 'secret_file'" },
		{ "[volume v]\nbackend = null\nsize = 1M\nsecret = abc\n", "t.conf:4: volume 'v': unknown field 'secret'" },
	};
	struct tgt_config cfg;
	char err[256];

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(tgt_config_parse(bad[i].text, "t.conf", &cfg, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].want))
			fail_msg("case %u: '%s' lacks '%s'", i, err, bad[i].want);
		assert_int_equal(cfg.n_vols, 0);
	}
}

static char tmpdir[64];
static char keypath[128];

static int setup(void **state)
{
	FILE *f;

	strcpy(tmpdir, "/tmp/rblk-acl-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(keypath, sizeof(keypath), "%s/k", tmpdir);
	f = fopen(keypath, "w");
	if (!f)
		return -1;
	fputs("0123456789abcdef0123456789abcdef\n", f);
	fclose(f);
	return chmod(keypath, 0600);
}

static int teardown(void **state)
{
	char p[160];

	unlink(keypath);
	snprintf(p, sizeof(p), "%s/t.conf", tmpdir);
	unlink(p);
	rmdir(tmpdir);
	return 0;
}

/* Registers volumes a (hosts h1 + 10.0.0.7, secret), b (any host),
 * closed (no list) and nets (addresses and ranges only). */
static void load_exports(void)
{
	struct tgt_config cfg;
	char text[2048], err[256];

	snprintf(text, sizeof(text),
		 "[volume a]\nbackend = null\nsize = 1M\nallow_hosts = h1, 10.0.0.7\nsecret_file = %s\n"
		 "[volume b]\nbackend = null\nsize = 2M\nallow_any_host = yes\n"
		 "[volume closed]\nbackend = null\nsize = 1M\n"
		 "[volume nets]\nbackend = null\nsize = 1M\n"
		 "allow_hosts = 10.99.99.99, 192.168.4.0/24, fd00:1::/64, ::ffff:172.16.0.0/108\n", keypath);
	assert_int_equal(tgt_config_parse(text, "t", &cfg, err, sizeof(err)), 0);
	assert_int_equal(tgt_exports_init(2), 0);
	if (tgt_exports_load(&cfg, err, sizeof(err)))
		fail_msg("load: %s", err);
	tgt_config_free(&cfg);
}

static struct rblk_login mklogin(const char *vol, const char *host)
{
	struct rblk_login l;

	memset(&l, 0, sizeof(l));
	snprintf(l.volume, sizeof(l.volume), "%s", vol);
	snprintf(l.host, sizeof(l.host), "%s", host);
	l.queue_depth = 8;
	return l;
}

/* A peer address as the transports hand it over (a few live at once). */
static const struct sockaddr *peer(const char *ip)
{
	static struct sockaddr_storage ring[8];
	static unsigned next;
	struct sockaddr_storage *ss = &ring[next++ % 8];
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(5000);
	} else if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(5000);
	} else {
		fail_msg("bad test address %s", ip);
	}
	return (const struct sockaddr *)ss;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* What a client does with a challenge: its own nonce, then MAC_I. */
static void answer(struct rblk_login *l, const struct rblk_secret *key,
		   const uint8_t tgt_nonce[RBLK_NONCE_LEN])
{
	assert_int_equal(rblk_auth_nonce(l->ini_nonce), 0);
	assert_int_equal(rblk_auth_mac(key, RBLK_AUTH_INITIATOR, tgt_nonce,
				       l->ini_nonce, l->volume, l->host,
				       l->auth_mac), 0);
	l->has_mac = 1;
}

static void test_login_decisions(void **state)
{
	struct tgt_auth_state st;
	struct tgt_session *s;
	struct rblk_login l;
	struct rblk_secret key;
	uint8_t nonce[RBLK_NONCE_LEN], nonce2[RBLK_NONCE_LEN];
	char err[256];

	load_exports();
	assert_int_equal(rblk_auth_load_secret(keypath, &key, err, sizeof(err)), 0);

	/* Unknown volume, host not listed (by name or address). */
	memset(&st, 0, sizeof(st));
	l = mklogin("zz", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "1.2.3.4:5", peer("1.2.3.4"), NULL, 0, &s, nonce), RBLK_S_NO_SUCH_VOLUME);
	assert_null(s);
	l = mklogin("a", "h9");
	assert_int_equal(tgt_acl_login(&st, &l, "1.2.3.4:5", peer("1.2.3.4"), NULL, 0, &s, nonce), RBLK_S_ACCESS_DENIED);

	/* Allowed host: challenge, then wrong MAC -> AUTH_FAILED. */
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "1.2.3.4:5", peer("1.2.3.4"), NULL, 0, &s, nonce), RBLK_S_AUTH_REQUIRED);
	assert_true(st.challenged);
	memset(l.auth_mac, 0x5a, sizeof(l.auth_mac));
	memset(l.ini_nonce, 0x33, sizeof(l.ini_nonce));
	l.has_mac = 1;
	assert_int_equal(tgt_acl_login(&st, &l, "1.2.3.4:5", peer("1.2.3.4"), NULL, 0, &s, nonce), RBLK_S_AUTH_FAILED);
	assert_true(all_zero(nonce, sizeof(nonce)));	/* no proof on a refusal */

	/* A MAC for another connection's nonce is refused (fresh nonces). */
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "1.2.3.4:5", peer("1.2.3.4"), NULL, 0, &s, nonce2), RBLK_S_AUTH_REQUIRED);
	memset(&st, 0, sizeof(st));
	assert_int_equal(tgt_acl_login(&st, &l, "1.2.3.4:5", peer("1.2.3.4"), NULL, 0, &s, nonce), RBLK_S_AUTH_REQUIRED);
	assert_memory_not_equal(nonce, nonce2, RBLK_NONCE_LEN);
	answer(&l, &key, nonce2);
	assert_int_equal(tgt_acl_login(&st, &l, "1.2.3.4:5", peer("1.2.3.4"), NULL, 0, &s, nonce), RBLK_S_AUTH_FAILED);

	/* Second LOGIN naming another host than challenged: refused. */
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_REQUIRED);
	l = mklogin("a", "other");
	answer(&l, &key, nonce);
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_FAILED);

	/* Second LOGIN naming an open volume after a challenge: refused, not
	 * let in without the proof (the reported 5c hole). */
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_REQUIRED);
	l = mklogin("b", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_FAILED);
	assert_null(s);
	answer(&l, &key, nonce);	/* even with a valid MAC over those fields */
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_FAILED);

	/* ... or another depth, queue or flags: everything but the proof. */
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_REQUIRED);
	l.queue_depth = 9;
	answer(&l, &key, nonce);
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_FAILED);

	/* A right MAC without an initiator nonce: the target cannot be
	 * checked, so the target does not take it either. */
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_REQUIRED);
	answer(&l, &key, nonce);
	memset(l.ini_nonce, 0, sizeof(l.ini_nonce));
	assert_int_equal(rblk_auth_mac(&key, RBLK_AUTH_INITIATOR, nonce, l.ini_nonce,
				       l.volume, l.host, l.auth_mac), 0);
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_FAILED);

	/* The secret cleared between challenge and answer: any MAC, even
	 * the right one for the old secret, is AUTH_FAILED, never an OK
	 * without a proof.  Replaced: the same (the answer was made for a
	 * challenge issued under another secret). */
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_REQUIRED);
	assert_int_equal(tgt_export_set_secret("a", NULL), 0);
	memset(l.auth_mac, 0x11, sizeof(l.auth_mac));
	memset(l.ini_nonce, 0x22, sizeof(l.ini_nonce));
	l.has_mac = 1;
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_FAILED);
	assert_null(s);
	assert_true(all_zero(nonce, sizeof(nonce)));
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_OK);
	tgt_session_close(s);				/* open now: no challenge */
	assert_int_equal(tgt_export_set_secret("a", &key), 0);
	memset(&st, 0, sizeof(st));
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_REQUIRED);
	assert_int_equal(tgt_export_set_secret("a", &key), 0);	/* same bytes, set again */
	answer(&l, &key, nonce);
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s, nonce), RBLK_S_AUTH_FAILED);

	/* Right MAC; host admitted by its peer address; the OK carries the
	 * target's proof over both nonces. */
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "anyname");
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 1, &s, nonce), RBLK_S_AUTH_REQUIRED);
	answer(&l, &key, nonce);
	memcpy(nonce2, nonce, sizeof(nonce));
	assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 1, &s, nonce), RBLK_S_OK);
	assert_true(st.proven);
	assert_int_equal(rblk_auth_verify(&key, RBLK_AUTH_TARGET, nonce2, l.ini_nonce,
					  l.volume, l.host, nonce), 0);
	assert_non_null(s);
	assert_int_equal(s->size, 1 << 20);
	tgt_session_account(s, RBLK_OP_WRITE, 4096, 3000, false);
	tgt_session_account(s, RBLK_OP_READ, 0, 1000, true);
	assert_int_equal(s->stats.op[TGT_STAT_WRITE].bytes, 4096);
	assert_int_equal(s->exp->stats[1].op[TGT_STAT_READ].errors, 1);
	assert_int_equal(s->exp->stats[1].op[TGT_STAT_WRITE].hist[1], 1);	/* 3 us */

	/* Delete while attached: refused, then forced; the session keeps its
	 * export alive until it closes. */
	assert_int_equal(tgt_export_remove("a", false), -EBUSY);
	assert_int_equal(tgt_export_remove("a", true), 0);
	assert_true(tgt_session_orphaned(s));
	memset(&st, 0, sizeof(st));
	l = mklogin("a", "h1");
	{
		struct tgt_session *s2;

		assert_int_equal(tgt_acl_login(&st, &l, "10.0.0.7:9", peer("10.0.0.7"), NULL, 0, &s2, nonce),
				 RBLK_S_NO_SUCH_VOLUME);
	}
	assert_string_equal(s->exp->name, "a");		/* still valid memory */
	tgt_session_close(s);				/* last ref: closes */
	assert_int_equal(tgt_export_remove("a", false), -ENOENT);

	/* Open volume b: no secret, any host, MAC ignored. */
	memset(&st, 0, sizeof(st));
	l = mklogin("b", "whoever");
	assert_int_equal(tgt_acl_login(&st, &l, "1.1.1.1:1", peer("1.1.1.1"), NULL, 0, &s, nonce), RBLK_S_OK);
	assert_int_equal(s->size, 2 << 20);
	/* Resize publishes to new logins; this session keeps 2M. */
	assert_int_equal(tgt_export_set_size("b", 4 << 20), 0);
	assert_int_equal(s->size, 2 << 20);
	tgt_session_close(s);
	memset(&st, 0, sizeof(st));
	assert_int_equal(tgt_acl_login(&st, &l, "1.1.1.1:1", peer("1.1.1.1"), NULL, 0, &s, nonce), RBLK_S_OK);
	assert_int_equal(s->size, 4 << 20);
	tgt_session_close(s);
	tgt_exports_fini();
}

static void test_discover_filter(void **state)
{
	struct rblk_discover_entry e[4];
	char *hosts[] = { "h1" };

	load_exports();
	/* a has a secret: not listed at all before its proof ... */
	assert_int_equal(tgt_acl_discover("h9", peer("1.2.3.4"), NULL, e, 4), 1);
	assert_string_equal(e[0].volume, "b");
	assert_int_equal(tgt_acl_discover("h1", peer("1.2.3.4"), NULL, e, 4), 1);
	assert_string_equal(e[0].volume, "b");
	assert_int_equal(tgt_acl_discover("x", peer("10.0.0.7"), NULL, e, 4), 1);
	/* ... nor after proving another volume's secret ... */
	assert_int_equal(tgt_acl_discover("h1", peer("1.2.3.4"), "b", e, 4), 1);
	/* ... and after its own proof, still only by its allow list. */
	assert_int_equal(tgt_acl_discover("h1", peer("1.2.3.4"), "a", e, 4), 2);
	assert_string_equal(e[0].volume, "a");
	assert_int_equal(tgt_acl_discover("x", peer("10.0.0.7"), "a", e, 4), 2);
	assert_int_equal(tgt_acl_discover("x", peer("::ffff:10.0.0.7"), "a", e, 4), 2);
	assert_int_equal(tgt_acl_discover("x", peer("fe80::1"), "a", e, 4), 1);
	assert_int_equal(tgt_acl_discover("x", peer("10.0.0.70"), "a", e, 4), 1);
	/* A host that claims the listed address as its name is not it. */
	assert_int_equal(tgt_acl_discover("10.0.0.7", peer("1.2.3.4"), "a", e, 4), 1);
	assert_int_equal(tgt_acl_discover("h1", peer("1.2.3.4"), "a", e, 1), 1);	/* max */
	/* Replacing the list takes effect at once. */
	assert_int_equal(tgt_export_set_hosts("b", hosts, 1, false), 0);
	assert_int_equal(tgt_acl_discover("h9", peer("1.2.3.4"), NULL, e, 4), 0);
	assert_int_equal(tgt_export_set_hosts("zz", hosts, 1, false), -ENOENT);
	/* An entry that does not parse changes nothing. */
	{
		char *bad[] = { "h1", "10.0.0.0/99" };

		assert_int_equal(tgt_export_set_hosts("b", bad, 2, false), -EINVAL);
		assert_int_equal(tgt_acl_discover("h1", peer("1.2.3.4"), NULL, e, 4), 1);
	}
	/* The last host denied: closed, not open. */
	assert_int_equal(tgt_export_set_hosts("b", NULL, 0, false), 0);
	assert_int_equal(tgt_acl_discover("h1", peer("1.2.3.4"), NULL, e, 4), 0);
	assert_int_equal(tgt_export_set_hosts("b", NULL, 0, true), 0);
	assert_int_equal(tgt_acl_discover("h9", peer("1.2.3.4"), NULL, e, 4), 1);
	assert_string_equal(e[0].volume, "b");
	tgt_exports_fini();
}

static void test_entry_parse(void **state)
{
	static const char *const bad[] = {
		"b/c", "..", "-x", "", "10.0.0.0/33", "10.0.0.0/", "/8",
		"10.0.0.0/+8", "10.0.0.0/ 8", "10.0.0.0/0x8", "host/8",
		"fe80::/129", "10.0.0.0/1000", "1.2.3.4.5", "*", "10.0.0.010",
		"fe80:1", "host:1",
	};
	struct tgt_acl_entry e;
	char err[160];

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		if (tgt_acl_entry_parse(bad[i], &e, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_non_null(strstr(err, bad[i]));
	}
	assert_int_equal(tgt_acl_entry_parse("client-7.lab", &e, NULL, 0), 0);
	assert_int_equal(e.kind, TGT_ACL_NAME);
	assert_true(tgt_acl_entry_match(&e, "client-7.lab", NULL));
	assert_false(tgt_acl_entry_match(&e, "client-8.lab", peer("1.2.3.4")));

	/* Anything that reads as an address is one: never a claimable name. */
	assert_int_equal(tgt_acl_entry_parse("10.0.0.7", &e, NULL, 0), 0);
	assert_int_equal(e.kind, TGT_ACL_ADDR);
	assert_int_equal(e.prefix, 32);
	assert_false(tgt_acl_entry_match(&e, "10.0.0.7", peer("203.0.113.5")));
	assert_false(tgt_acl_entry_match(&e, "10.0.0.7", NULL));
	assert_true(tgt_acl_entry_match(&e, "whatever", peer("10.0.0.7")));
	assert_true(tgt_acl_entry_match(&e, NULL, peer("::ffff:10.0.0.7")));
	assert_false(tgt_acl_entry_match(&e, NULL, peer("10.0.0.8")));

	/* CIDR: host bits ignored, boundaries exact. */
	assert_int_equal(tgt_acl_entry_parse("10.1.2.99/23", &e, NULL, 0), 0);
	assert_true(tgt_acl_entry_match(&e, NULL, peer("10.1.2.0")));
	assert_true(tgt_acl_entry_match(&e, NULL, peer("10.1.3.255")));
	assert_false(tgt_acl_entry_match(&e, NULL, peer("10.1.4.0")));
	assert_false(tgt_acl_entry_match(&e, NULL, peer("10.1.1.255")));
	assert_false(tgt_acl_entry_match(&e, NULL, peer("::a01:200")));
	assert_int_equal(tgt_acl_entry_parse("0.0.0.0/0", &e, NULL, 0), 0);
	assert_true(tgt_acl_entry_match(&e, NULL, peer("198.51.100.1")));
	assert_false(tgt_acl_entry_match(&e, NULL, peer("2001:db8::1")));

	/* IPv6, and the IPv4-mapped form stored as IPv4. */
	assert_int_equal(tgt_acl_entry_parse("2001:db8:5::/48", &e, NULL, 0), 0);
	assert_true(tgt_acl_entry_match(&e, NULL, peer("2001:db8:5:ffff::1")));
	assert_false(tgt_acl_entry_match(&e, NULL, peer("2001:db8:6::1")));
	assert_false(tgt_acl_entry_match(&e, "2001:db8:5::1", peer("10.0.0.1")));
	assert_int_equal(tgt_acl_entry_parse("::ffff:192.0.2.0/120", &e, NULL, 0), 0);
	assert_int_equal(e.family, AF_INET);
	assert_int_equal(e.prefix, 24);
	assert_true(tgt_acl_entry_match(&e, NULL, peer("192.0.2.77")));
	assert_true(tgt_acl_entry_match(&e, NULL, peer("::ffff:192.0.2.78")));
	assert_false(tgt_acl_entry_match(&e, NULL, peer("192.0.3.1")));
}

/* LOGIN by the real peer address only; empty list = closed. */
static void test_login_by_address(void **state)
{
	struct tgt_auth_state st;
	struct tgt_session *s;
	struct rblk_login l;
	uint8_t nonce[RBLK_NONCE_LEN];
	static const struct { const char *host, *ip; int want; } cases[] = {
		/* the reported attack: claim the listed address as a name */
		{ "10.99.99.99", "203.0.113.5", RBLK_S_ACCESS_DENIED },
		{ "anyname", "10.99.99.99", RBLK_S_OK },
		{ "x", "192.168.4.1", RBLK_S_OK },
		{ "x", "192.168.4.255", RBLK_S_OK },
		{ "192.168.4.1", "192.168.5.1", RBLK_S_ACCESS_DENIED },
		{ "x", "fd00:1::abcd", RBLK_S_OK },
		{ "fd00:1::1", "fd00:2::1", RBLK_S_ACCESS_DENIED },
		{ "x", "172.16.9.9", RBLK_S_OK },
		{ "x", "::ffff:172.16.0.1", RBLK_S_OK },
		{ "x", "172.32.0.1", RBLK_S_ACCESS_DENIED },
	};

	load_exports();
	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&st, 0, sizeof(st));
		l = mklogin("nets", cases[i].host);
		if (tgt_acl_login(&st, &l, cases[i].ip, peer(cases[i].ip), NULL,
				  0, &s, nonce) != cases[i].want)
			fail_msg("case %u: host %s from %s", i, cases[i].host, cases[i].ip);
		if (s)
			tgt_session_close(s);
	}
	/* No transport address at all: no address entry can match. */
	memset(&st, 0, sizeof(st));
	l = mklogin("nets", "10.99.99.99");
	assert_int_equal(tgt_acl_login(&st, &l, "?", NULL, NULL, 0, &s, nonce),
			 RBLK_S_ACCESS_DENIED);
	/* A volume without allow_hosts and allow_any_host admits no one. */
	l = mklogin("closed", "h1");
	assert_int_equal(tgt_acl_login(&st, &l, "1.2.3.4:5", peer("1.2.3.4"), NULL,
				       0, &s, nonce), RBLK_S_ACCESS_DENIED);
	tgt_exports_fini();
}

static void test_allow_any_host_config(void **state)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "[volume v]\nbackend = null\nsize = 1M\nallow_hosts = h1\nallow_any_host = yes\n",
		  "t.conf:1: volume 'v': allow_any_host = yes and allow_hosts exclude each other" },
		{ "[volume v]\nbackend = null\nsize = 1M\nallow_hosts = *\n",
		  "t.conf:4: volume 'v': field 'allow_hosts': '*' is not an entry; write allow_any_host = yes" },
		{ "[volume v]\nbackend = null\nsize = 1M\nallow_any_host = maybe\n",
		  "t.conf:4: volume 'v': field 'allow_any_host': 'maybe' is not yes|no" },
		{ "[volume v]\nbackend = null\nsize = 1M\nallow_hosts = 10.0.0.0/40\n",
		  "t.conf:4: volume 'v': field 'allow_hosts': '10.0.0.0/40': prefix length must be 0..32" },
	};
	const char *good =
		"[volume o]\nbackend = null\nsize = 1M\nallow_any_host = yes\n"
		"[volume n]\nbackend = null\nsize = 1M\nallow_hosts = 10.0.0.0/24, fd00::/8, h\n"
		"[volume c]\nbackend = null\nsize = 1M\n";
	struct tgt_config cfg, again;
	char err[256], *text;

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(tgt_config_parse(bad[i].text, "t.conf", &cfg, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].want))
			fail_msg("case %u: '%s' lacks '%s'", i, err, bad[i].want);
	}
	assert_int_equal(tgt_config_parse(good, "t.conf", &cfg, err, sizeof(err)), 0);
	assert_true(cfg.vols[0].allow_any_host);
	assert_false(cfg.vols[1].allow_any_host);
	assert_int_equal(cfg.vols[1].n_allow_hosts, 3);
	assert_false(cfg.vols[2].allow_any_host);
	assert_int_equal(cfg.vols[2].n_allow_hosts, 0);
	text = tgt_config_format(&cfg);
	assert_non_null(text);
	assert_non_null(strstr(text, "allow_any_host = yes"));
	assert_int_equal(tgt_config_parse(text, "re", &again, err, sizeof(err)), 0);
	assert_true(again.vols[0].allow_any_host);
	assert_false(again.vols[2].allow_any_host);
	assert_string_equal(again.vols[1].allow_hosts[0], "10.0.0.0/24");
	free(text);
	tgt_config_free(&again);
	tgt_config_free(&cfg);
}

static void test_save_config_atomic(void **state)
{
	struct tgt_config cfg, back;
	char path[160], err[256], tmpl[200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/t.conf", tmpdir);
	assert_int_equal(tgt_config_parse(good_cfg, "g", &cfg, err, sizeof(err)), 0);
	assert_int_equal(tgt_admin_save_config(path, &cfg, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);	/* new file: 0600 */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(tgt_admin_save_config(path, &cfg, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);	/* mode kept */
	assert_int_equal(tgt_config_load(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back.n_vols, 2);
	tgt_config_free(&back);
	/* No temp file left behind. */
	snprintf(tmpl, sizeof(tmpl), "ls -a %s | grep -q tmp", tmpdir);
	assert_int_not_equal(system(tmpl), 0);
	/* A directory that does not exist: error, message says where. */
	assert_int_equal(tgt_admin_save_config("/nonexistent-dir/t.conf", &cfg, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent-dir"));
	tgt_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_config_key_refusals),
		cmocka_unit_test(test_login_decisions),
		cmocka_unit_test(test_discover_filter),
		cmocka_unit_test(test_entry_parse),
		cmocka_unit_test(test_login_by_address),
		cmocka_unit_test(test_allow_any_host_config),
		cmocka_unit_test(test_save_config_atomic),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
