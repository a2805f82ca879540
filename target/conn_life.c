// SPDX-License-Identifier: MIT
/*
 * A connection's lifetime: its references, and what the last one frees.
 * Below conn.c and bufshare.c, which both hold references (a waiting
 * connection is kept alive until its wake-up), and calls neither.
 */
#include "conn.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "hosts.h"
#include "log.h"
#include "server.h"

void tgt_conn_get(struct tgt_conn *c)
{
	c->refs++;
}

void tgt_conn_defer_once(struct tgt_conn *c, struct tgt_event *ev, bool *queued)
{
	if (*queued)
		return;
	*queued = true;
	tgt_conn_get(c);
	tgt_reactor_defer(c->r, ev, 0);
}

void tgt_conn_put(struct tgt_conn *c)
{
	struct tgt_conn **pp;

	if (--c->refs > 0)
		return;
	for (pp = tgt_reactor_conn_list(c->r); *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	atomic_fetch_sub(&c->srv->conns_open, 1);
	tgt_host_put(c->phost);
	c->phost = NULL;
	tgt_host_prelogin_put(c->prelogin);
	c->prelogin = NULL;
	RBLK_DBG(RBLK_DBG_CONN, "reactor%u: %s: freed", tgt_reactor_id(c->r),
		 c->peer);
	free(c->reqs);
	c->reqs = NULL;
	/* No command is in flight any more: the export may go now. */
	if (c->sess)
		tgt_session_close(c->sess);
	c->sess = NULL;
	c->ops->free(c);
}
