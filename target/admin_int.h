/* SPDX-License-Identifier: MIT */
/* Admin socket internals shared by admin.c (server) and admin_cmds.c. */
#ifndef RBLK_TARGET_ADMIN_INT_H
#define RBLK_TARGET_ADMIN_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "export.h"
#include "admin.h"

#define ADMIN_MAX_CLIENTS	16

struct admin_client {
	int    fd;			/* -1 = free slot */
	char  *buf;			/* partial request line */
	size_t len;
};

#define ADMIN_DIGEST_LEN	32	/* SHA-256 */

struct tgt_admin {
	char   *socket_path;
	char   *config_path;		/* NULL: changes are not persisted */
	char   *volume_dir;
	struct tgt_config cfg;		/* what is persisted right now */
	/* SHA-256 of the config file's bytes as the target last read or
	 * wrote them: a write finding other bytes there refuses (an edit
	 * it has not read).  admin_reload.c. */
	uint8_t cfg_digest[ADMIN_DIGEST_LEN];
	int     listen_fd;
	int     stop_efd;
	int     reload_efd;		/* SIGHUP: main thread asks for a reload */
	int64_t start_ms;		/* monotonic, at create: the uptime */
	bool    running;
	pthread_t thread;
	struct admin_client clients[ADMIN_MAX_CLIENTS];
};

/*
 * One request type.  fn fills rsp (an object that already has "ok") and
 * returns 0, or -errno with a one-line reason in err.  Admin thread.
 */
struct tgt_admin_cmd {
	const char *name;
	int (*fn)(struct tgt_admin *a, json_object *req, json_object *rsp,
		  char *err, size_t errlen);
};

/* ---- admin_reload.c: the config file's identity, and reload ---------- */

/* cfg_digest of text (what the file holds now, or is about to). */
void tgt_admin_digest(struct tgt_admin *a, const char *text);
/*
 * Before a write of the config: 0 when the file still holds what the
 * target last read or wrote; else -ESTALE (changed by someone else) or
 * -errno (unreadable, gone) with a message in err, and nothing may be
 * written.  0 also when changes are not persisted.
 */
int tgt_admin_config_fresh(struct tgt_admin *a, char *err, size_t errlen);
/* After a successful write of cfg: the file now holds its text. */
void tgt_admin_config_written(struct tgt_admin *a, const struct tgt_config *cfg);
/*
 * Reads the config file again and applies what changed (volumes added,
 * removed or with a new store, ACLs, secrets), all or nothing; fills rsp
 * with what it did.  0 or -errno with the reason in err (then nothing
 * changed).  Admin thread: the "config.reload" request and SIGHUP.
 */
int tgt_admin_cmd_reload(struct tgt_admin *a, json_object *req,
			 json_object *rsp, char *err, size_t errlen);
/* The same for SIGHUP: the outcome goes to the log only. */
void tgt_admin_reload_signal(struct tgt_admin *a);

/* What a new config changes in the exports, prepared (stores opened) but
 * not yet applied: tgt_exports_change(p.ch, p.n) applies it in one step. */
struct tgt_admin_plan {
	struct tgt_export_change *ch;
	unsigned n;
	json_object *added, *removed, *changed;	/* names, for the answer */
};
/*
 * Builds the plan from a->cfg to next: volumes added, removed, replaced
 * (store changed) or with new access rules.  A volume to be removed or
 * replaced while it has sessions refuses (-EBUSY) before anything opens.
 * 0 or -errno with why in err; free the plan either way.
 */
int tgt_admin_plan_build(struct tgt_admin *a, const struct tgt_config *next,
			 struct tgt_admin_plan *p, char *err, size_t errlen);
/* Frees what the plan still holds; a file a failed plan created goes. */
void tgt_admin_plan_free(struct tgt_admin_plan *p);

/* ---- admin_persist.c: the config the admin thread keeps -------------- */

/* A deep copy of src (through the formatter).  0 or -errno with why. */
int tgt_admin_cfg_clone(const struct tgt_config *src, struct tgt_config *dst,
			char *err, size_t errlen);
/* Saves next (when persisting; never over an unread edit) and makes it
 * the current config; next is consumed either way. */
int tgt_admin_cfg_commit(struct tgt_admin *a, struct tgt_config *next,
			 char *err, size_t errlen);
/* After a failed publish: the previous config back on disk and in a. */
void tgt_admin_cfg_restore(struct tgt_admin *a, struct tgt_config *prev);
/* Appends a copy of v (its store and ACL-free fields) to cfg. */
int tgt_admin_cfg_append_volume(struct tgt_config *cfg,
				const struct tgt_volume_cfg *v);
/* Removes volume name from cfg, freeing what it owned. */
void tgt_admin_cfg_remove_volume(struct tgt_config *cfg, const char *name);

/* ---- admin_set.c ------------------------------------------------------ */

/* "volume.set": live config keys of one volume (admin_set.c has which). */
int tgt_admin_cmd_set(struct tgt_admin *a, json_object *req, json_object *rsp,
		      char *err, size_t errlen);

/* ---- admin_status.c --------------------------------------------------- */

/* "status": version, pid, uptime, config, listeners, volume and session
 * counts. */
int tgt_admin_cmd_status(struct tgt_admin *a, json_object *req,
			 json_object *rsp, char *err, size_t errlen);

/* Looks a request type up in the table of admin_cmds.c; NULL if unknown. */
const struct tgt_admin_cmd *tgt_admin_cmd_find(const char *name);
/* "volume.create, volume.delete, ..." for the unknown-command error. */
const char *tgt_admin_cmd_names(void);

#endif /* RBLK_TARGET_ADMIN_INT_H */
