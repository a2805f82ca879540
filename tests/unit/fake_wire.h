/* SPDX-License-Identifier: MIT */
/*
 * Socket I/O for the scripted in-process targets of the client unit tests
 * (test_client.c, test_reconnect.c): whole-buffer reads and writes, and
 * reading one PDU.
 */
#ifndef RBLK_TESTS_UNIT_FAKE_WIRE_H
#define RBLK_TESTS_UNIT_FAKE_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Reads exactly n bytes from fd; -1 on EOF or error. */
int rfull(int fd, void *b, size_t n);
/* Writes all n bytes to fd without SIGPIPE (the client may have hung up
 * already); -1 when it could not. */
int wfull(int fd, const void *b, size_t n);
/* Reads one PDU into buf (RBLK_MAX_PDU bytes) and checks its header;
 * -1 on EOF, error or a bad header. */
int read_pdu(int fd, uint8_t *buf, uint8_t *type, uint32_t *len);

#endif
