#!/usr/bin/env python3
"""Opens N connections to a server on 127.0.0.1:PORT that stop in the middle of their headers, then asks
for /health/live five times with curl (5 s limit each) and prints status and milliseconds per call.

    python3 hostile.py PORT N

Used for the side-by-side of the JDK HttpServer build and the Jetty build in docs/benchmarks.md (S1).
Only loopback is contacted; the connections close when it ends."""
import socket
import subprocess
import sys
import time

port, n = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    held.append(s)
results = []
for _ in range(5):
    t0 = time.time()
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5",
                        f"http://127.0.0.1:{port}/health/live"], capture_output=True, text=True)
    results.append((r.stdout, round((time.time() - t0) * 1000, 1)))
print(port, n, results)
for s in held:
    s.close()
