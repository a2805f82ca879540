/* SPDX-License-Identifier: MIT */
/* Admin socket internals shared by admin.c (server) and admin_cmds.c. */
#ifndef RBLK_TARGET_ADMIN_INT_H
#define RBLK_TARGET_ADMIN_INT_H

#include <pthread.h>
#include <stdbool.h>

#include <json-c/json.h>

#include "admin.h"

#define ADMIN_MAX_CLIENTS	16

struct admin_client {
	int    fd;			/* -1 = free slot */
	char  *buf;			/* partial request line */
	size_t len;
};

struct tgt_admin {
	char   *socket_path;
	char   *config_path;		/* NULL: changes are not persisted */
	char   *volume_dir;
	struct tgt_config cfg;		/* what is persisted right now */
	int     listen_fd;
	int     stop_efd;
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

/* Looks a request type up in the table of admin_cmds.c; NULL if unknown. */
const struct tgt_admin_cmd *tgt_admin_cmd_find(const char *name);
/* "volume.create, volume.delete, ..." for the unknown-command error. */
const char *tgt_admin_cmd_names(void);

#endif /* RBLK_TARGET_ADMIN_INT_H */
