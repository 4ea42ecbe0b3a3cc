"""An asyncio member of a subscription's consumer group: fetch, handle, settle, leave."""
import asyncio
import inspect
import logging
import signal
import threading
from typing import Any, Awaitable, Callable, Dict, List, Optional, Union

from .client import Client
from .errors import BadRequest, BoxlineError, Conflict, Unavailable
from .models import Batch, Delivery, Settlement

log = logging.getLogger("boxline.member")

Handler = Callable[[Delivery], Union[None, Awaitable[None]]]


class Retry(Exception):
    """Raised by a handler: try the event again after `after` seconds (None: the server's backoff).

    The key's later events wait behind it, so the key's order holds."""

    def __init__(self, after: Optional[float] = None, reason: str = "retry requested"):
        super().__init__(reason)
        self.after = after
        self.reason = reason


class DeadLetter(Exception):
    """Raised by a handler: the event can never succeed; dead-letter it with this reason."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Member:
    """A member of `subscription`'s group. `await member.run(handler)` loops until stopped.

    The handler gets each Delivery (`.event`, `.attempt`). Returning settles the event `done`;
    raising Retry or DeadLetter settles it `retry` or `dead`; any other exception is a `retry` under
    the subscription's retry policy. Events of one key are handled one after another, in order;
    different keys run concurrently, at most `max_in_flight` at a time. A sync handler runs in a
    worker thread, so it may block. Each batch is settled with the next fetch (one request).

    stop(), SIGINT or SIGTERM (when run on the main thread) end the loop gracefully: what is
    handled is settled, then the member leaves the group so the others take its partitions at once.
    """

    def __init__(self, client_or_url: Union[Client, str], token: Optional[str] = None,
                 subscription: str = "", member_id: str = "", max_in_flight: int = 16,
                 wait_millis: int = 10000, max_events: int = 100, weight: Optional[float] = None,
                 handle_signals: bool = True):
        if isinstance(client_or_url, Client):
            self.client = client_or_url
        else:
            if token is None:
                raise ValueError("a token is needed with a URL")
            self.client = Client(client_or_url, token)
        if not subscription or not member_id:
            raise ValueError("subscription and member_id are required")
        self.subscription = subscription
        self.member_id = member_id
        self.max_in_flight = max_in_flight
        self.wait_millis = wait_millis
        self.max_events = max_events
        self.weight = weight
        self.handle_signals = handle_signals
        # Counters, for logs and tests.
        self.handled = 0
        self.conflicts = 0
        self.batches = 0
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._stopping: Optional[asyncio.Event] = None
        self._stop_requested = False

    def stop(self) -> None:
        """Asks the loop to settle, leave and return. Safe from any thread and from a handler."""
        self._stop_requested = True
        loop, stopping = self._loop, self._stopping
        if loop is None or stopping is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            stopping.set()
        else:
            loop.call_soon_threadsafe(stopping.set)

    async def run(self, handler: Handler) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        if self._stop_requested:
            self._stopping.set()
        signals = self._install_signals()
        pending: List[Settlement] = []
        failures = 0
        try:
            while not self._stopping.is_set():
                try:
                    batch = await self._fetch(pending)
                    failures = 0
                except Conflict as e:
                    self.conflicts += 1
                    if e.body.get("refused") is not None:
                        # Fencing: those partitions moved to another member, which gets their events
                        # again. Nothing to keep; fetch again.
                        log.info("member %s: settle refused for %s; fetching again",
                                 self.member_id, [(r.topic, r.partition) for r in e.refused])
                        pending = []
                        continue
                    failures += 1  # the group's maxMembers does not admit this member yet
                    pending = []
                    await self._pause(failures)
                    continue
                except BadRequest as e:
                    if not pending:
                        raise  # a bad member id, max or waitMillis: nothing to retry
                    # The settlement did not match the fetch (a client bug): its events come again.
                    log.error("member %s: settlement refused, its events come again: %s",
                              self.member_id, e)
                    pending = []
                    continue
                except (OSError, Unavailable) as e:
                    # The answer was lost: the settlement may or may not have been taken; the next
                    # fetch shows which, as what was not taken comes again.
                    failures += 1
                    pending = []
                    log.warning("member %s: fetch failed (%s); trying again", self.member_id, e)
                    await self._pause(failures)
                    continue
                pending = []
                if batch is None:
                    break  # stopped while waiting for events: nothing was handled
                if batch.events:
                    self.batches += 1
                    pending = await self._handle(batch, handler)
            if pending:
                try:
                    await asyncio.to_thread(self.client.settle, self.subscription, self.member_id,
                                            pending)
                except Conflict:
                    self.conflicts += 1  # moved on: the new owner handles them again
                except (OSError, BoxlineError) as e:
                    log.warning("member %s: last settle failed (%s)", self.member_id, e)
        finally:
            await self._leave()
            for sig in signals:
                self._loop.remove_signal_handler(sig)

    def _install_signals(self) -> List[int]:
        if not self.handle_signals or threading.current_thread() is not threading.main_thread():
            return []
        installed = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._loop.add_signal_handler(sig, self.stop)
                installed.append(sig)
            except (NotImplementedError, RuntimeError):
                pass  # not on this platform or loop
        return installed

    async def _pause(self, failures: int) -> None:
        # Backs off up to 5 s, but wakes at once on stop().
        try:
            await asyncio.wait_for(self._stopping.wait(), min(5.0, 0.1 * 2 ** failures))
        except asyncio.TimeoutError:
            pass

    async def _fetch(self, pending: List[Settlement]) -> Optional[Batch]:
        """The next batch, settling `pending` first; None when stopped during the long poll."""
        fetch = asyncio.ensure_future(asyncio.to_thread(
            self.client.fetch, self.subscription, self.member_id, max=self.max_events,
            wait_millis=self.wait_millis, weight=self.weight, settle=pending))
        stopping = asyncio.ensure_future(self._stopping.wait())
        done, _ = await asyncio.wait({fetch, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if fetch in done:
            stopping.cancel()
            return fetch.result()
        # Leaving ends the long poll at once. Events it may still return are not handled: having
        # left, the member could not settle them, and they go to the next owner.
        await self._leave()
        try:
            await fetch
        except (OSError, BoxlineError):
            pass
        # The fetch and the leave may travel on different connections: a fetch the server read
        # after the leave checked the member in again. Leaving once more, after its answer, ends it.
        self._left = False
        await self._leave()
        return None

    async def _leave(self) -> None:
        if getattr(self, "_left", False):
            return
        self._left = True
        try:
            await asyncio.to_thread(self.client.leave, self.subscription, self.member_id)
        except (OSError, BoxlineError) as e:
            log.warning("member %s: leave failed (%s); its deadline frees its partitions",
                        self.member_id, e)

    async def _handle(self, batch: Batch, handler: Handler) -> List[Settlement]:
        """Handles a batch, each key in order, and returns its settlement."""
        chains: Dict[Any, List[Delivery]] = {}
        for i, d in enumerate(batch.events):
            # Keyless events have no order to keep: each is a chain of its own.
            chains.setdefault(d.event.key if d.event.key is not None else ("keyless", i), []).append(d)
        outcomes: Dict[str, Settlement] = {}
        behind_retry = set()
        limit = asyncio.Semaphore(self.max_in_flight)

        async def run_chain(chain: List[Delivery]) -> None:
            for n, d in enumerate(chain):
                if self._stopping.is_set():
                    return  # stopping: the rest of the batch comes again to the next owner
                async with limit:
                    outcome = await self._call(handler, d)
                outcomes[d.ack_id] = outcome
                if outcome.outcome == "retry":
                    # The key's later events are left out: the server parks them behind the retry.
                    behind_retry.update(x.ack_id for x in chain[n + 1:])
                    return

        await asyncio.gather(*(run_chain(c) for c in chains.values()))
        # Per partition the settlement is a run from the first event delivered: it stops at the
        # first event not handled (stopping), as a hole would be refused.
        settle: List[Settlement] = []
        cut = set()
        for d in batch.events:
            part = (d.event.topic, d.event.partition)
            if part in cut or d.ack_id in behind_retry:
                continue
            if d.ack_id not in outcomes:
                cut.add(part)
                continue
            settle.append(outcomes[d.ack_id])
        return settle

    async def _call(self, handler: Handler, d: Delivery) -> Settlement:
        try:
            if inspect.iscoroutinefunction(handler):
                await handler(d)
            else:
                result = await asyncio.to_thread(handler, d)
                if inspect.isawaitable(result):
                    await result
            self.handled += 1
            return Settlement(ack_id=d.ack_id, outcome="done")
        except Retry as e:
            retry_in = None if e.after is None else "%dms" % max(0, int(e.after * 1000))
            return Settlement(ack_id=d.ack_id, outcome="retry", retry_in=retry_in,
                              reason=e.reason[:1000])
        except DeadLetter as e:
            return Settlement(ack_id=d.ack_id, outcome="dead", reason=e.reason[:1000])
        except Exception as e:  # noqa: BLE001 - any failure of the handler is a retry
            log.warning("member %s: handler failed on %s/%s #%s: %r", self.member_id,
                        d.event.topic, d.event.partition, d.event.sequence, e)
            return Settlement(ack_id=d.ack_id, outcome="retry", reason=repr(e)[:1000])
