/* SPDX-License-Identifier: MIT */
/*
 * What the control path (conn_ctrl.c) uses of the I/O path and the
 * connection core (conn.c); nothing outside target/conn*.c includes it.
 */
#ifndef RBLK_TARGET_CONN_INT_H
#define RBLK_TARGET_CONN_INT_H

#include "conn.h"

/* A CMD PDU (have bytes of it at hand, pdu_len in all): the I/O path. */
int tgt_conn_cmd(struct tgt_conn *c, const void *buf, size_t have,
		 uint32_t pdu_len);
/* LOGIN passed: the login_timeout timer is not needed any more. */
void tgt_conn_login_timer_cancel(struct tgt_conn *c);
/* Closes gracefully after pdu (n bytes), which goes out after the answers
 * of the commands still running. */
void tgt_conn_close_told(struct tgt_conn *c, const void *pdu, size_t n,
			 const char *why);
/* The same with a LOGIN_RSP of status: every LOGIN read gets one. */
void tgt_conn_close_login_told(struct tgt_conn *c, int status, const char *why);

#endif /* RBLK_TARGET_CONN_INT_H */
