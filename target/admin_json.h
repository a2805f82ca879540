/* SPDX-License-Identifier: MIT */
/*
 * Builders for the admin socket's JSON answers, shared by every command
 * file: a NULL string is JSON null, numbers are int64.
 */
#ifndef RBLK_TARGET_ADMIN_JSON_H
#define RBLK_TARGET_ADMIN_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

static inline void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static inline void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

struct tgt_admin;
struct tgt_export;

/* ---- request fields (admin_json.c): 0, or -EINVAL with why in err ---- */

/* Printable copy of untrusted text for messages (control bytes -> '?'). */
const char *adm_printable(const char *s, char *buf, size_t len);
/* A string field; absent or null is *out = NULL, an error if required. */
int adm_get_str(json_object *req, const char *key, bool required,
		const char **out, char *err, size_t errlen);
/* A boolean field; absent or null is false. */
int adm_get_bool(json_object *req, const char *key, bool *out,
		 char *err, size_t errlen);
/* "size": a number of bytes or a size string ("10G"); *have = present. */
int adm_get_size(json_object *req, uint64_t *out, bool *have,
		 char *err, size_t errlen);
/* A path fit for a config line: absolute, no control bytes, '#' or ';',
 * no trailing blank (what = how the message names it). */
int adm_check_path(const char *what, const char *path, char *err, size_t errlen);
/* A required name field that passes rblk_name_valid (what: "volume"...). */
int adm_get_name(json_object *req, const char *key, const char *what,
		 const char **out, char *err, size_t errlen);

/* ---- views (admin_json.c; the export registry's lock held) ---------- */

/* One volume: what list shows, and with detail what show adds. */
json_object *adm_volume_json(const struct tgt_admin *a,
			     const struct tgt_export *e, bool detail);
/* Its sessions, with their counters when stats. */
json_object *adm_sessions_json(const struct tgt_export *e, bool stats);
/* Its counters summed over its sessions. */
json_object *adm_export_stats_json(const struct tgt_export *e);

#endif /* RBLK_TARGET_ADMIN_JSON_H */
