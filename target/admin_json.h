/* SPDX-License-Identifier: MIT */
/*
 * Builders for the admin socket's JSON answers, shared by every command
 * file: a NULL string is JSON null, numbers are int64.
 */
#ifndef RBLK_TARGET_ADMIN_JSON_H
#define RBLK_TARGET_ADMIN_JSON_H

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

#endif /* RBLK_TARGET_ADMIN_JSON_H */
