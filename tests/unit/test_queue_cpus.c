// SPDX-License-Identifier: MIT
/*
 * A ublk queue thread's CPUs (initiator/queue_cpus.c): the kernel's set
 * for the queue against the CPUs the process may use.  That the threads
 * really run there is asserted in the VM (suite-ublk attach-list-detach).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../initiator/queue_cpus.h"

static void set_of(cpu_set_t *s, const int *cpus, unsigned n)
{
	CPU_ZERO(s);
	for (unsigned i = 0; i < n; i++)
		CPU_SET(cpus[i], s);
}

/* One queue per CPU: each thread goes to its own CPU. */
static void narrows_to_queue(void **state)
{
	cpu_set_t q, allowed, out;

	set_of(&q, (int[]){ 1 }, 1);
	set_of(&allowed, (int[]){ 0, 1, 2, 3 }, 4);
	assert_int_equal(ini_queue_cpus(&q, &allowed, &out), 1);
	assert_int_equal(CPU_COUNT(&out), 1);
	assert_true(CPU_ISSET(1, &out));
}

/* An admin's taskset wins: only the CPUs both sets have. */
static void keeps_within_allowed(void **state)
{
	cpu_set_t q, allowed, out;

	set_of(&q, (int[]){ 0, 1 }, 2);
	set_of(&allowed, (int[]){ 1, 2, 3 }, 3);
	assert_int_equal(ini_queue_cpus(&q, &allowed, &out), 1);
	assert_int_equal(CPU_COUNT(&out), 1);
	assert_true(CPU_ISSET(1, &out));
}

/* Nothing to pin: the sets do not meet, or the queue takes every
 * allowed CPU (one queue on the whole machine). */
static void leaves_thread_alone(void **state)
{
	cpu_set_t q, allowed, out;

	set_of(&q, (int[]){ 0 }, 1);
	set_of(&allowed, (int[]){ 2, 3 }, 2);
	assert_int_equal(ini_queue_cpus(&q, &allowed, &out), 0);
	set_of(&q, (int[]){ 0, 1, 2, 3 }, 4);
	set_of(&allowed, (int[]){ 0, 1, 2, 3 }, 4);
	assert_int_equal(ini_queue_cpus(&q, &allowed, &out), 0);
	set_of(&allowed, (int[]){ 1, 3 }, 2);
	assert_int_equal(ini_queue_cpus(&q, &allowed, &out), 0);
}

static void formats_ranges(void **state)
{
	cpu_set_t s;
	char buf[64];

	set_of(&s, (int[]){ 0, 1, 2, 3, 6, 8, 9 }, 7);
	ini_cpus_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,6,8-9");
	set_of(&s, (int[]){ 5 }, 1);
	ini_cpus_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "5");
	CPU_ZERO(&s);
	ini_cpus_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* The last CPU a set can name ends a range too. */
	set_of(&s, (int[]){ CPU_SETSIZE - 2, CPU_SETSIZE - 1 }, 2);
	ini_cpus_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "1022-1023");
	/* Too small a buffer: cut, and still a string. */
	set_of(&s, (int[]){ 10, 12, 14, 16 }, 4);
	ini_cpus_format(&s, buf, 6);
	assert_int_equal(strlen(buf), 5);
	assert_memory_equal(buf, "10,12", 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(narrows_to_queue),
		cmocka_unit_test(keeps_within_allowed),
		cmocka_unit_test(leaves_thread_alone),
		cmocka_unit_test(formats_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
