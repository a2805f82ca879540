/* SPDX-License-Identifier: MIT */
/*
 * rblkctl target-side commands (volume.c, stats.c, discover.c) and what they
 * share (ctl_common.c): the admin socket client and global options.  Each
 * command takes its own argv (argv[0] = command name) and returns the exit
 * status: 0 ok, 1 failure (one line on stderr), 2 usage error.
 */
#ifndef RBLK_TOOLS_RBLKCTL_CTL_H
#define RBLK_TOOLS_RBLKCTL_CTL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include <json-c/json.h>

#define CTL_DEFAULT_SOCKET	"/run/rblk/target.sock"

/* Global options: set by main (before the command) or by the command. */
extern const char *ctl_socket;		/* --socket PATH, env RBLK_ADMIN_SOCKET */
extern bool ctl_json;			/* --json */

/*
 * Consumes a global option at argv[*i] (--socket PATH, --socket=PATH,
 * --json).  Returns 1 when consumed (advancing *i past its value), 0 when
 * argv[*i] is something else, -1 on a missing value (message printed).
 */
int ctl_global_opt(int argc, char **argv, int *i);

/*
 * Sends one request to the admin socket and waits for the answer (10 s
 * bound).  Returns 0 with *rsp owned by the caller when the target said
 * ok; 1 after printing "rblkctl: <error>" to stderr (no *rsp) when it
 * refused or could not be reached.  Takes ownership of req.
 */
int ctl_request(json_object *req, json_object **rsp);

/*
 * For a command that takes no arguments, only global options and --help:
 * -1 to go on, or the exit status (0 after --help, 2 after a usage error,
 * with usage printed).
 */
int ctl_no_args(int argc, char **argv, const char *cmd, void (*usage)(FILE *));

/* Prints o as pretty JSON on stdout. */
void ctl_print_json(json_object *o);

/* Getters that tolerate missing fields. */
const char *ctl_jstr(json_object *o, const char *key, const char *dflt);
int64_t ctl_jint(json_object *o, const char *key);
bool ctl_jbool(json_object *o, const char *key);

int rblkctl_volume(int argc, char **argv);
int rblkctl_stats(int argc, char **argv);
int rblkctl_discover(int argc, char **argv);
int rblkctl_reload(int argc, char **argv);
int rblkctl_status(int argc, char **argv);

#endif /* RBLK_TOOLS_RBLKCTL_CTL_H */
