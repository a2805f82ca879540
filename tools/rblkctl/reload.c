// SPDX-License-Identifier: MIT
/*
 * rblkctl reload: the target reads its config file again and applies
 * what changed (docs/admin.md, "Editing the config"), as SIGHUP does, but
 * with the outcome on the terminal: what was added, removed and changed,
 * which [target] keys wait for a restart, or why nothing changed.
 */
#include <stdio.h>
#include <string.h>

#include "ctl.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl reload [--socket PATH] [--json]\n"
"The target reads its config file again and applies what changed: volumes\n"
"added or removed (their files are kept), a volume whose store changed is\n"
"replaced (refused while it has sessions), allow_hosts, allow_any_host and\n"
"secrets of the others apply to new logins.  All or nothing: a file that\n"
"does not parse, a store that does not open, a secret that cannot be used\n"
"change nothing, and the reason is printed.  Sessions of volumes that did\n"
"not change are not touched.  The same as SIGHUP (systemctl reload).\n");
}

/* "a, b" of a JSON array of strings, or "-". */
static void print_names(const char *what, json_object *rsp, const char *key)
{
	json_object *arr;
	size_t n;

	if (!json_object_object_get_ex(rsp, key, &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return;
	n = json_object_array_length(arr);
	printf("  %-16s", what);
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? ", " : "",
		       json_object_get_string(json_object_array_get_idx(arr, i)));
	printf("%s\n", n ? "" : "-");
}

int rblkctl_reload(int argc, char **argv)
{
	json_object *req, *rsp;
	int ret = ctl_no_args(argc, argv, "reload", usage);

	if (ret >= 0)
		return ret;
	req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("config.reload"));
	if (ctl_request(req, &rsp))
		return 1;
	if (ctl_json) {
		ctl_print_json(rsp);
	} else {
		printf("reloaded %s\n", ctl_jstr(rsp, "config", "the config"));
		print_names("added:", rsp, "added");
		print_names("removed:", rsp, "removed");
		print_names("changed:", rsp, "changed");
		print_names("at next start:", rsp, "restart_needed");
	}
	json_object_put(rsp);
	return 0;
}
