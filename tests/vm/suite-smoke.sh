#!/bin/bash
# SPDX-License-Identifier: MIT
# VM smoke suite: the guest kernel has what the RDMA, ublk and NVMe-oF tests
# need.  Cases: tests/vm/guest/suite-smoke.guest.sh.
. "$(dirname "$0")/host-lib.sh"
vm_suite smoke -t 600
