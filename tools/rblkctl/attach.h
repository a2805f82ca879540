/* SPDX-License-Identifier: MIT */
/*
 * rblkctl client-side commands (attach.c).  Each takes the command's own
 * argv (argv[0] is the command name) and returns the process exit status:
 * 0 ok, 1 failure (one line on stderr), 2 usage error.
 */
#ifndef RBLK_TOOLS_RBLKCTL_ATTACH_H
#define RBLK_TOOLS_RBLKCTL_ATTACH_H

#include <sys/types.h>

int rblkctl_attach(int argc, char **argv);
int rblkctl_detach(int argc, char **argv);
int rblkctl_list(int argc, char **argv);
int rblkctl_recover(int argc, char **argv);
int rblkctl_restart(int argc, char **argv);
int rblkctl_failback(int argc, char **argv);

#endif /* RBLK_TOOLS_RBLKCTL_ATTACH_H */
