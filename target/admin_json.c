// SPDX-License-Identifier: MIT
/*
 * The admin socket's JSON, shared by every command file: the fields of a
 * request, read and checked the same way everywhere, and the views of a
 * volume, its sessions and its counters that answers are made of.
 */
#include "admin_int.h"
#include "admin_json.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "be_stats.h"
#include "helpers.h"
#include "size.h"
#include "stats.h"
#include "volume_id.h"

/* ---- request fields -------------------------------------------------------- */

/* Printable copy of untrusted text for messages (control bytes -> '?'). */
const char *adm_printable(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

int adm_get_str(json_object *req, const char *key, bool required,
		const char **out, char *err, size_t errlen)
{
	json_object *j;

	*out = NULL;
	if (!json_object_object_get_ex(req, key, &j) || json_object_is_type(j, json_type_null)) {
		if (!required)
			return 0;
		snprintf(err, errlen, "missing field \"%s\"", key);
		return -EINVAL;
	}
	if (!json_object_is_type(j, json_type_string)) {
		snprintf(err, errlen, "field \"%s\" must be a string", key);
		return -EINVAL;
	}
	*out = json_object_get_string(j);
	if (strlen(*out) != (size_t)json_object_get_string_len(j)) {
		snprintf(err, errlen, "field \"%s\" contains a NUL byte", key);
		return -EINVAL;
	}
	return 0;
}

int adm_get_bool(json_object *req, const char *key, bool *out,
		 char *err, size_t errlen)
{
	json_object *j;

	*out = false;
	if (!json_object_object_get_ex(req, key, &j) || json_object_is_type(j, json_type_null))
		return 0;
	if (!json_object_is_type(j, json_type_boolean)) {
		snprintf(err, errlen, "field \"%s\" must be true or false", key);
		return -EINVAL;
	}
	*out = json_object_get_boolean(j);
	return 0;
}

/* "size": a number of bytes or a size string ("10G"); *have = present. */
int adm_get_size(json_object *req, uint64_t *out, bool *have,
		 char *err, size_t errlen)
{
	json_object *j;
	int64_t v;

	*have = false;
	*out = 0;
	if (!json_object_object_get_ex(req, "size", &j) || json_object_is_type(j, json_type_null))
		return 0;
	if (json_object_is_type(j, json_type_int)) {
		errno = 0;
		v = json_object_get_int64(j);
		if (v <= 0 || errno) {
			snprintf(err, errlen, "size must be a positive number of bytes");
			return -EINVAL;
		}
		*out = (uint64_t)v;
	} else if (json_object_is_type(j, json_type_string)) {
		char pbuf[64];

		int pr = rblk_parse_size(json_object_get_string(j), out);

		if (pr) {
			snprintf(err, errlen, "bad size '%s': %s",
				 adm_printable(json_object_get_string(j), pbuf, sizeof(pbuf)),
				 rblk_size_error(pr));
			return -EINVAL;
		}
	} else {
		snprintf(err, errlen, "size must be a number or a string like \"10G\"");
		return -EINVAL;
	}
	if (*out == 0 || *out % 512) {
		snprintf(err, errlen, "size %" PRIu64 " is not a positive multiple of 512 bytes", *out);
		return -EINVAL;
	}
	*have = true;
	return 0;
}

/*
 * Paths end up in the config file, one "key = value" line each: a newline
 * would inject keys, '#'/';' start comments and edge blanks are trimmed
 * away, so none of these may pass.
 */
int adm_check_path(const char *what, const char *path, char *err,
		   size_t errlen)
{
	size_t len = strlen(path);

	if (path[0] != '/' || len >= PATH_MAX - 80) {
		snprintf(err, errlen, "%s must be an absolute path", what);
		return -EINVAL;
	}
	for (const char *c = path; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '#' || *c == ';') {
			snprintf(err, errlen, "%s must not contain control characters, '#' or ';'", what);
			return -EINVAL;
		}
	}
	if (path[len - 1] == ' ' || path[len - 1] == '\t') {
		snprintf(err, errlen, "%s must not end in a blank", what);
		return -EINVAL;
	}
	return 0;
}

