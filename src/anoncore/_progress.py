"""A tiny progress bar for the command line: drawn on a terminal, silent when stderr is piped."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO


class Progress:
    """Progress of a job made of ``total`` units (or of named steps when ``total`` is None).

    The bar is drawn on ``stream`` (default ``sys.stderr``) only when ``enabled`` is True, which by default
    means the stream is a terminal, so piped and captured output stays clean. Redraws are throttled to
    ``min_interval`` seconds.

    Examples
    --------
    >>> with Progress(3, "demo", enabled=False) as p:
    ...     for _ in range(3):
    ...         p.advance()
    >>> p.done
    3
    """

    def __init__(self, total: int | None = None, desc: str = "", *, enabled: bool | None = None,
                 stream: TextIO | None = None, width: int = 30, min_interval: float = 0.1) -> None:
        self.total = total
        self.desc = desc
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty()) if callable(isatty) else False
        self.enabled = enabled
        self.width = width
        self.min_interval = min_interval
        self.done = 0
        self.step = ""
        self._start = time.perf_counter()
        self._last = 0.0
        self._drawn = False

    def __enter__(self) -> Progress:  # noqa: PYI034
        self._draw(force=True)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def advance(self, n: int = 1, step: str | None = None) -> None:
        """Count ``n`` more units done (and optionally name the current step)."""
        self.done += n
        if step is not None:
            self.step = step
        self._draw()

    def set_step(self, step: str) -> None:
        """Name the step being worked on (shown after the bar)."""
        self.step = step
        self._draw(force=True)

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._last < self.min_interval and (self.total is None or self.done < self.total):
            return
        self._last = now
        elapsed = now - self._start
        if self.total:
            frac = min(1.0, self.done / self.total)
            filled = round(frac * self.width)
            bar = "#" * filled + "-" * (self.width - filled)
            text = f"{self.desc} [{bar}] {frac * 100:5.1f}% {self.done}/{self.total} {elapsed:6.1f}s"
        else:
            text = f"{self.desc} {self.done} done {elapsed:6.1f}s"
        if self.step:
            text += f"  {self.step}"
        self.stream.write("\r" + text[:120].ljust(120))
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Finish the bar (a final redraw and a newline, only if something was drawn)."""
        if self.enabled:
            self._draw(force=True)
            if self._drawn:
                self.stream.write("\n")
                self.stream.flush()
        self.enabled = False
