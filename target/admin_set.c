// SPDX-License-Identifier: MIT
/*
 * The "volume.set" admin request (rblkctl volume set NAME KEY=VALUE...):
 * config keys of one volume changed on a running target.
 *
 * The pairs are written into the volume's section of the config text and
 * the whole text is parsed again, so a value is checked by the very code
 * that checks the file, and the change is then applied as a reload
 * applies an edit (admin_reload.c): a key of the store (read_only, direct)
 * replaces the volume in one step, refused while sessions are attached;
 * an access key (allow_any_host, secret_file) applies to new logins.  All
 * or nothing: one bad pair changes nothing.  Keys that name the store
 * itself (path, size, backend, the rbd_* keys) are refused with what to
 * do instead.
 */
#include "admin_int.h"
#include "admin_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "helpers.h"
#include "log.h"

static const char *const live_keys[] = {
	"read_only", "direct", "allow_any_host", "secret_file",
};

/* Why a known key is not set here; NULL for a live one or an unknown. */
static const char *not_live(const char *key)
{
	if (!strcmp(key, "size"))
		return "use 'rblkctl volume resize'";
	if (!strcmp(key, "allow_hosts"))
		return "use 'rblkctl volume allow' and 'deny'";
	if (!strcmp(key, "path") || !strcmp(key, "backend") ||
	    !strncmp(key, "rbd_", 4) || !strncmp(key, "ceph_", 5))
		return "it names the volume's store: delete the volume and create it again, or edit the config and 'rblkctl reload' with no session attached";
	if (!strcmp(key, "created_file"))
		return "the target keeps it: it records that rblk made the file";
	return NULL;
}

static bool is_live(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_keys); i++)
		if (!strcmp(key, live_keys[i]))
			return true;
	return false;
}

/* A value goes on one config line: no newline, no comment start.  An
 * empty one drops the key: its default (no secret, read-write, ...). */
static bool value_ok(const char *v)
{
	return !strpbrk(v, "\n\r#;");
}

/* "key = value" lines of set at out (none for an empty value); length. */
static size_t put_pairs(char *out, json_object *set)
{
	size_t len = 0;

	json_object_object_foreach(set, k, v)
		if (*json_object_get_string(v))
			len += sprintf(out + len, "%s = %s\n", k, json_object_get_string(v));
	return len;
}

/*
 * text with the section of volume name rewritten: its lines for the keys
 * in set dropped, "key = value" for each appended.  NULL on no memory.
 */
static char *edit_section(const char *text, const char *name, json_object *set)
{
	size_t cap = strlen(text) + 64, len = 0;
	char head[96], *out;
	const char *p = text;
	bool in = false;

	json_object_object_foreach(set, k0, v0)
		cap += strlen(k0) + strlen(json_object_get_string(v0)) + 8;
	out = malloc(cap);
	if (!out)
		return NULL;
	snprintf(head, sizeof(head), "[volume %s]", name);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
		bool drop = false;

		if (*p == '[') {
			/* Leaving the section: its new lines go at its end. */
			if (in)
				len += put_pairs(out + len, set);
			in = !strncmp(p, head, strlen(head)) && (p[strlen(head)] == '\n' || !p[strlen(head)]);
		} else if (in) {
			json_object_object_foreach(set, k, v) {
				size_t kl = strlen(k);

				(void)v;
				if (!strncmp(p, k, kl) && (p[kl] == ' ' || p[kl] == '='))
					drop = true;
			}
		}
		if (!drop) {
			memcpy(out + len, p, n);
			len += n;
		}
		p += n;
	}
	if (in) {
		if (len && out[len - 1] != '\n')
			out[len++] = '\n';
		len += put_pairs(out + len, set);
	}
	out[len] = '\0';
	return out;
}

/* The set pairs are all live keys with one-line values.  0 or -EINVAL. */
static int check_pairs(json_object *set, char *err, size_t errlen)
{
	if (!json_object_object_length(set)) {
		snprintf(err, errlen, "nothing to set: give KEY=VALUE (keys: read_only, direct, allow_any_host, secret_file)");
		return -EINVAL;
	}
	json_object_object_foreach(set, k, v) {
		const char *why = not_live(k);

		if (why) {
			snprintf(err, errlen, "'%s' cannot be set on a running volume: %s", k, why);
			return -EINVAL;
		}
		if (!is_live(k)) {
			snprintf(err, errlen, "unknown key '%s' (keys that can be set: read_only, direct, allow_any_host, secret_file)", k);
			return -EINVAL;
		}
		if (!json_object_is_type(v, json_type_string) ||
		    !value_ok(json_object_get_string(v))) {
			snprintf(err, errlen, "'%s': want a one-line value", k);
			return -EINVAL;
		}
	}
	return 0;
}

int tgt_admin_cmd_set(struct tgt_admin *a, json_object *req, json_object *rsp,
		      char *err, size_t errlen)
{
	struct tgt_admin_plan plan = { .n = 0 };
	struct tgt_config next, prev;
	json_object *jname, *set;
	char *text, *edited;
	const char *name;
	int ret;

	if (!json_object_object_get_ex(req, "name", &jname) ||
	    !json_object_is_type(jname, json_type_string)) {
		snprintf(err, errlen, "missing field \"name\"");
		return -EINVAL;
	}
	name = json_object_get_string(jname);
	if (!json_object_object_get_ex(req, "set", &set) ||
	    !json_object_is_type(set, json_type_object)) {
		snprintf(err, errlen, "missing field \"set\" (an object of key: value)");
		return -EINVAL;
	}
	if ((ret = check_pairs(set, err, errlen)))
		return ret;
	if (!tgt_config_find_volume(&a->cfg, name)) {
		snprintf(err, errlen, "no volume '%s'", name);
		return -ENOENT;
	}
	/* Before anything opens: an unread hand edit refuses the change. */
	if ((ret = tgt_admin_config_fresh(a, err, errlen)))
		return ret;
	text = tgt_config_format(&a->cfg);
	edited = text ? edit_section(text, name, set) : NULL;
	if (!edited) {
		free(text);
		return -ENOMEM;
	}
	ret = tgt_config_parse(edited, "<volume set>", &next, err, errlen);
	/* Nothing to do when the text is what it was: no write, no reopen. */
	if (!ret) {
		char *now = tgt_config_format(&next);

		if (now && !strcmp(now, text)) {
			free(now);
			free(text);
			free(edited);
			tgt_config_free(&next);
			json_object_object_add(rsp, "changed", json_object_new_boolean(0));
			return 0;
		}
		free(now);
	}
	free(text);
	free(edited);
	if (ret)
		return ret;
	ret = tgt_admin_plan_build(a, &next, &plan, err, errlen);
	if (!ret)
		ret = tgt_admin_cfg_clone(&a->cfg, &prev, err, errlen);
	if (ret) {
		tgt_admin_plan_free(&plan);
		tgt_config_free(&next);
		return ret;
	}
	ret = tgt_admin_cfg_commit(a, &next, err, errlen);
	if (!ret) {
		ret = tgt_exports_change(plan.ch, plan.n, err, errlen);
		if (ret)
			tgt_admin_cfg_restore(a, &prev);
	}
	tgt_config_free(&prev);
	tgt_admin_plan_free(&plan);
	if (ret)
		return ret;
	rblk_info("volume %s: set %s", name, json_object_to_json_string(set));
	json_object_object_add(rsp, "changed", json_object_new_boolean(1));
	return 0;
}