int adm_get_name(json_object *req, const char *key, const char *what,
		 const char **out, char *err, size_t errlen)
{
	char pbuf[80];
	int ret;

	ret = adm_get_str(req, key, true, out, err, errlen);
	if (ret)
		return ret;
	if (rblk_name_valid(*out)) {
		snprintf(err, errlen, "invalid %s name '%s': use 1..63 of A-Z a-z 0-9 . _ : - (not '.', '..', no leading '-')",
			 what, adm_printable(*out, pbuf, sizeof(pbuf)));
		return -EINVAL;
	}
	return 0;
}

/* ---- JSON views ---------------------------------------------------------- */

/* Summary of one volume (registry lock held). */
json_object *adm_volume_json(const struct tgt_admin *a,
			     const struct tgt_export *e, bool detail)
{
	const struct tgt_volume_cfg *vc = tgt_config_find_volume(&a->cfg, e->name);
	json_object *o = json_object_new_object(), *h;
	char fbuf[96], uuid[RBLK_UUID_STR_LEN];

	if (!o)
		return NULL;
	add_str(o, "name", e->name);
	add_u64(o, "size", __atomic_load_n(&e->size, __ATOMIC_RELAXED));
	add_str(o, "backend", e->vol->be->name);
	add_str(o, "path", e->vol->path);
	add_str(o, "type", !e->vol->path ? "none" : e->vol->is_blkdev ? "device" : "file");
	json_object_object_add(o, "read_only",
			       json_object_new_boolean(!!(e->vol->flags & RBLK_VOL_F_READ_ONLY)));
	json_object_object_add(o, "auth", json_object_new_boolean(e->secret != NULL));
	add_str(o, "secret_file", vc ? vc->secret_file : NULL);
	h = json_object_new_array();
	for (unsigned i = 0; h && i < e->n_hosts; i++)
		json_object_array_add(h, json_object_new_string(e->hosts[i]));
	json_object_object_add(o, "allow_hosts", h);
	json_object_object_add(o, "allow_any_host", json_object_new_boolean(e->any_host));
	add_u64(o, "sessions", e->n_sessions);
	rblk_uuid_str(e->vol->uuid, uuid);
	add_str(o, "uuid", uuid);
	if (e->vol->be->describe)
		e->vol->be->describe(e->vol, o);
	if (!detail)
		return o;
	json_object_object_add(o, "backend_io", tgt_be_stats_to_json(e->vol->be_stats));
	add_u64(o, "block_size", e->vol->block_size);
	add_str(o, "flags", rblk_vol_flags_str(e->vol->flags, fbuf, sizeof(fbuf)));
	add_u64(o, "logins", e->logins);
	add_u64(o, "refusals", e->refusals);
	return o;
}

json_object *adm_sessions_json(const struct tgt_export *e, bool stats)
{
	json_object *arr = json_object_new_array();

	for (const struct tgt_session *s = e->sessions; arr && s; s = s->next) {
		json_object *o = json_object_new_object();

		if (!o)
			break;
		add_u64(o, "id", s->id);
		add_str(o, "host", s->host);
		add_str(o, "peer", s->peer);
		add_u64(o, "queue_id", s->queue_id);
		add_u64(o, "reactor", s->reactor_id);
		add_u64(o, "size", __atomic_load_n(&s->size, __ATOMIC_RELAXED));
		add_u64(o, "since", s->started);
		if (stats)
			json_object_object_add(o, "stats", tgt_stats_to_json(&s->stats));
		json_object_array_add(arr, o);
	}
	return arr;
}

json_object *adm_export_stats_json(const struct tgt_export *e)
{
	struct tgt_io_stats *sum = aligned_alloc(64, sizeof(*sum));
	json_object *o;

	if (!sum)
		return NULL;
	tgt_export_stats(e, sum);
	o = tgt_stats_to_json(sum);
	free(sum);
	return o;
}
