"""A synchronous client of the Boxline server's HTTP API, on http.client with keep-alive."""
import base64
import http.client
import json
import socket
import threading
import time
import urllib.parse
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

from .errors import BoxlineError, Unavailable, error_for
from .models import (Batch, Caller, DeadLetter, Event, OutgoingEvent, Published, PublishResult, Settlement,
                     Subscription, SubscriptionLag, Topic)

__version__ = "0.1.0"
USER_AGENT = "boxline-python/" + __version__
# The version of the server's HTTP API this client is written for: a server that cannot answer it
# refuses every request with 400 unsupported_version, naming both versions.
API_VERSION = "1.0"

# A reused keep-alive connection that the server closed while idle fails with one of these before
# any answer; the request is then sent again once, on a fresh connection.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


def _seg(name: str) -> str:
    # A topic or subscription name is one path segment, its slashes encoded.
    return urllib.parse.quote(name, safe="")


class Client:
    """Talks to one Boxline server with one token. Safe to share between threads.

    >>> client = Client("http://127.0.0.1:8080", token)
    >>> client.publish("acme/orders", {"orderId": 7}, key="order-7", type="OrderPlaced")
    """

    def __init__(self, base_url: str, token: str, timeout: float = 30.0, retries: int = 3):
        url = urllib.parse.urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError("base_url must be http://host:port or https://host:port, not %r"
                             % base_url)
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries  # how often a 503 with Retry-After is tried again
        self._https = url.scheme == "https"
        self._host = url.hostname
        self._port = url.port or (443 if self._https else 80)
        self._prefix = url.path.rstrip("/")
        self._idle: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    # -- plumbing ----------------------------------------------------------------------------

    def _connect(self, timeout: float) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=timeout)

    def headers(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        h = {"Authorization": "Bearer " + self.token, "User-Agent": USER_AGENT,
             "Boxline-Api": API_VERSION, "Accept": "application/json"}
        h.update(extra or {})
        return h

    def request(self, method: str, path: str, body: Any = None, query: Optional[Dict] = None,
                timeout: Optional[float] = None) -> Any:
        """Sends one request and returns the parsed JSON answer; raises BoxlineError on an error."""
        if query:
            path += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = self.headers({"Content-Type": "application/json"} if data is not None else None)
        attempt = 0
        while True:
            status, raw, retry_after = self._send(method, self._prefix + path, data, headers,
                                                  timeout or self.timeout)
            try:
                answer = json.loads(raw) if raw else None
            except ValueError:
                answer = None
            if status < 300:
                return answer
            err = error_for(status, answer if isinstance(answer, dict) else
                            {"message": raw[:200].decode("utf-8", "replace")}, retry_after)
            if isinstance(err, Unavailable) and retry_after is not None and attempt < self.retries:
                attempt += 1
                time.sleep(min(retry_after, 30.0))
                continue
            raise err

    def _send(self, method, path, data, headers, timeout):
        for fresh in (False, True):
            conn = None
            if not fresh:
                with self._lock:
                    conn = self._idle.pop() if self._idle else None
            reused = conn is not None
            if conn is None:
                conn = self._connect(timeout)
            try:
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
            except _STALE:
                conn.close()
                if reused:
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            if resp.will_close:
                conn.close()
            else:
                with self._lock:
                    self._idle.append(conn)
            retry_after = resp.getheader("Retry-After")
            try:
                retry_after = float(retry_after) if retry_after is not None else None
            except ValueError:
                retry_after = None
            return resp.status, raw, retry_after
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- publishing ---------------------------------------------------------------------------

    def publish(self, topic: str, payload: Any = None, key: Optional[str] = None,
                type: Optional[str] = None, headers: Optional[Dict[str, str]] = None,
                idempotency_key: Optional[str] = None, **fields: Any) -> Published:
        """Publishes one event. `payload` is any JSON value, or bytes (sent as payloadBase64).

        Further fields of OutgoingEvent go as keywords: id, source, content_type, deliver_at.
        """
        if type is None:
            raise ValueError("an event needs a type, such as type='OrderPlaced'")
        event = _outgoing(dict(fields, type=type, key=key, payload=payload, headers=headers,
                               idempotency_key=idempotency_key))
        answer = self.request("POST", "/v1/topics/%s/events" % _seg(topic), event)
        return PublishResult.from_json(answer).results[0]

    def publish_batch(self, topic: str,
                      events: Iterable[Union[OutgoingEvent, Dict[str, Any]]]) -> PublishResult:
        """Publishes events all or nothing, in one transaction; one result per event, in order.

        Each event is an OutgoingEvent or a dict with the wire's field names (type, key, payload…).
        """
        batch = [e.to_json() if isinstance(e, OutgoingEvent) else e for e in events]
        answer = self.request("POST", "/v1/topics/%s/events" % _seg(topic), {"events": batch})
        return PublishResult.from_json(answer)

    # -- tail ---------------------------------------------------------------------------------

    def tail(self, topic: str, from_: str = "latest", position: Optional[str] = None,
             key: Optional[str] = None, type: Optional[str] = None,
             read_timeout: float = 45.0, max_reconnects: int = 10) -> "Tail":
        """Follows a topic: an iterator of Events that reconnects after a dropped connection and
        resumes after the last event it gave (its `position`). See Tail."""
        return Tail(self, topic, from_, position, key, type, read_timeout, max_reconnects)

    # -- admin --------------------------------------------------------------------------------

    def whoami(self) -> Caller:
        return Caller.from_json(self.request("GET", "/v1/whoami"))

    def create_topic(self, name: str, partitions: Optional[int] = None,
                     sequencing: Optional[str] = None) -> Topic:
        body = {"name": name, "partitions": partitions, "sequencing": sequencing}
        return Topic.from_json(self.request("POST", "/v1/topics", _no_none(body)))

    def delete_topic(self, name: str, force: bool = False) -> None:
        self.request("DELETE", "/v1/topics/" + _seg(name), query={"force": "true"} if force else None)

    def create_subscription(self, name: str, topics: List[str],
                            start: Optional[str] = None) -> Subscription:
        body = {"name": name, "topics": list(topics), "start": start}
        return Subscription.from_json(self.request("POST", "/v1/subscriptions", _no_none(body)))

    def delete_subscription(self, name: str, force: bool = False) -> None:
        self.request("DELETE", "/v1/subscriptions/" + _seg(name),
                     query={"force": "true"} if force else None)

    def lag(self, subscription: str) -> SubscriptionLag:
        return SubscriptionLag.from_json(
            self.request("GET", "/v1/subscriptions/%s/lag" % _seg(subscription)))

    def dead_letters(self, subscription: str, limit: int = 100) -> List[DeadLetter]:
        answer = self.request("GET", "/v1/subscriptions/%s/dead-letters" % _seg(subscription),
                              query={"limit": limit})
        return [DeadLetter.from_json(d) for d in answer["deadLetters"]]

    def group(self, subscription: str) -> Dict[str, Any]:
        """The consumer group as JSON: members, partitions, policy."""
        return self.request("GET", "/v1/subscriptions/%s/group" % _seg(subscription))

    # -- group member, one call each (boxline.Member runs the loop) -----------------------------

    def fetch(self, subscription: str, member: str, max: Optional[int] = None,
              wait_millis: int = 0, weight: Optional[float] = None,
              settle: Optional[List[Settlement]] = None) -> Batch:
        """Checks the member in and fetches events; `settle` is settled first, in the same call."""
        body = _no_none({"max": max, "waitMillis": wait_millis, "weight": weight,
                         "settle": [s.to_json() for s in settle] if settle else None})
        # The long poll holds the answer back up to wait_millis: read that much longer.
        answer = self.request("POST", _member(subscription, member) + "/fetch", body,
                              timeout=self.timeout + wait_millis / 1000.0)
        return Batch.from_json(answer)

    def settle(self, subscription: str, member: str, settlements: List[Settlement]) -> int:
        """Settles fetched events; the number settled. Conflict (409) names refused partitions."""
        answer = self.request("POST", _member(subscription, member) + "/settle",
                              {"settle": [s.to_json() for s in settlements]})
        return int(answer.get("settled", 0))

    def leave(self, subscription: str, member: str) -> bool:
        """Leaves the group: the member's partitions are free for the others at once."""
        answer = self.request("DELETE", _member(subscription, member))
        return bool(answer and answer.get("left"))


def _member(subscription: str, member: str) -> str:
    return "/v1/subscriptions/%s/members/%s" % (_seg(subscription), _seg(member))


def _no_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _outgoing(fields: Dict[str, Any]) -> Dict[str, Any]:
    payload = fields.pop("payload", None)
    if isinstance(payload, (bytes, bytearray, memoryview)):
        fields["payload_base64"] = base64.b64encode(bytes(payload)).decode("ascii")
    else:
        fields["payload"] = payload
    return OutgoingEvent(**fields).to_json()


class Tail:
    """An iterator over a topic's events from its server-sent-event stream.

    `position` is the stream's id after the last event given out; after a dropped connection the
    tail reconnects with it (Last-Event-ID) and goes on after that event, so no event is given
    twice or skipped. It gives up after `max_reconnects` connections in a row that delivered
    nothing. `close()` ends the iteration, also from another thread.
    """

    def __init__(self, client: Client, topic: str, from_: str, position: Optional[str],
                 key: Optional[str], type: Optional[str], read_timeout: float,
                 max_reconnects: int):
        self._client = client
        self._path = "%s/v1/topics/%s/tail?%s" % (client._prefix, _seg(topic), urllib.parse.urlencode(
            _no_none({"from": from_, "key": key, "type": type})))
        self.position = position
        self.connections = 0
        self._read_timeout = read_timeout
        self._max_reconnects = max_reconnects
        self._retry_ms = 1000
        self._conn: Optional[http.client.HTTPConnection] = None
        self._closed = False
        self._lock = threading.Lock()
        self._events = self._run()

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)  # wakes a read blocked in another thread
            except OSError:
                pass

    def __enter__(self) -> "Tail":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _open(self):
        headers = self._client.headers({"Accept": "text/event-stream"})
        if self.position:
            headers["Last-Event-ID"] = self.position
        conn = self._client._connect(self._read_timeout)
        with self._lock:
            if self._closed:
                return None, None
            self._conn = conn
        conn.request("GET", self._path, headers=headers)
        resp = conn.getresponse()
        self.connections += 1
        if resp.status != 200:
            raw = resp.read()
            conn.close()
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"message": raw[:200].decode("utf-8", "replace")}
            retry_after = resp.getheader("Retry-After")
            raise error_for(resp.status, body, float(retry_after) if retry_after else None)
        return conn, resp

    def _run(self) -> Iterator[Event]:
        idle_connections = 0
        while not self._closed:
            delivered = False
            conn = None
            try:
                conn, resp = self._open()
                if conn is None:
                    return
                for event_id, event_type, data in _sse(resp, self):
                    if event_type == "event" and data is not None:
                        event = Event.from_json(json.loads(data))
                        if event_id is not None:
                            self.position = event_id
                        delivered = True
                        yield event
            except (OSError, http.client.HTTPException) as e:
                if self._closed:
                    return
                last_error: BaseException = e
            except BoxlineError as e:
                if e.status != 503:
                    raise
                last_error = e
            else:
                last_error = EOFError("the server ended the stream")
            finally:
                if conn is not None:
                    conn.close()
            if self._closed:
                return
            # A stream that delivered something is resumed at once; one that did not waits the
            # server's `retry` interval, and only so many times in a row.
            idle_connections = 0 if delivered else idle_connections + 1
            if idle_connections > self._max_reconnects:
                raise ConnectionError("the tail reconnected %d times without an event; last error: %s"
                                      % (self._max_reconnects, last_error)) from last_error
            if not delivered:
                time.sleep(self._retry_ms / 1000.0)


def _sse(resp, tail: Tail):
    """Yields (id, event, data) per server-sent event; sets tail._retry_ms from `retry:`."""
    event_id, event_type, data = None, None, []
    while True:
        raw = resp.readline()
        if not raw:
            return
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data or event_type:
                yield event_id, event_type or "message", "\n".join(data) if data else None
            event_id, event_type, data = None, None, []
            continue
        if line.startswith(":"):
            continue  # keep-alive comment
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            event_id = value
        elif name == "event":
            event_type = value
        elif name == "data":
            data.append(value)
        elif name == "retry" and value.isdigit():
            tail._retry_ms = int(value)
