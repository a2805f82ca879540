// SPDX-License-Identifier: MIT
/* Folders a failed start made, removed again (start_undo.h). */
#include "start_undo.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* path's parent, in place. */
static void to_parent(char *path)
{
	const char *d = dirname(path);	/* may point into path, or elsewhere */

	memmove(path, d, strlen(d) + 1);
}

void tgt_start_undo_dir(struct tgt_start_undo *u, const char *path)
{
	struct stat st;
	char *kept;

	if (u->n == TGT_START_UNDO_DIRS || stat(path, &st) == 0)
		return;
	snprintf(u->dirs[u->n].path, sizeof(u->dirs[u->n].path), "%s", path);
	kept = u->dirs[u->n].kept;
	snprintf(kept, PATH_MAX, "%s", path);
	do
		to_parent(kept);
	while (stat(kept, &st) < 0 && strcmp(kept, "/") && strcmp(kept, "."));
	u->n++;
}

void tgt_start_undo_run(struct tgt_start_undo *u)
{
	while (u->n) {
		char dir[PATH_MAX];

		u->n--;
		snprintf(dir, sizeof(dir), "%s", u->dirs[u->n].path);
		while (strcmp(dir, u->dirs[u->n].kept) && strcmp(dir, "/") &&
		       strcmp(dir, ".")) {
			if (rmdir(dir) < 0) {
				if (errno != ENOENT)
					break;	/* not empty: someone's, keep it */
			} else {
				rblk_info("removed %s, which this start created", dir);
			}
			to_parent(dir);
		}
	}
}
