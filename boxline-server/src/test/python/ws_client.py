#!/usr/bin/python3
"""A Boxline WebSocket client in Python (Debian's python3-websockets).

  ws_client.py tail    ws://host:port TOKEN TOPIC N         follows TOPIC from the earliest event
  ws_client.py consume ws://host:port TOKEN SUBSCRIPTION N  a group member: fetch, settle done, leave

The token travels as the subprotocol bearer.<token>, as a browser would send it.
"""
import asyncio
import json
import sys
import urllib.parse

import websockets


def connect(url, token):
    return websockets.connect(url, subprotocols=["boxline.v1", "bearer." + token])


async def tail(base, token, topic, n):
    url = base + "/v1/ws/topics/" + urllib.parse.quote(topic, safe="") + "/tail?from=earliest"
    got = 0
    async with connect(url, token) as ws:
        assert ws.subprotocol == "boxline.v1", ws.subprotocol
        while got < n:
            m = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if m["type"] != "event":
                raise SystemExit("unexpected message: " + json.dumps(m))
            e = m["event"]
            print("event", m["position"], e["key"], json.dumps(e["payload"]), flush=True)
            got += 1
    print("tailed", got, "events")


async def consume(base, token, subscription, n):
    url = base + "/v1/ws/subscriptions/" + urllib.parse.quote(subscription, safe="") + "/members/py-1"
    got = 0
    async with connect(url, token) as ws:
        while got < n:
            await ws.send(json.dumps({"op": "fetch", "max": 100}))
            m = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if m["type"] != "batch":
                raise SystemExit("unexpected message: " + json.dumps(m))
            for d in m["events"]:
                print("consumed", d["event"]["key"], json.dumps(d["event"]["payload"]), flush=True)
            got += len(m["events"])
            await ws.send(json.dumps({"op": "settle", "id": got, "settle": [
                {"ackId": d["ackId"], "outcome": "done"} for d in m["events"]]}))
            m = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if m["type"] != "settled":
                raise SystemExit("unexpected message: " + json.dumps(m))
        await ws.send(json.dumps({"op": "leave"}))
        m = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert m["type"] == "left", m
    print("consumed", got, "events")


if __name__ == "__main__":
    mode, base, token, name, n = sys.argv[1:6]
    asyncio.run((tail if mode == "tail" else consume)(base, token, name, int(n)))
