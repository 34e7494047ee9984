"""The engine writing a dataset while hdmf-zarr goes on (docs/python.md,
"Overlap"): NWBZarrIO.write hands each large dataset whose source needs no
Python (a memmap's file, a numpy buffer) to one background thread and
returns to hdmf-zarr at once, so the rest of the metadata, the spec cache
and the other small datasets are written while the chunks are; ``finish``
waits for the data before the file is consolidated and marked complete.

The fills run one after another on that thread, never two at once, so the
engine's memory budget still bounds what is in flight. Signals reach only
the main thread: a Ctrl-C there (or any exception) sets ``cancel``, which
the engine polls, and the background write stops within about a task.
"""

import queue
import threading


class Overlap:
    """Engine fills run in order on one thread; their results are handled
    (``done(result, error)``) on the caller's thread, in order, by ``finish``."""

    def __init__(self):
        self.cancel = threading.Event()
        self._queue = queue.SimpleQueue()  # (fill, box), then None: the thread's end
        self._pending = []  # (box, done) not handed to done yet; box = [result, error, finished]
        self._thread = None
        self._running = threading.Event()  # the thread has started
        self._exited = threading.Event()   # ... and ended

    def submit(self, fill, done):
        """Run ``fill(cancel)`` in the background, after the fills before it."""
        box = [None, None, threading.Event()]
        self._pending.append((box, done))
        self._queue.put((fill, box))
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="nwbzarr-fill", daemon=True)
            self._thread.start()

    def _run(self):
        self._running.set()
        try:
            while (item := self._queue.get()) is not None:
                fill, box = item
                try:
                    if self.cancel.is_set():
                        raise KeyboardInterrupt  # stopped before it began (dropped by stop)
                    box[0] = fill(self.cancel)
                except BaseException as e:
                    box[1] = e
                finally:
                    box[2].set()
        finally:
            self._exited.set()

    def finish(self):
        """Wait for every fill and hand each to its ``done`` in order; the
        first exception (one that ``done`` re-raises, or a Ctrl-C while
        waiting) stops the fills still running and propagates."""
        try:
            while self._pending:
                box, done = self._pending[0]
                box[2].wait()
                self._pending.pop(0)
                done(box[0], box[1])
        except BaseException:
            self.stop()
            raise

    def stop(self):
        """Cancel what is running or queued and wait until the thread has
        ended (results dropped: the caller is already failing). A thread
        whose start was interrupted before it ran never runs a fill: it
        finds ``cancel`` set."""
        self.cancel.set()
        self._pending = []
        self.close(wait_start=1.0)

    def close(self, wait_start=None):
        """End the thread (after what is queued) and wait for it."""
        self._queue.put(None)
        if self._thread is not None and self._running.wait(wait_start):
            self._exited.wait()
