"""A group member as its own process, for test_member: handles events by appending
`key i pid` to a file, until SIGTERM (then it settles, leaves and exits 0).

    python3 member_proc.py URL TOKEN SUBSCRIPTION MEMBER_ID OUTFILE
"""
import asyncio
import os
import sys
import time

import boxline


def main(url, token, subscription, member_id, outfile):
    out = open(outfile, "a", buffering=1)  # line-buffered: a SIGKILL loses no written line
    pid = os.getpid()

    def handle(delivery):
        event = delivery.event
        time.sleep(0.01)  # the work of a real handler, so that the run lasts past the kill
        out.write("%s %d %d\n" % (event.key, event.payload["i"], pid))

    member = boxline.Member(url, token, subscription, member_id, max_in_flight=2, max_events=20,
                            wait_millis=500)
    asyncio.run(member.run(handle))
    out.close()
    print("member %s handled %d, %d conflicts" % (member_id, member.handled, member.conflicts))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
