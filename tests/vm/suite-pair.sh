#!/bin/bash
# SPDX-License-Identifier: MIT
# Two-node VM suite: a target node and a client node joined by a virtual
# link (UDP frames between two QEMUs), Soft-RoCE on each end.  Proves the
# harness the fault cases stand on: the link, RDMA across it, a link drop,
# and a power cut of the target node that keeps exactly what was flushed.
# Cases: tests/vm/guest/suite-pair.guest.sh.
. "$(dirname "$0")/host-lib.sh"
vm_require_build rblk-target rblk-fio.so
vm_pair_suite pair
