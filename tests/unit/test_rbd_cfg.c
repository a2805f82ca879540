// SPDX-License-Identifier: MIT
/* The rbd keys of a volume's config (target/rbd_cfg.c) through the config
 * parser and writer: good configs, each refusal with its line, round
 * trip, and POOL/IMAGE as rblkctl sends it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"
#include "config.h"
#include "helpers.h"

static const char good_text[] =
	"[volume img]\n"
	"backend = rbd\n"
	"rbd_pool = rbd\n"
	"rbd_image = vm-disk.1\n"
	"ceph_conf = /srv/ceph/ceph.conf\n"
	"ceph_client_id = rblk\n"
	"ceph_keyring = /srv/ceph/client.rblk.keyring\n"
	"rbd_created = yes\n"
	"allow_any_host = yes\n"
	"[volume plain]\n"
	"rbd_image = late-backend\n"
	"rbd_pool = p2\n"
	"backend = rbd\n"
	"[volume f]\n"
	"path = /x.img\n";

/* Parses good_text (rbd built in) or says it cannot. */
static bool have_rbd(void)
{
	return tgt_backend_find("rbd") != NULL;
}

static void test_valid_rbd_keys_parse(void **state)
{
	struct tgt_config cfg;
	char err[256];

	if (!have_rbd())
		skip();
	assert_int_equal(tgt_config_parse(good_text, "t.conf", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_vols, 3);
	assert_string_equal(cfg.vols[0].backend, "rbd");
	assert_string_equal(cfg.vols[0].rbd.pool, "rbd");
	assert_string_equal(cfg.vols[0].rbd.image, "vm-disk.1");
	assert_string_equal(tgt_rbd_cfg_conf(&cfg.vols[0].rbd), "/srv/ceph/ceph.conf");
	assert_string_equal(tgt_rbd_cfg_client(&cfg.vols[0].rbd), "rblk");
	assert_string_equal(cfg.vols[0].rbd.keyring, "/srv/ceph/client.rblk.keyring");
	assert_true(cfg.vols[0].rbd.created);
	assert_null(cfg.vols[0].path);
	/* Ceph's defaults; the backend key may come after the rbd keys. */
	assert_string_equal(tgt_rbd_cfg_conf(&cfg.vols[1].rbd), "/etc/ceph/ceph.conf");
	assert_string_equal(tgt_rbd_cfg_client(&cfg.vols[1].rbd), "admin");
	assert_null(cfg.vols[1].rbd.keyring);
	assert_false(cfg.vols[1].rbd.created);
	assert_null(cfg.vols[2].rbd.pool);
	tgt_config_free(&cfg);
}

static void test_round_trip(void **state)
{
	struct tgt_config a, b;
	char err[256], *t1, *t2;

	if (!have_rbd())
		skip();
	assert_int_equal(tgt_config_parse(good_text, "t.conf", &a, err, sizeof(err)), 0);
	t1 = tgt_config_format(&a);
	assert_non_null(t1);
	assert_int_equal(tgt_config_parse(t1, "t1", &b, err, sizeof(err)), 0);
	t2 = tgt_config_format(&b);
	assert_string_equal(t1, t2);
	assert_string_equal(b.vols[0].rbd.image, "vm-disk.1");
	assert_true(b.vols[0].rbd.created);
	assert_string_equal(b.vols[0].rbd.keyring, "/srv/ceph/client.rblk.keyring");
	/* Defaults are not written out: an admin's later change of Ceph's
	 * defaults applies. */
	assert_non_null(strstr(t1, "rbd_pool = p2\nrbd_image = late-backend\n\n[volume f]"));
	assert_null(strstr(t1, "rbd_created = no"));
	free(t1);
	free(t2);
	tgt_config_free(&a);
	tgt_config_free(&b);
}

static const struct {
	const char *text;
	int line;
	const char *frag;
} bad[] = {
	{ "[volume v]\nbackend = rbd\nrbd_pool = rbd\n", 1, "needs fields 'rbd_pool' and 'rbd_image'" },
	{ "[volume v]\nbackend = rbd\nrbd_image = i\n", 1, "needs fields" },
	{ "[volume v]\nbackend = rbd\nrbd_pool = p\nrbd_image = i\npath = /x\n", 1, "takes no 'path'" },
	{ "[volume v]\nbackend = rbd\nrbd_pool = p\nrbd_image = i\nsize = 1G\n", 1, "takes no 'size'" },
	{ "[volume v]\npath = /x\nrbd_pool = p\n", 1, "'rbd_pool' is for backend rbd only" },
	{ "[volume v]\npath = /x\nceph_conf = /c\n", 1, "'ceph_conf' is for backend rbd only" },
	{ "[volume v]\nbackend = rbd\nrbd_pool = a/b\n", 3, "rbd_pool 'a/b' may not contain" },
	{ "[volume v]\nbackend = rbd\nrbd_image = a@snap\n", 3, "may not contain" },
	{ "[volume v]\nbackend = rbd\nrbd_pool = p\nrbd_pool = q\n", 4, "'rbd_pool' given twice" },
	{ "[volume v]\nceph_client_id = client.rblk\n", 2, "without 'client.'" },
	{ "[volume v]\nceph_client_id = a b\n", 2, "may contain only" },
	{ "[volume v]\nceph_conf = ceph.conf\n", 2, "not an absolute path" },
	{ "[volume v]\nceph_keyring = /k;x\n", 2, "may not contain control characters" },
	{ "[volume v]\nrbd_created = maybe\n", 2, "'rbd_created': 'maybe' is not yes|no" },
	{ "[volume v]\nrbd_image = 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789\n",
	  2, "rbd_image must be 1..95 bytes" },
};

static void test_invalid_rbd_keys_refused(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct tgt_config cfg;
		char err[512], want[64];

		/* Without the backend the first refusal is about the backend. */
		if (!have_rbd() && strstr(bad[i].text, "backend = rbd"))
			continue;
		assert_int_equal(tgt_config_parse(bad[i].text, "b.conf", &cfg, err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "b.conf:%d: ", bad[i].line);
		if (strncmp(err, want, strlen(want)) || !strstr(err, bad[i].frag))
			fail_msg("case %zu: got '%s', want '%s...%s'", i, err, want, bad[i].frag);
		assert_int_equal(cfg.n_vols, 0);
	}
}

/* A build without librbd says so, rather than "unknown backend". */
static void test_not_built(void **state)
{
	struct tgt_config cfg;
	char err[512];

	if (have_rbd()) {
		assert_null(tgt_backend_not_built("rbd"));
		assert_non_null(strstr(tgt_backend_names(), "rbd"));
		return;
	}
	assert_int_equal(tgt_config_parse("[volume v]\nbackend = rbd\n", "n.conf", &cfg,
					  err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not built into this rblk-target"));
}

static void test_spec(void **state)
{
	struct tgt_rbd_cfg c = { 0 };
	char why[256];

	assert_int_equal(tgt_rbd_cfg_set_spec(&c, "pool1/img-2", why, sizeof(why)), 0);
	assert_string_equal(c.pool, "pool1");
	assert_string_equal(c.image, "img-2");
	assert_int_equal(tgt_rbd_cfg_set_spec(&c, "noslash", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not POOL/IMAGE"));
	assert_int_equal(tgt_rbd_cfg_set_spec(&c, "/img", why, sizeof(why)), -EINVAL);
	assert_int_equal(tgt_rbd_cfg_set_spec(&c, "p/", why, sizeof(why)), -EINVAL);
	assert_int_equal(tgt_rbd_cfg_set_spec(&c, "p/a/b", why, sizeof(why)), -EINVAL);
	assert_int_equal(tgt_rbd_cfg_set_spec(&c, "p/i#x", why, sizeof(why)), -EINVAL);
	/* a refused spec leaves the good one */
	assert_string_equal(c.image, "img-2");
	tgt_rbd_cfg_free(&c);
	assert_null(c.pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_rbd_keys_parse),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_invalid_rbd_keys_refused),
		cmocka_unit_test(test_not_built),
		cmocka_unit_test(test_spec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
