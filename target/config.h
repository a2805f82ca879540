/* SPDX-License-Identifier: MIT */
/*
 * Target configuration model.  tgt_config_parse() is a pure function from
 * text to struct tgt_config (no file system access, no side effects), so it
 * can be unit tested on every error path; tgt_config_format() writes the
 * struct back as text that parses to the same struct (round trip), which is
 * what the admin socket uses to persist changes.
 */
#ifndef RBLK_TARGET_CONFIG_H
#define RBLK_TARGET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poll_mode.h"
#include "rbd_cfg.h"
#include "rblk_proto.h"

#define TGT_CFG_BACKEND_MAX	16
#define TGT_CFG_MAX_REACTORS	256
#define TGT_CFG_MAX_LISTEN	16
#define TGT_CFG_MAX_CONNS	1000000
#define TGT_CFG_DEFAULT_BUFFER_MB	64
#define TGT_CFG_DEFAULT_LOGIN_TIMEOUT	10
#define TGT_CFG_DEFAULT_IDLE_TIMEOUT	60
#define TGT_CFG_DEFAULT_DATA_TIMEOUT	30
#define TGT_CFG_DEFAULT_STALL_TIMEOUT	5
#define TGT_CFG_DEFAULT_MAX_CONNS	4096
#define TGT_CFG_DEFAULT_MAX_CONNS_HOST	256
#define TGT_CFG_DEFAULT_MAX_PRELOGIN	256
#define TGT_CFG_DEFAULT_MAX_PRELOGIN_HOST 64
#define TGT_CFG_MAX_PRELOGIN		65536

struct tgt_volume_cfg {
	char     name[RBLK_NAME_MAX];
	char    *path;			/* malloc'd; NULL only for backend null */
	uint64_t size;			/* bytes; 0 = take it from the store */
	char     backend[TGT_CFG_BACKEND_MAX];	/* "uring" unless given */
	bool     read_only;
	bool     buffered;		/* direct = no: page cache, no O_DIRECT */
	char   **allow_hosts;		/* malloc'd names/addresses/CIDRs; 0 = none */
	unsigned n_allow_hosts;
	bool     allow_any_host;	/* open to every host (excludes allow_hosts) */
	char    *secret_file;		/* malloc'd; NULL = no authentication */
	char    *created_file;		/* malloc'd; the file volume create made
					 * (delete removes path only if it is
					 * this one); NULL = not ours */
	struct tgt_rbd_cfg rbd;		/* backend rbd: pool, image, cluster */
	int      line;			/* line of the [volume] header, 0 if built */
};

/* tcp_zero_copy: when answers go to the socket without a copy (tcp_send.c). */
enum tgt_tcp_zc {
	TGT_TCP_ZC_AUTO,	/* where the kernel reports that it did not copy */
	TGT_TCP_ZC_ON,		/* always above the size threshold */
	TGT_TCP_ZC_OFF,
};

struct tgt_config {
	char   *listen_tcp[TGT_CFG_MAX_LISTEN];	/* "host:port", malloc'd */
	unsigned n_listen_tcp;
	char   *listen_rdma;		/* raw value, NULL when empty/absent */
	unsigned reactors;		/* 0 = one per online core */
	int     log_level;		/* RBLK_LOG_*; -1 = not set */
	unsigned max_queue_depth;	/* <= RBLK_MAX_QUEUE_DEPTH */
	unsigned buffer_mb;		/* per-reactor I/O buffer memory */
	unsigned login_timeout;		/* seconds to complete LOGIN; 0 = none */
	unsigned idle_timeout;		/* seconds a session may be silent; 0 = none */
	unsigned data_timeout;		/* seconds for a WRITE's payload; 0 = none */
	unsigned stall_timeout;		/* seconds unread answers may pin buffers; 0 = none */
	unsigned max_conns;		/* connections in all */
	unsigned max_conns_host;	/* connections from one peer address */
	unsigned conn_buffer_mb;	/* one connection's share of a pool; 0 = auto */
	unsigned host_buffer_mb;	/* one host's share of a pool; 0 = auto */
	unsigned max_prelogin;		/* connections not logged in yet; 0 = no cap */
	unsigned max_prelogin_per_host;	/* the same per source address */
	enum rblk_poll_mode rdma_poll;	/* rdma_poll = event|busy|adaptive */
	unsigned rdma_poll_us;		/* adaptive: spin this long after work */
	enum tgt_tcp_zc tcp_zero_copy;	/* tcp_zero_copy = off|auto|on */
	char   *admin_socket;		/* malloc'd; NULL = /run/rblk/target.sock */
	char   *volume_dir;		/* malloc'd; NULL = /var/lib/rblk */
	struct tgt_volume_cfg *vols;	/* malloc'd array */
	unsigned n_vols;
};

/* Fills cfg with defaults (no listeners, no volumes). */
void tgt_config_init(struct tgt_config *cfg);
/* The name of [target] key i, in the order written; NULL past the last. */
const char *tgt_config_target_key(unsigned i);

/*
 * Parses text (NUL terminated) into cfg, which must have been init'ed or
 * freed.  fname is only used in messages.  Returns 0, or -EINVAL with a
 * one-line "FILE:LINE: message" in err (cfg is then left freed/empty).
 */
int tgt_config_parse(const char *text, const char *fname,
		     struct tgt_config *cfg, char *err, size_t errlen);

/*
 * Reads the config file path (a regular file below 1 MiB, no NUL byte)
 * into a malloc'd string *text.  0 or -errno with a message in err.
 */
int tgt_config_read(const char *path, char **text, char *err, size_t errlen);

/* Reads path and parses it; -errno on read failure (message in err). */
int tgt_config_load(const char *path, struct tgt_config *cfg,
		    char *err, size_t errlen);

/* Releases everything cfg owns and re-inits it. */
void tgt_config_free(struct tgt_config *cfg);

/* Returns a malloc'd config text equivalent to cfg, or NULL on ENOMEM. */
char *tgt_config_format(const struct tgt_config *cfg);

/* Finds a volume by name; NULL if absent. */
struct tgt_volume_cfg *tgt_config_find_volume(const struct tgt_config *cfg,
					      const char *name);


#endif /* RBLK_TARGET_CONFIG_H */
